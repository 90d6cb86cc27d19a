import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
UD = Path(os.environ.get("ARBORPARSE_UD", ROOT.parent / "shared" / "data" / "ud"))


@pytest.fixture(scope="session")
def ud():
    """The Universal Dependencies folder (ARBORPARSE_UD, default ../shared/data/ud)."""
    if not UD.is_dir():
        pytest.fail(f"UD data not found at {UD}; set ARBORPARSE_UD to your UD folder")
    return UD


@pytest.fixture(scope="session")
def ud_files(ud):
    files = sorted(ud.glob("*/*.conllu"))
    assert files, f"no .conllu files under {ud}"
    return files


@pytest.fixture(scope="session")
def english_pipeline(ud, tmp_path_factory):
    """A small English model file: tokenizer, tagger and perceptron parser trained on 300
    sentences of EWT dev."""
    from arborparse.io import read_conllu
    from arborparse.linear.online import OnlineTrainer
    from arborparse.pipeline import Pipeline
    from arborparse.text.tagger import Tagger
    from arborparse.text.tokenizer import Tokenizer

    train = read_conllu(ud / "UD_English-EWT" / "en_ewt-ud-dev.conllu")[:300]
    tagger = Tagger(epochs=1, bits=18, progress=False).fit(train)
    parser = OnlineTrainer("perceptron", epochs=1, hash_bits=18, progress=False).fit(train)
    pipeline = Pipeline(tagger, None, parser.parser_,
                        tokenizer=Tokenizer(epochs=2, bits=16, progress=False).fit(train))
    path = tmp_path_factory.mktemp("model") / "en.npz"
    pipeline.save(path)
    return path


from hypothesis import settings  # noqa: E402

# CI runs the same examples every time; locally hypothesis explores new ones.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
