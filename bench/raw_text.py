"""From raw text: our tokenizer, tagger and parser against UDPipe 1's, scored with the
official CoNLL 2018 script.

    python bench/raw_text.py UD_Gothic-PROIEL [--results bench/raw_text.jsonl]

The test set's text is rebuilt from its tokens and ``SpaceAfter=No``, paragraphs (``#
newpar``, ``# newdoc``) separated by blank lines (a treebank without them is one
paragraph). Ours: the pipeline `bench/pipeline.py` kept in bench/runs/ with a tokenizer
trained on the same files (`arborparse train --components tokenizer`; the components
train independently, so this is the model `arborparse train` writes with its defaults),
then ``arborparse parse --input-format text``. UDPipe 1: its tokenizer trained here with
default options (``ufal.udpipe``; kept in bench/runs/ for reruns) in front of its tagger
and parser kept by `bench/udpipe_pipeline.py`. Both outputs are scored by
``conll18_ud_eval.py`` (F1) and by ``arborparse evaluate`` (which must agree). Appends one
JSON line to --results.
"""

import argparse
import datetime
import json
import tempfile
import time
from pathlib import Path

from common import COMMAND, MEASURES, ROOT, append_result, files, machine, official, run
from udpipe_reference import load
from ufal.udpipe import Model, Pipeline, ProcessingError, Trainer

import arborparse
from arborparse.io import read_conllu
from arborparse.pipeline import Pipeline as Ours
from arborparse.text.tokenizer import paragraphs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("treebank")
    ap.add_argument("--results", default=str(ROOT / "bench" / "raw_text.jsonl"))
    args = ap.parse_args()
    train, dev, test = files(args.treebank)
    runs = ROOT / "bench" / "runs"
    text = "\n\n".join(p for p, _ in paragraphs(read_conllu(test))) + "\n"
    out = {"treebank": args.treebank, "characters": len(text),
           "words": sum(len(s) for s in read_conllu(test))}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "test.txt").write_text(text, encoding="utf-8")
        # ours
        trained = run([*COMMAND, "train", "--train", train, "--dev", dev, "--model",
                       tmp / "tokenizer.npz", "--components", "tokenizer", "--quiet"])
        full = arborparse.load(runs / f"pipeline-mira-{args.treebank}.npz")
        full.tokenizer = arborparse.load(tmp / "tokenizer.npz").tokenizer
        model = runs / f"pipeline-text-{args.treebank}.npz"
        Ours(full.tagger, full.lemmatizer, full.parser, full.tokenizer).save(model)
        parsed = run([*COMMAND, "parse", "--model", model, "--input-format", "text",
                      tmp / "test.txt", "-o", tmp / "ours.conllu"])
        ours = official(test, tmp / "ours.conllu")
        check = json.loads(run([*COMMAND, "evaluate", test, tmp / "ours.conllu",
                                "--json"]).out)
        assert all(abs(check[m]["f1"] - ours[m]) < 0.01 for m in MEASURES), (check, ours)
        out["arborparse"] = {"tokenizer_train_cpu_seconds": trained.cpu,
                             "parse_cpu_seconds": parsed.cpu, **ours}
        # UDPipe 1: its tokenizer (trained once, kept in bench/runs/), its tagger and parser
        err = ProcessingError()
        kept = runs / f"udpipe-tokenizer-{args.treebank}.udpipe"
        tokenizer_cpu = None
        if not kept.exists():
            start = time.process_time()
            tokenizer_bytes = Trainer.train("morphodita_parsito", load(train), load(dev), "",
                                            "none", "none", err)
            tokenizer_cpu = time.process_time() - start
            if err.occurred():
                raise RuntimeError(err.message)
            kept.write_bytes(tokenizer_bytes)
        start = time.process_time()
        tokenizer = Model.load(str(kept))
        tagger_parser = Model.load(str(runs / f"udpipe-{args.treebank}.udpipe"))
        tokens = Pipeline(tokenizer, "tokenize", Pipeline.NONE, Pipeline.NONE,
                          "conllu").process(text, err)
        result = Pipeline(tagger_parser, "conllu", Pipeline.DEFAULT, Pipeline.DEFAULT,
                          "conllu").process(tokens, err)
        parse_cpu = time.process_time() - start
        if err.occurred():
            raise RuntimeError(err.message)
        (tmp / "udpipe.conllu").write_text(result, encoding="utf-8")
        out["UDPipe 1"] = {"tokenizer_train_cpu_seconds": tokenizer_cpu,
                           "parse_cpu_seconds": parse_cpu,
                           **official(test, tmp / "udpipe.conllu")}
    out.update(date=str(datetime.date.today()), machine=machine())
    append_result(args.results, out)


if __name__ == "__main__":
    main()
