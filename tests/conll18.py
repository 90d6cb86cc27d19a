"""The official CoNLL 2018 evaluation script (``conll18_ud_eval.py``, beside the UD data
in the shared folder), loaded as a module: the reference our evaluation must agree with."""

import importlib.util
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UD = Path(os.environ.get("ARBORPARSE_UD", ROOT.parent / "shared" / "data" / "ud"))


def official_scores(gold_path, system_path) -> dict:
    """{measure: the script's Score (precision, recall, f1, aligned_accuracy in 0..1)}."""
    script = UD.parent.parent / "tools" / "conll18_ud_eval.py"
    spec = importlib.util.spec_from_file_location("conll18_ud_eval", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.evaluate(module.load_conllu_file(str(gold_path)),
                           module.load_conllu_file(str(system_path)))
