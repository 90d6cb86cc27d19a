"""Property tests over random score arrays (hypothesis)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from arborparse import trees
from arborparse.trees.scores import allowed_best, allowed_scores, tree_score

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


@settings(deadline=None)  # the first example compiles allowed_best
@given(st.integers(1, 6), st.integers(1, 5), st.integers(-1, 4), st.integers(0, 10 ** 6))
def test_allowed_scores_leave_what_allowed_best_chooses_from(W, L, root, seed):
    """The best of each row of `allowed_scores` is `allowed_best`'s label, and every label
    left finite is one it may give: root with HEAD 0 and only there (where root is a label
    and not the only one)."""
    rng = np.random.default_rng(seed)
    root = min(root, L - 1)
    scores, heads = rng.normal(size=(W, L)), rng.integers(0, 3, size=W)
    allowed = allowed_scores(scores, heads, root)
    for row, head, given in zip(scores, heads, allowed):
        assert given.argmax() == allowed_best(row, head, root)
        if root >= 0 and L > 1:
            assert np.isfinite(given).sum() == (1 if head == 0 else L - 1)
        else:
            assert (given == row).all()
