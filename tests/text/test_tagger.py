import io

import pytest
from treebanks import separable, separable_text

from arborparse.eval import evaluate
from arborparse.io import read_conllu
from arborparse.io.conllu import FEATS, UPOS, XPOS
from arborparse.text.features import sentence_features, shape
from arborparse.text.tagger import Tagger


def with_features(copies=3):
    """The separable treebank with FEATS that follow from the word."""
    text = separable_text(copies)
    for word, tag, feats in (("dog", "NOUN", "Number=Sing"), ("dogs", "NOUN", "Number=Plur"),
                             ("runs", "VERB", "Tense=Pres"), ("saw", "VERB", "Tense=Past")):
        text = text.replace(f"\t{word}\t{word}\t{tag}\t{tag}\t_",
                            f"\t{word}\t{word}\t{tag}\t{tag}\t{feats}")
    sentences = read_conllu(io.StringIO(text))
    assert {f for s in sentences for f in s.feats} >= {"Number=Plur", "Tense=Past"}
    return sentences


def test_shapes():
    assert shape("McDonald's") == "XxXx'x" and shape("1984") == "d" and shape("e-mail") == "x-x"


def test_features_are_stable_and_one_row_per_word():
    X = sentence_features(["The", "dog"], {"the": "DET"})
    assert X.shape[0] == 2 and (X == sentence_features(["The", "dog"], {"the": "DET"})).all()


def test_a_separable_set_is_tagged_perfectly():
    data = with_features()
    tagger = Tagger(epochs=10, bits=16, progress=False).fit(data)
    bare = [s.with_columns({c: ["_"] * len(s) for c in (UPOS, XPOS, FEATS)}) for s in data]
    tagged = tagger.tag(bare)
    scores = evaluate(data, tagged)
    assert scores["UPOS"] == scores["XPOS"] == scores["UFeats"] == 100.0
    # only the tag columns change
    assert [s.forms for s in tagged] == [s.forms for s in data]
    assert all((t.heads == s.heads).all() for t, s in zip(tagged, data))


def test_dev_data_picks_an_epoch(capsys):
    data = separable()
    tagger = Tagger(epochs=3, bits=16).fit(data, data)
    assert [r["epoch"] for r in tagger.history_["upos"]] == [1, 2, 3]
    assert all("score" in r for r in tagger.history_["feats"])
    assert "upos epoch 1/3" in capsys.readouterr().err


def test_bad_arguments():
    from arborparse.errors import ArborparseError

    with pytest.raises(ArborparseError):
        Tagger(epochs=0)
    with pytest.raises(ArborparseError, match="no sentences"):
        Tagger(progress=False).fit([])
