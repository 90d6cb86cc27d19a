"""Every inference function against brute-force enumeration (all trees of n <= 6 words)."""

import itertools

import numpy as np
import pytest
from oracles import all_trees, brute, scores_of
from scipy.special import logsumexp

from arborparse import trees

CLASSES = list(itertools.product([False, True], [True, False]))  # (projective, single_root)
SIZES = [1, 2, 3, 4, 5, 6]


def random_scores(n, rng, scale=1.0, labels=None):
    shape = (n + 1, n + 1) if labels is None else (n + 1, n + 1, labels)
    return rng.normal(scale=scale, size=shape)


def decoder(projective):
    return trees.eisner if projective else trees.mst


@pytest.mark.parametrize("projective,single_root", CLASSES)
@pytest.mark.parametrize("n", SIZES)
def test_decoding_log_z_marginals_entropy(n, projective, single_root):
    rng = np.random.default_rng(100 * n + 10 * projective + single_root)
    for trial in range(8 if n < 6 else 3):
        S = random_scores(n, rng, scale=[1.0, 5.0, 0.1][trial % 3])
        all_t, scores, logZ, mu = brute(S, projective, single_root)
        heads = decoder(projective)(S, single_root=single_root)
        assert heads[0] == -1
        assert any((heads == t).all() for t in all_t), "decoded tree is not in the class"
        assert scores_of(S, heads[None])[0] == pytest.approx(scores.max(), abs=1e-9)
        assert trees.log_partition(S, projective, single_root) == pytest.approx(logZ, abs=1e-9)
        np.testing.assert_allclose(trees.marginals(S, projective, single_root), mu, atol=1e-9)
        p = np.exp(scores - logZ)
        H = -(p * np.log(p)).sum()
        assert trees.entropy(S, projective, single_root) == pytest.approx(H, abs=1e-8)


@pytest.mark.parametrize("projective,single_root", CLASSES)
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_kbest_lists(n, projective, single_root):
    rng = np.random.default_rng(n)
    S = np.round(random_scores(n, rng), 1)  # rounding creates ties
    all_t, scores, _, _ = brute(S, projective, single_root)
    k = min(12, len(all_t) + 2)
    got = trees.kbest(S, k, projective, single_root)
    assert len(got) == min(k, len(all_t))
    want = np.sort(scores)[::-1][:k]
    np.testing.assert_allclose([s for s, _ in got], want, atol=1e-9)
    seen = {tuple(h) for _, h in got}
    assert len(seen) == len(got), "k-best trees must be distinct"
    for s, h in got:
        assert s == pytest.approx(scores_of(S, h[None])[0])
        assert any((h == t).all() for t in all_t)


def test_kbest_keeps_its_waiting_subproblems_as_constraints_not_scores():
    """The subproblems waiting in the queue (n for each tree taken) hold their constraints,
    not their n x n scores: O(k n²) memory in all, not O(k n³) (numpy's allocations, as
    tracemalloc counts them: a few score matrices at once, not n of them)."""
    import tracemalloc

    n, k = 150, 3
    S = random_scores(n, np.random.default_rng(0))
    trees.kbest(S[:4, :4], 2)  # compile first
    tracemalloc.start()
    found = trees.kbest(S, k)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(found) == k and peak < 30 * S.nbytes  # the queue alone held 2n of them


@pytest.mark.parametrize("projective,single_root", CLASSES)
def test_mbr_maximizes_expected_correct_heads(projective, single_root):
    rng = np.random.default_rng(7)
    for n in (3, 5):
        S = random_scores(n, rng, scale=2.0)
        all_t, _, _, mu = brute(S, projective, single_root)
        gains = scores_of(mu, all_t)
        heads = trees.mbr(S, projective, single_root)
        assert scores_of(mu, heads[None])[0] == pytest.approx(gains.max(), abs=1e-9)
        given = trees.mbr(S, projective, single_root, marginals=mu)  # not computed again
        assert (given == heads).all()


@pytest.mark.parametrize("projective,single_root", CLASSES)
def test_labeled(projective, single_root):
    rng = np.random.default_rng(11)
    n, L = 4, 3
    S = random_scores(n, rng, labels=L)
    folded = logsumexp(S, axis=2)
    folded_max = S.max(axis=2)
    all_t, _, logZ, mu = brute(folded, projective, single_root)
    assert trees.log_partition(S, projective, single_root) == pytest.approx(logZ, abs=1e-9)
    # per-label marginals by enumerating every labeling of every tree
    want = np.zeros_like(S)
    m = np.arange(1, n + 1)
    for t in all_t:
        for labels in itertools.product(range(L), repeat=n):
            w = np.exp(S[t[1:], m, labels].sum() - logZ)
            want[t[1:], m, labels] += w
    got = trees.marginals(S, projective, single_root)
    assert got.shape == S.shape
    np.testing.assert_allclose(got, want, atol=1e-9)
    heads, labels = decoder(projective)(S, single_root=single_root)
    best = scores_of(folded_max, all_t).max()
    assert S[heads[1:], m, labels[1:]].sum() == pytest.approx(best)
    assert labels[0] == -1
    mheads, mlabels = trees.mbr(S, projective, single_root)
    assert (mlabels[1:] == S[mheads[1:], m].argmax(axis=1)).all()


@pytest.mark.parametrize("projective,single_root", CLASSES)
def test_sampling_frequencies(projective, single_root):
    from scipy.stats import chisquare

    rng = np.random.default_rng(3)
    n = 3
    S = random_scores(n, rng)
    all_t, scores, logZ, _ = brute(S, projective, single_root)
    draws = trees.sample(S, 3000, projective, single_root, rng=np.random.default_rng(5))
    assert draws.shape == (3000, n + 1) and (draws[:, 0] == -1).all()
    index = {tuple(t): i for i, t in enumerate(all_t)}
    counts = np.zeros(len(all_t))
    for d in draws:
        counts[index[tuple(d)]] += 1  # KeyError if a sample is not a tree of the class
    expected = np.exp(scores - logZ) * len(draws)
    assert chisquare(counts, expected).pvalue > 1e-3


@pytest.mark.parametrize("projective,single_root", CLASSES)
def test_huge_scores_stay_exact_and_finite(projective, single_root):
    rng = np.random.default_rng(17)
    for n in (2, 4, 6):
        for _ in range(3):
            S = random_scores(n, rng, scale=1e4)
            all_t, scores, logZ, mu = brute(S, projective, single_root)
            got = trees.log_partition(S, projective, single_root)
            assert np.isfinite(got)
            assert got == pytest.approx(logZ, rel=1e-12, abs=1e-8)
            np.testing.assert_allclose(trees.marginals(S, projective, single_root), mu,
                                       atol=1e-8)
            assert np.isfinite(trees.entropy(S, projective, single_root))


def test_two_cycle_of_huge_scores():
    # The best arcs form a cycle and the only trees use arcs e^{1e4} smaller: a column
    # shift alone underflows; log Z is 1e4 + log 2 exactly.
    S = np.zeros((3, 3))
    S[1, 2] = S[2, 1] = 1e4
    assert trees.log_partition(S) == pytest.approx(1e4 + np.log(2), rel=1e-15)
    mu = trees.marginals(S)
    np.testing.assert_allclose(mu[0, 1:], [0.5, 0.5])
    np.testing.assert_allclose(mu[1, 2], 0.5)


@pytest.mark.parametrize("projective", [False, True])
def test_forbidden_arcs(projective):
    rng = np.random.default_rng(2)
    S = random_scores(4, rng)
    S[0, 1:3] = -np.inf
    S[3, 1] = -np.inf
    all_t, scores, logZ, mu = brute(S, projective, True)
    finite = np.isfinite(scores)
    assert trees.log_partition(S, projective) == pytest.approx(logsumexp(scores[finite]))
    np.testing.assert_allclose(trees.marginals(S, projective), mu, atol=1e-10)
    heads = decoder(projective)(S)
    assert np.isfinite(scores_of(S, heads[None])[0])
    S[:, 2] = -np.inf
    assert trees.log_partition(S, projective) == -np.inf
    with pytest.raises(ValueError, match="no tree"):
        decoder(projective)(S)


@pytest.mark.parametrize("single_root", [True, False])
def test_eisner_with_forbidden_arcs_anywhere_finds_the_best_allowed_tree(single_root):
    """Eisner's chart, and its log-space inside and outside passes (those of sentences of
    hundreds of words), try only the split points of allowed arcs (a reach makes them
    O(n² R)): with arcs forbidden at random, in bands and in gaps, the tree is still the
    best allowed one (where none is allowed it says so), log Z and the marginals those of
    the allowed trees."""
    from arborparse.trees import projective

    rng = np.random.default_rng(7)
    for trial in range(300):
        n = 1 + trial % 6
        S = random_scores(n, rng)
        S[rng.random(S.shape) < [0.2, 0.5, 0.7][trial % 3]] = -np.inf
        if trial % 4 == 0:  # a reach: arcs longer than 1 or 2 words to one side forbidden
            h, m = np.indices(S.shape)
            S[(m - h > 1 + trial % 2) | (h - m > 2 - trial % 2)] = -np.inf
        _, scores, _, _ = brute(S, True, single_root)
        if not np.isfinite(scores.max()):
            with pytest.raises(ValueError, match="no tree"):
                trees.eisner(S, single_root=single_root)
            continue
        heads = trees.eisner(S, single_root=single_root)
        assert scores_of(S, heads[None])[0] == pytest.approx(scores.max(), abs=1e-9)
        finite = np.isfinite(scores)
        _, _, _, mu = brute(S, True, single_root)
        for z, got in (projective._marginals_log(S, single_root),  # and in probability space
                       projective._marginals(S, single_root)):
            assert z == pytest.approx(logsumexp(scores[finite]), abs=1e-9)
            np.testing.assert_allclose(got, mu, atol=1e-9)


@pytest.mark.parametrize("projective,single_root", CLASSES)
def test_long_sentences(projective, single_root):
    rng = np.random.default_rng(1)
    n = 150
    for scale in (1.0, 1e4):
        S = random_scores(n, rng, scale=scale)
        heads = decoder(projective)(S, single_root=single_root)
        assert sorted(np.flatnonzero(heads == 0).tolist()) and (heads[1:] >= 0).all()
        if single_root:
            assert (heads == 0).sum() == 1
        logZ = trees.log_partition(S, projective, single_root)
        best = scores_of(S, heads[None])[0]
        assert np.isfinite(logZ) and logZ >= best - 1e-6
        mu = trees.marginals(S, projective, single_root)
        assert np.isfinite(mu).all()
        np.testing.assert_allclose(mu[:, 1:].sum(axis=0), 1.0, atol=1e-6)


def test_bad_input():
    with pytest.raises(ValueError, match="shape"):
        trees.mst(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="n >= 1"):
        trees.log_partition(np.zeros((1, 1)))
    with pytest.raises(ValueError, match="NaN"):
        trees.marginals(np.full((3, 3), np.nan))
    with pytest.raises(ValueError, match="k must be"):
        trees.kbest(np.zeros((3, 3)), 0)


def test_all_trees_reachable_by_some_scores():
    # every single-root tree is the unique MST of scores that favour its arcs
    for t in all_trees(4, False, True):
        S = np.zeros((5, 5))
        S[t[1:], np.arange(1, 5)] = 1.0
        assert (trees.mst(S) == t).all()


@pytest.mark.parametrize("single_root", [True, False])
def test_lapack_route_against_brute_force_and_elimination(single_root, monkeypatch):
    from arborparse.trees import matrix_tree

    rng = np.random.default_rng(23)
    monkeypatch.setattr(matrix_tree, "SMALL", 0)
    for n in (1, 3, 6):
        S = random_scores(n, rng, scale=2.0)
        _, _, logZ, mu = brute(S, False, single_root)
        assert matrix_tree._lu_route(S, single_root, True) is not None  # the LU route is taken
        assert trees.log_partition(S, False, single_root) == pytest.approx(logZ, abs=1e-10)
        np.testing.assert_allclose(trees.marginals(S, False, single_root), mu, atol=1e-10)
    S = random_scores(60, rng, scale=3.0)
    W = matrix_tree.clean(S)
    z, mu = matrix_tree.eliminate(W, single_root, True)
    assert trees.log_partition(S, False, single_root) == pytest.approx(z, abs=1e-9)
    np.testing.assert_allclose(trees.marginals(S, False, single_root), mu, atol=1e-9)
    # huge scores make the factorization inaccurate: the exact elimination takes over
    assert matrix_tree._lu_route(random_scores(60, rng, scale=1e4), single_root, True) is None


def test_lapack_runs_on_one_thread_and_gives_the_threads_back(monkeypatch):
    """LAPACK's calls on a sentence's matrix run with every BLAS library on one thread
    (more only wait for each other on matrices this small); the caller's settings are
    back afterwards."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from arborparse.trees import matrix_tree

    seen = []
    factored = matrix_tree._lu_factored

    def spy(*args):
        seen.append([lib["num_threads"] for lib in threadpool_info()
                     if lib["user_api"] == "blas"])
        return factored(*args)

    monkeypatch.setattr(matrix_tree, "_lu_factored", spy)
    S = random_scores(40, np.random.default_rng(3), scale=2.0)
    with threadpool_limits(2, user_api="blas"):
        assert matrix_tree._lu_route(S, False, True) is not None
        after = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    assert seen and seen[0] and set(seen[0]) == {1}
    assert set(after) == {2}


def test_exact_route_memory_is_quadratic():
    """The log-space elimination, the last exact route, keeps O(n²) memory: on 400
    words a stored history would take (n + 1) n² doubles, 512 MB."""
    import subprocess
    import sys

    code = """
import resource
import numpy as np
from arborparse.trees import matrix_tree
rng = np.random.default_rng(0)
matrix_tree.eliminate(matrix_tree.clean(rng.normal(size=(11, 11))), True, True)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
S = matrix_tree.clean(1e3 * rng.normal(size=(401, 401)))
logZ, mu = matrix_tree.eliminate(S, True, True)
assert np.isfinite(logZ) and abs(mu[:, 1:].sum(axis=0) - 1).max() < 1e-8
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert float(out.stdout) < 64, f"{out.stdout} MB"


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("panel", [2, 3, 64])
def test_scaled_elimination_against_brute_force_and_log_space(single_root, panel, monkeypatch):
    """The blocked elimination on scaled weights: panels of 2 and 3 words exercise the
    matrix-product updates and their reverse on small sentences, 64 a single panel."""
    from arborparse.trees import matrix_tree

    monkeypatch.setattr(matrix_tree, "PANEL", panel)
    rng = np.random.default_rng(29 + panel)
    for n in range(1, 7):
        for scale, forbidden in itertools.product((0.1, 1.0, 5.0, 30.0), (0.0, 0.1)):
            S = random_scores(n, rng, scale=scale)
            S[rng.random(S.shape) < forbidden] = -np.inf
            _, _, logZ, mu = brute(S, False, single_root)
            found = matrix_tree.eliminate_scaled(matrix_tree.clean(S), single_root, True)
            if forbidden and found is None:  # a word left with no arc from a later one
                continue
            assert found[0] == pytest.approx(logZ, rel=1e-12, abs=1e-10)
            np.testing.assert_allclose(found[1], mu, atol=1e-10)
    for scale in (1.0, 30.0, 100.0):  # against the log-space elimination, 150 words
        W = matrix_tree.clean(random_scores(150, rng, scale=scale))
        logZ, mu = matrix_tree.eliminate(W, single_root, True)
        found = matrix_tree.eliminate_scaled(W, single_root, True)
        assert found[0] == pytest.approx(logZ, rel=1e-13)
        np.testing.assert_allclose(found[1], mu, atol=1e-10)


def test_scaled_elimination_gives_way_where_a_pivot_underflows():
    # the best arcs form a cycle e^{1e4} above every tree: no scaled pivot survives
    from arborparse.trees import matrix_tree

    S = np.zeros((3, 3))
    S[1, 2] = S[2, 1] = 1e4
    assert matrix_tree.eliminate_scaled(matrix_tree.clean(S), True, True) is None
    assert trees.log_partition(S) == pytest.approx(1e4 + np.log(2), rel=1e-15)


@pytest.mark.parametrize("single_root", [True, False])
def test_projective_probability_space_against_log_space(single_root):
    from arborparse.trees import projective

    rng = np.random.default_rng(29)
    for n, scale in ((1, 1.0), (7, 3.0), (40, 1.0), (40, 10.0), (120, 3.0)):
        S = random_scores(n, rng, scale=scale)
        far = np.abs(np.subtract.outer(np.arange(n + 1), np.arange(n + 1))) > 1
        S[far & (rng.random(S.shape) < 0.1)] = -np.inf  # forbidden: exact zeros; the chain stays
        W = projective._shifted_weights(S)[0]
        assert projective._trusted(projective._inside_linear(W, single_root)[-1], n + 1)
        z, mu = projective._marginals_log(S, single_root)
        assert trees.log_partition(S, True, single_root) == pytest.approx(z, rel=1e-13)
        got_z, got_mu = projective._marginals(S, single_root)
        assert got_z == pytest.approx(z, rel=1e-13)
        np.testing.assert_allclose(got_mu, mu, rtol=1e-10, atol=1e-14)
    # scores that differ by thousands underflow, hundreds of equal words overflow, and past
    # about 700 words nothing can be trusted (`_may_trust`): log space
    assert projective._may_trust(699) and not projective._may_trust(700)
    for S in (random_scores(20, rng, scale=1e4), np.zeros((401, 401)), np.zeros((700, 700))):
        W = projective._shifted_weights(S)[0]
        assert not projective._trusted(projective._inside_linear(W, single_root)[-1], len(S))
        assert trees.log_partition(S, True, single_root) == projective._inside(S, single_root)[-1]
        np.testing.assert_array_equal(projective._marginals(S, single_root)[1],
                                      projective._marginals_log(S, single_root)[1])
