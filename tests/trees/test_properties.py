"""Property tests over random score arrays (hypothesis)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from arborparse import trees
from arborparse.trees.scores import tree_score

scores = st.integers(1, 12).flatmap(lambda n: arrays(
    np.float64, (n + 1, n + 1),
    elements=st.floats(-30, 30, allow_nan=False, allow_infinity=False)))
flags = st.booleans()


def is_tree(heads, single_root):
    n = len(heads) - 1
    for m in range(1, n + 1):
        seen, a = 0, m
        while a != 0 and seen <= n:
            a, seen = heads[a], seen + 1
        if a != 0:
            return False
    return not single_root or (heads == 0).sum() == 1


@settings(max_examples=60, deadline=None)
@given(scores, flags, flags)
def test_marginals_of_each_modifier_sum_to_one(S, projective, single_root):
    mu = trees.marginals(S, projective, single_root)
    np.testing.assert_allclose(mu[:, 1:].sum(axis=0), 1.0, atol=1e-9)
    assert (mu >= 0).all() and (mu <= 1).all()


@settings(max_examples=40, deadline=None)
@given(scores, flags, st.integers(0, 2**32 - 1))
def test_mst_beats_every_sampled_tree(S, single_root, seed):
    heads = trees.mst(S, single_root=single_root)
    assert is_tree(heads, single_root)
    best = tree_score(S, heads)
    for sampled in trees.sample(S, 5, False, single_root, rng=seed):
        assert is_tree(sampled, single_root)
        assert tree_score(S, sampled) <= best + 1e-9


@settings(max_examples=60, deadline=None)
@given(scores, flags)
def test_projective_never_beats_nonprojective(S, single_root):
    proj = tree_score(S, trees.eisner(S, single_root=single_root))
    nonproj = tree_score(S, trees.mst(S, single_root=single_root))
    assert proj <= nonproj + 1e-9
    assert trees.log_partition(S, True, single_root) <= \
        trees.log_partition(S, False, single_root) + 1e-9
    assert trees.log_partition(S, False, single_root) <= \
        trees.log_partition(S, False, False) + 1e-9


@settings(max_examples=40, deadline=None)
@given(scores, flags, flags)
def test_entropy_and_log_z_bounds(S, projective, single_root):
    H = trees.entropy(S, projective, single_root)
    assert H >= -1e-9
    best = tree_score(S, (trees.eisner if projective else trees.mst)(S, single_root=single_root))
    assert trees.log_partition(S, projective, single_root) >= best - 1e-9
