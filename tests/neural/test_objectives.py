"""The arc objectives against brute force (every tree of n <= 6 words) and finite
differences; decoding against the best tree."""

import numpy as np
import pytest
import torch
from oracles import brute, brute_second_order
from scipy.special import logsumexp

from arborparse.neural.objectives import OBJECTIVES, arc_loss, decode, marginals


def case(n, seed, projective=False):
    rng = np.random.default_rng(seed)
    S = rng.normal(size=(n + 1, n + 1)) * 2
    trees, scores, logZ, mu = brute(S, projective, single_root=True)
    k = int(rng.integers(len(trees)))
    return S, trees, scores, logZ, mu, k


def siblings_for(objective, n, seed):
    """Random sibling scores for crf2o, None for the first-order objectives."""
    if objective != "crf2o":
        return None
    return np.random.default_rng(seed).normal(size=(n + 1,) * 3)


def loss_of(objective, S, heads, sib=None):
    n = S.shape[0] - 1
    return float(arc_loss(objective, torch.tensor(S)[None], torch.tensor(heads)[None],
                          torch.tensor([n]), sib=None if sib is None else torch.tensor(sib)[None]))


@pytest.mark.parametrize("n", range(1, 7))
@pytest.mark.parametrize("projective", [False, True])
def test_crf_loss_is_the_negative_log_likelihood(n, projective):
    S, trees, scores, logZ, _, k = case(n, n, projective)
    objective = "crf-projective" if projective else "crf"
    assert loss_of(objective, S, trees[k]) == pytest.approx(logZ - scores[k], abs=1e-9)


@pytest.mark.parametrize("n", range(1, 7))
@pytest.mark.parametrize("single_root", [True, False])
def test_crf2o_loss_is_the_second_order_negative_log_likelihood(n, single_root):
    S, *_ = case(n, 30 + n)
    sib = siblings_for("crf2o", n, n)
    trees, scores, logZ, *_ = brute_second_order(S, sib, None, True, single_root)
    k = len(trees) // 2
    loss = arc_loss("crf2o", torch.tensor(S)[None], torch.tensor(trees[k])[None],
                    torch.tensor([n]), single_root, torch.tensor(sib)[None])
    assert float(loss) == pytest.approx(logZ - scores[k], abs=1e-9)


@pytest.mark.parametrize("n", range(1, 7))
def test_max_margin_is_the_cost_augmented_hinge(n):
    S, trees, scores, _, _, k = case(n, 10 + n)
    hamming = (trees[:, 1:] != trees[k, 1:]).sum(axis=1)
    assert loss_of("max-margin", S, trees[k]) == \
        pytest.approx(np.max(scores + hamming) - scores[k], abs=1e-9)


@pytest.mark.parametrize("n", range(1, 7))
def test_local_is_cross_entropy_per_word(n):
    S, trees, _, _, _, k = case(n, 20 + n)
    expected = 0.0
    for m in range(1, n + 1):
        column = [S[h, m] for h in range(n + 1) if h != m]
        expected += logsumexp(column) - S[trees[k][m], m]
    assert loss_of("local", S, trees[k]) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_a_padded_batch_sums_its_sentences(objective):
    projective = objective in ("crf-projective", "crf2o")
    a, ta, *_ , ka = case(3, 1, projective)
    b, tb_, *_, kb = case(5, 2, projective)
    sa, sb = siblings_for(objective, 3, 1), siblings_for(objective, 5, 2)
    S = torch.full((2, 6, 6), -7.0, dtype=torch.float64)  # padding must not matter
    S[0, :4, :4] = torch.tensor(a)
    S[1] = torch.tensor(b)
    sib = None
    if sa is not None:
        sib = torch.full((2, 6, 6, 6), -7.0, dtype=torch.float64)
        sib[0, :4, :4, :4] = torch.tensor(sa)
        sib[1] = torch.tensor(sb)
    heads = torch.full((2, 6), -1)
    heads[0, :4] = torch.tensor(ta[ka])
    heads[1] = torch.tensor(tb_[kb])
    both = float(arc_loss(objective, S, heads, torch.tensor([3, 5]), sib=sib))
    assert both == pytest.approx(loss_of(objective, a, ta[ka], sa)
                                 + loss_of(objective, b, tb_[kb], sb), abs=1e-9)


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_gradients_match_finite_differences(objective):
    S, trees, *_, k = case(4, 5, objective in ("crf-projective", "crf2o"))
    inputs = [torch.tensor(S)[None].requires_grad_()]
    sib = siblings_for(objective, 4, 5)
    if sib is not None:
        inputs.append(torch.tensor(sib)[None].requires_grad_())
    heads, lengths = torch.tensor(trees[k])[None], torch.tensor([4])
    assert torch.autograd.gradcheck(lambda *x: arc_loss(objective, x[0], heads, lengths,
                                                        sib=x[1] if sib is not None else None),
                                    inputs, eps=1e-6, atol=1e-5)


@pytest.mark.parametrize("projective", [False, True])
def test_decoding_finds_the_best_and_the_mbr_tree(projective):
    S, trees, scores, _, mu, _ = case(5, 3, projective)
    lengths = torch.tensor([5])
    best = decode(torch.tensor(S)[None], lengths, projective, True)[0].numpy()
    assert np.array_equal(best, trees[np.argmax(scores)])
    mu_of_S = torch.tensor(mu)[None]  # the brute-force marginals
    mbr = decode(torch.tensor(S)[None], lengths, projective, True, mu_of_S)[0].numpy()
    expected = (mu[trees[:, 1:], np.arange(1, 6)]).sum(axis=1)
    assert expected[[i for i, t in enumerate(trees) if np.array_equal(t, mbr)][0]] == \
        pytest.approx(expected.max())


@pytest.mark.parametrize("single_root", [True, False])
def test_crf2o_decodes_the_best_tree_and_has_second_order_marginals(single_root):
    S, *_ = case(5, 8)
    sib = siblings_for("crf2o", 5, 8)
    trees, scores, _, mu, *_ = brute_second_order(S, sib, None, True, single_root)
    S_t, sib_t, lengths = torch.tensor(S)[None], torch.tensor(sib)[None], torch.tensor([5])
    best = decode(S_t, lengths, True, single_root, sib=sib_t)[0].numpy()
    assert np.array_equal(best, trees[np.argmax(scores)])
    np.testing.assert_allclose(marginals(S_t, lengths, True, single_root, sib_t)[0].numpy(), mu,
                               atol=1e-10)
