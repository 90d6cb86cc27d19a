import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from arborparse.errors import ArborparseError
from arborparse.io import read_conllu
from arborparse.isbn.transitions import LA, RA, RED, SHIFT, Config, oracle, replay
from arborparse.transforms import lift

TREEBANKS = ["UD_English-EWT", "UD_Turkish-IMST", "UD_Gothic-PROIEL"]


@pytest.mark.parametrize("treebank", TREEBANKS)
def test_oracle_replays_every_lifted_training_tree(ud, treebank):
    for s in read_conllu(next((ud / treebank).glob("*-ud-train.conllu"))):
        s = lift(s, "head")
        derivation = oracle(s.heads, s.deprels)
        assert sum(a == SHIFT for a, _ in derivation) == len(s)
        heads, labels = replay(len(s), derivation, "root")
        assert (heads == s.heads).all() and labels == s.deprels


def test_masks():
    c = Config(3)
    assert c.allowed().tolist() == [False, False, False, True]  # empty stack: only shift
    c.apply(SHIFT)
    assert c.allowed().tolist() == [True, True, True, True]
    c.apply(RA, "obj")
    assert c.allowed().tolist() == [False, False, False, True]  # right-arc forces a shift
    with pytest.raises(ArborparseError, match="RED is not allowed"):
        c.apply(RED)
    c.apply(SHIFT)
    assert c.allowed().tolist() == [False, True, True, True]  # the top has a head: no LA
    c.apply(RED)
    c.apply(LA, "nsubj")  # 3 -> 1
    c.apply(SHIFT)
    assert c.done and not c.allowed().any()
    heads, labels = c.tree("root")
    assert heads.tolist() == [-1, 3, 1, 0] and labels == ["nsubj", "obj", "root"]


def test_non_projective_trees_have_no_derivation():
    with pytest.raises(ArborparseError, match="not projective"):
        oracle(np.array([-1, 3, 4, 0, 3]), ["a", "b", "root", "d"])


def test_a_derivation_must_reach_the_end():
    with pytest.raises(ArborparseError, match="ends before"):
        replay(2, [(SHIFT, None)], "root")


@given(st.integers(1, 9), st.lists(st.integers(0, 3), max_size=60))
def test_any_allowed_derivation_builds_a_tree_the_oracle_replays(n, choices):
    """Taking allowed decisions at random always ends in a tree (words reduced without a
    head attach to the root, so arcs may cross those), and the oracle rebuilds it."""
    c = Config(n)
    choices = iter(choices)
    while not c.done:
        allowed = np.flatnonzero(c.allowed())
        c.apply(int(allowed[next(choices, SHIFT) % len(allowed)]), "x")
    heads, labels = c.tree("root")
    for m in range(1, n + 1):  # a tree: every word reaches the root
        seen, a = set(), m
        while a > 0:
            assert a not in seen
            seen.add(a)
            a = heads[a]
    back, back_labels = replay(n, oracle(heads, labels), "root")
    assert (back == heads).all() and back_labels == labels
