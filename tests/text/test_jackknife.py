import pytest
from treebanks import separable

from arborparse.errors import ArborparseError
from arborparse.text.jackknife import folds_of, jackknife


def test_folds_cover_every_sentence_once():
    folds = folds_of(23, 5)
    assert sorted(i for f in folds for i in f) == list(range(23))
    assert max(map(len, folds)) - min(map(len, folds)) <= 1


def test_no_fold_is_tagged_by_a_model_trained_on_it():
    train = separable(4)
    seen = []

    def annotate(others, fold):
        trained_on = {id(s) for s in others}
        assert not trained_on & {id(s) for s in fold}
        assert len(others) + len(fold) == len(train)
        seen.extend(id(s) for s in fold)
        return [s.with_tree(s.heads, ["x"] * len(s)) for s in fold]

    out = jackknife(train, 5, annotate, progress=False)
    assert sorted(seen) == sorted(id(s) for s in train)  # every sentence tagged once
    assert [s.forms for s in out] == [s.forms for s in train]  # in order
    assert all(s.deprels == ["x"] * len(s) for s in out)
    with pytest.raises(ArborparseError, match="at least 2 folds"):
        jackknife(train, 1, annotate)
    assert len(jackknife(train[:3], 10, lambda others, fold: fold, progress=False)) == 3
