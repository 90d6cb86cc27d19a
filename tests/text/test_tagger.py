import io

import pytest
from treebanks import separable, separable_text

from arborparse.eval import evaluate
from arborparse.io import read_conllu
from arborparse.io.conllu import FEATS, UPOS, XPOS
from arborparse.text.features import TEMPLATES, shape, word_features
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
    sentences = [["The", "dog"], ["A", "dog", "barks", "."]]
    X = word_features(sentences, {"the": "DET"})
    assert X.shape == (6, len(TEMPLATES))
    assert (X == word_features(sentences, {"the": "DET"})).all()
    # a sentence's features do not depend on the sentences around it
    assert (word_features(sentences[1:], {"the": "DET"}) == X[2:]).all()
    # the same word in the same context, the same row; another context, other features
    dog_first, dog_second = X[1], X[3]
    assert (dog_first[:2] == dog_second[:2]).all() and (dog_first != dog_second).any()
    assert word_features([], {}).shape == (0, len(TEMPLATES))


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
    assert all("accuracy" in r for r in tagger.history_["feats"])
    assert "upos epoch 1/3" in capsys.readouterr().err
    # the kept epoch of each tagger is its first best; jackknifing trains for the latest
    kept = [max(tagger.history_[c], key=lambda r: (r["accuracy"], -r["epoch"]))["epoch"]
            for c in ("upos", "xpos", "feats")]
    assert tagger.best_epoch_ == max(kept)


def test_bad_arguments():
    from arborparse.errors import ArborparseError

    with pytest.raises(ArborparseError):
        Tagger(epochs=0)
    with pytest.raises(ArborparseError, match="no sentences"):
        Tagger(progress=False).fit([])


def test_feats_bundles_share_the_weights_of_their_features():
    import numpy as np

    from arborparse.text.classifier import DYNAMIC, _features, _index
    from arborparse.text.tagger import features_of

    assert features_of("Case=Dat|Number=Sing") == ["Case=Dat", "Number=Sing"]
    assert features_of("_") == []
    tagger = Tagger(epochs=4, bits=14, progress=False).fit(with_features())
    feats = tagger.feats
    # Number=Plur, Number=Sing, Tense=Past, Tense=Pres: one feature each; _: none
    assert feats.classes[-1] == "_" and list(feats.pptr) == [0, 1, 2, 3, 4, 4]
    # every score is the bundle's own weights plus its features', as predict and margins see
    data = with_features(1)
    X, bounds = tagger._static(data)
    upos = tagger.upos.predict(X, bounds, np.full(len(X), -1), np.zeros(len(X) + 1, int),
                               np.empty(0, int))
    predicted = feats.predict(X, bounds, upos, np.zeros(len(X) + 1, int), np.empty(0, int))
    W, mask, classes = feats.weights, np.uint64(feats.weights.shape[0] - 1), len(feats.classes)
    row = np.empty(X.shape[1] + DYNAMIC, dtype=np.uint64)

    def score(c):
        parts = [classes + p for p in feats.pids[feats.pptr[c]:feats.pptr[c + 1]]]
        return sum(float(W[_index(f, k, mask)]) for f in row for k in [c, *parts])

    margins = feats.margins(X, bounds, upos, np.zeros(len(X) + 1, int), np.empty(0, int), 0, 1)
    for s in range(len(bounds) - 1):
        for i in range(bounds[s], bounds[s + 1]):
            _features(X, i, bounds[s], predicted, upos, feats.pairs, row)
            scores = [score(c) for c in range(classes)]
            assert predicted[i] == int(np.argmax(scores))
            assert margins[i] == pytest.approx(scores[0] - scores[1], abs=1e-4)
