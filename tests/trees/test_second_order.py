"""Second-order inference (siblings; siblings and grandparents) against brute force."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import all_trees, brute_second_order, second_order_parts

from arborparse.trees import second_order as so
from arborparse.trees.structure import find_cycle

MODELS = ["siblings", "grandparents"]


def is_tree(heads, single_root):
    roots = (heads[1:] == 0).sum()
    return find_cycle(heads) is None and (roots == 1 if single_root else roots >= 1)


def random_scores(n, rng, grand, scale=1.0):
    N = n + 1
    S = rng.normal(scale=scale, size=(N, N))
    sib = rng.normal(scale=scale, size=(N, N, N))
    G = rng.normal(scale=scale, size=(N, N, N)) if grand else None
    return S, sib, G


def check_against_brute(S, sib, G, single_root, modes=(so.PROB, so.LOG), atol=1e-9):
    trees, scores, logZ, mu, mu_sib, mu_grand = brute_second_order(S, sib, G, True, single_root)
    heads = so.eisner(S, sib, G, single_root)
    assert any((heads == t).all() for t in trees), "decoded tree is not projective"
    assert so.tree_score(S, sib, G, heads) == pytest.approx(scores.max(), abs=atol)
    grand = None if G is None else so._root_grand(G)
    for mode in modes:
        got = so._inside_outside(S, sib, grand, single_root, True, modes=(mode,))
        assert got is not None, f"semiring {mode} should be exact here"
        got_logZ, parts = got
        assert got_logZ == pytest.approx(logZ, abs=atol)
        np.testing.assert_allclose(parts[0], mu, atol=atol)
        np.testing.assert_allclose(parts[1], mu_sib, atol=atol)
        if G is not None:
            np.testing.assert_allclose(parts[2], mu_grand, atol=atol)
    assert so.log_partition(S, sib, G, single_root) == pytest.approx(logZ, abs=atol)
    public = so.log_partition_and_marginals(S, sib, G, single_root)
    assert public[0] == pytest.approx(logZ, abs=atol)
    assert (public[3] is None) == (G is None)


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_max_log_z_and_every_marginal(n, model, single_root):
    rng = np.random.default_rng(10 * n + single_root + 100 * (model == "grandparents"))
    for scale in (1.0, 4.0, 0.1):
        check_against_brute(*random_scores(n, rng, model == "grandparents", scale), single_root)


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("model", MODELS)
def test_seven_words(model, single_root):
    rng = np.random.default_rng(7 + single_root)
    check_against_brute(*random_scores(7, rng, model == "grandparents"), single_root)


@pytest.mark.parametrize("model", MODELS)
def test_large_scores_are_exact_in_log_space(model):
    """Scores of magnitude 1e3–1e4: probabilities underflow, the log-space route is taken and
    stays exact."""
    rng = np.random.default_rng(3)
    for scale in (1e3, 1e4):
        S, sib, G = random_scores(5, rng, model == "grandparents", scale)
        check_against_brute(S, sib, G, True, modes=(so.LOG,), atol=1e-9 * scale)
        grand = None if G is None else so._root_grand(G)
        assert so._inside_outside(S, sib, grand, True, False, modes=(so.PROB,)) is None


@pytest.mark.parametrize("model", MODELS)
def test_probabilities_agree_with_log_space_on_long_sentences(model):
    """Beyond brute force: the two semirings, which share no arithmetic, agree at n = 30."""
    rng = np.random.default_rng(8)
    S, sib, G = random_scores(30, rng, model == "grandparents")
    grand = None if G is None else so._root_grand(G)
    logZ, parts = so._inside_outside(S, sib, grand, True, True, modes=(so.PROB,))
    logZ_log, parts_log = so._inside_outside(S, sib, grand, True, True, modes=(so.LOG,))
    assert logZ == pytest.approx(logZ_log, rel=1e-13)
    for p, q in zip(parts, parts_log):
        np.testing.assert_allclose(p, q, atol=1e-12)


def test_exponentials_match_numpy_to_one_unit_in_the_last_place():
    rng = np.random.default_rng(9)
    x = np.concatenate([-np.abs(rng.normal(scale=3.0, size=100_000)),
                        -rng.uniform(0, 760, 100_000),
                        [0.0, -0.0, -np.inf, -1e-300, -5e-324, -708.4, -745.1, -745.2, -800.0]])
    c = 2.5  # the kernel takes x + c and its shift c
    got = x + c
    so._exp_shifted(got, x.size, c, np.empty(x.size))
    want = np.exp((x + c) - c)
    normal = want >= np.finfo(float).tiny
    assert (np.abs(got - want)[normal] <= np.spacing(want[normal])).all()
    assert (np.abs(got - want)[~normal] <= 5e-324).all()  # subnormal results, and 0
    assert got[-9] == 1.0 and got[-7] == 0.0


@pytest.mark.parametrize("model", MODELS)
def test_forbidden_arcs(model):
    rng = np.random.default_rng(4)
    S, sib, G = random_scores(5, rng, model == "grandparents")
    S[0, 2:] = -np.inf  # only word 1 may attach to the root
    S[3, 4] = -np.inf
    check_against_brute(S, sib, G, True)
    heads = so.eisner(S, sib, G)
    assert heads[1] == 0 and heads[4] != 3
    S[:, 2] = -np.inf  # word 2 can have no head
    for f in (so.eisner, so.log_partition_and_marginals):
        with pytest.raises(ValueError, match="no tree has a finite score"):
            f(S, sib, G)
    assert so.log_partition(S, sib, G) == -np.inf


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("model", MODELS)
def test_many_forbidden_arcs_whatever_their_parts_score(model, single_root):
    """A third of the arcs forbidden, as the parser's reach leaves them out (the inside pass
    skips the items that enter a tree only through one), the parts through them of any
    score: the best tree, log Z and every marginal are brute force's."""
    rng = np.random.default_rng(11 + single_root + 2 * (model == "grandparents"))
    for _ in range(10):
        n = int(rng.integers(2, 7))
        S, sib, G = random_scores(n, rng, model == "grandparents")
        S[rng.random(S.shape) < 0.35] = -np.inf
        S[np.arange(n), np.arange(1, n + 1)] = rng.normal(size=n)  # a chain is left
        check_against_brute(S, sib, G, single_root)
        out = np.isneginf(S)  # sib[h, m, s] goes through h -> m, and h -> s but for s = h
        through = out[:, :, None] | (out[:, None, :] & ~np.eye(n + 1, dtype=bool)[:, None, :])
        sib2 = np.where(through, rng.normal(scale=100.0, size=sib.shape), sib)
        G2 = None if G is None else np.where(out[:, :, None] | out[None, :, :], 1e3, G)
        assert list(so.eisner(S, sib2, G2, single_root)) == list(so.eisner(S, sib, G,
                                                                             single_root))
        assert so.log_partition(S, sib2, G2, single_root) == \
            pytest.approx(so.log_partition(S, sib, G, single_root), abs=1e-9)


@pytest.mark.parametrize("model", MODELS)
def test_marginals_are_the_gradient_of_log_z(model):
    rng = np.random.default_rng(5)
    S, sib, G = random_scores(4, rng, model == "grandparents")
    _, mu, mu_sib, mu_grand = so.log_partition_and_marginals(S, sib, G)
    eps = 1e-6
    for X, grad in ((S, mu), (sib, mu_sib), (G, mu_grand)):
        if X is None:
            continue
        for index in [(0, 2), (3, 1), (2, 4)] if X.ndim == 2 else [(0, 2, 1), (3, 1, 2),
                                                                   (2, 4, 3), (1, 3, 2)]:
            if X.ndim == 3 and X is sib:
                index = (index[0], index[1], index[0])  # a first-child part
            old = X[index]
            X[index] = old + eps
            up = so.log_partition(S, sib, G)
            X[index] = old - eps
            down = so.log_partition(S, sib, G)
            X[index] = old
            assert grad[index] == pytest.approx((up - down) / (2 * eps), abs=1e-7)


def test_parts_and_tree_score_match_the_oracle():
    rng = np.random.default_rng(6)
    trees = all_trees(5, False, False)
    psib, pgrand = second_order_parts(trees)
    S, sib, G = random_scores(5, rng, True)
    for t in range(0, len(trees), 97):
        sib_parts, grand_parts = so.parts(trees[t])
        assert sorted(map(tuple, sib_parts)) == sorted(map(tuple, np.argwhere(psib[t])))
        assert sorted(map(tuple, grand_parts)) == sorted(map(tuple, np.argwhere(pgrand[t])))
        want = S[trees[t][1:], np.arange(1, 6)].sum() + sib[psib[t]].sum() + G[pgrand[t]].sum()
        assert so.tree_score(S, sib, G, trees[t]) == pytest.approx(want)


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("model", MODELS)
def test_approximate_is_a_local_optimum_at_least_as_good_as_projective(model, single_root):
    rng = np.random.default_rng(8 + single_root)
    for n in (4, 6, 9):
        S, sib, G = random_scores(n, rng, model == "grandparents", 2.0)
        heads = so.approximate(S, sib, G, single_root)
        assert is_tree(heads, single_root)
        best = so.tree_score(S, sib, G, heads)
        assert best >= so.tree_score(S, sib, G, so.eisner(S, sib, G, single_root)) - 1e-9
        for m in range(1, n + 1):  # no single change of head that keeps a tree does better
            for h in range(n + 1):
                other = heads.copy()
                other[m] = h
                if h != m and is_tree(other, single_root):
                    assert so.tree_score(S, sib, G, other) <= best + 1e-9


def climb_scoring_every_change_whole(S, sib, G, heads, single_root):
    """The hill climb as McDonald & Pereira (2006) state it: each change of one word's head
    that keeps a tree scored as a whole tree, the best (the first on ties) taken while it
    raises the score."""
    heads, n = heads.copy(), len(heads) - 1
    current = so.tree_score(S, sib, G, heads)
    while True:
        best, move = current, None
        for m in range(1, n + 1):
            for h in range(n + 1):
                other = heads.copy()
                other[m] = h
                if h == heads[m] or h == m or S[h, m] == -np.inf or find_cycle(other) \
                        is not None or (single_root and 0 in (h, heads[m])):
                    continue
                value = so.tree_score(S, sib, G, other)
                if value > best:
                    best, move = value, (m, h)
        if move is None:
            return heads
        heads[move[0]], current = move[1], best


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("model", MODELS)
def test_approximate_climbs_as_scoring_every_change_whole(model, single_root):
    """The climb scores each change from the parts it touches: the same trees as scoring
    every change whole, ties (small integer scores), forbidden arcs and parts, and large
    scores that cancel included."""
    rng = np.random.default_rng(3 + single_root)
    for trial in range(60):
        n = int(rng.integers(2, 10))
        S, sib, G = random_scores(n, rng, model == "grandparents", 3.0)
        if trial % 2:  # small integers: many changes tie
            S, sib = np.round(S), np.round(sib)
            G = None if G is None else np.round(G)
        S[rng.random(S.shape) < 0.1] = -np.inf
        sib[rng.random(sib.shape) < 0.02] = -np.inf
        np.fill_diagonal(S, -np.inf)
        try:
            start = so.eisner(S, sib, G, single_root)
        except ValueError:  # no tree with a finite score
            continue
        want = climb_scoring_every_change_whole(S, sib, G, start, single_root)
        assert list(so.approximate(S, sib, G, single_root)) == list(want)


def test_approximate_climbs_as_scoring_every_change_whole_when_large_scores_cancel():
    """Arc scores of 3.3e9 and sibling scores of -3.3e9 (each word has one of each, so a
    tree's score stays small), in steps of 0.1: the whole scores round at 1e-6, and the
    climb still takes the changes that scoring every change whole takes."""
    rng = np.random.default_rng(1)
    for _ in range(150):
        n = int(rng.integers(3, 13))
        grand, single_root = bool(rng.integers(2)), bool(rng.integers(2))
        S = np.round(rng.normal(scale=2, size=(n + 1, n + 1))) / 10 + 1e10 / 3
        sib = np.round(rng.normal(scale=2, size=(n + 1,) * 3)) / 10 - 1e10 / 3
        G = np.round(rng.normal(scale=2, size=(n + 1,) * 3)) / 10 if grand else None
        np.fill_diagonal(S, -np.inf)
        start = so.eisner(S, sib, G, single_root)
        want = climb_scoring_every_change_whole(S, sib, G, start, single_root)
        assert list(so.approximate(S, sib, G, single_root)) == list(want)


def test_approximate_finds_non_projective_trees():
    """Arc scores that want crossing arcs: the projective best is not the answer."""
    S = np.full((5, 5), -5.0)
    for h, m in [(0, 2), (2, 4), (4, 1), (2, 3)]:  # 4 -> 1 crosses 0 -> 2
        S[h, m] = 5.0
    sib = np.zeros((5, 5, 5))
    assert list(so.approximate(S, sib)) == [-1, 4, 0, 2, 2]
    assert not (so.eisner(S, sib) == [-1, 4, 0, 2, 2]).all()


def test_bad_shapes_and_values_are_refused():
    S = np.zeros((4, 4))
    with pytest.raises(ValueError, match=r"sib scores must have shape \(4, 4, 4\)"):
        so.eisner(S, np.zeros((4, 4)))
    with pytest.raises(ValueError, match="grand scores must not contain NaN"):
        so.eisner(S, np.zeros((4, 4, 4)), np.full((4, 4, 4), np.nan))
    for heads in ([-1, 0, 1, -1], [-1, 0, 2, 1], [0, 0, 1, 1], [-1, 0, 1, 4]):
        with pytest.raises(ValueError, match="heads must hold -1 at 0"):
            so.parts(heads)
    with pytest.raises(ValueError, match="heads has 3 entries for scores of 4"):
        so.tree_score(S, np.zeros((4, 4, 4)), None, [-1, 0, 1])


scores = st.integers(1, 9).flatmap(lambda n: st.tuples(
    st.just(n), st.integers(0, 2**32 - 1), st.sampled_from([0.1, 1.0, 10.0, 100.0])))


@settings(max_examples=40, deadline=None)
@given(scores, st.booleans(), st.booleans())
def test_marginals_of_each_word_sum_to_one(case, grand, single_root):
    n, seed, scale = case
    S, sib, G = random_scores(n, np.random.default_rng(seed), grand, scale)
    logZ, mu, mu_sib, mu_grand = so.log_partition_and_marginals(S, sib, G, single_root)
    assert np.isfinite(logZ)
    np.testing.assert_allclose(mu[:, 1:].sum(axis=0), 1.0, atol=1e-8)
    np.testing.assert_allclose(mu_sib.sum(axis=(0, 2))[1:], 1.0, atol=1e-8)
    np.testing.assert_allclose(mu_sib.sum(axis=2), mu, atol=1e-8)
    if grand:  # every word's head is the root or has a head itself
        np.testing.assert_allclose(mu_grand.sum(axis=(0, 1))[1:] + mu[0, 1:], 1.0, atol=1e-8)
    heads = so.eisner(S, sib, G, single_root)
    assert so.tree_score(S, sib, G, heads) <= logZ + 1e-9
