"""The arc objectives against brute force (every tree of n <= 6 words) and finite
differences; decoding against the best tree."""

import numpy as np
import pytest
import torch
from oracles import brute
from scipy.special import logsumexp

from arborparse.neural.objectives import OBJECTIVES, arc_loss, decode


def case(n, seed, projective=False):
    rng = np.random.default_rng(seed)
    S = rng.normal(size=(n + 1, n + 1)) * 2
    trees, scores, logZ, mu = brute(S, projective, single_root=True)
    k = int(rng.integers(len(trees)))
    return S, trees, scores, logZ, mu, k


def loss_of(objective, S, heads):
    n = S.shape[0] - 1
    return float(arc_loss(objective, torch.tensor(S)[None], torch.tensor(heads)[None],
                          torch.tensor([n])))


@pytest.mark.parametrize("n", range(1, 7))
@pytest.mark.parametrize("projective", [False, True])
def test_crf_loss_is_the_negative_log_likelihood(n, projective):
    S, trees, scores, logZ, _, k = case(n, n, projective)
    objective = "crf-projective" if projective else "crf"
    assert loss_of(objective, S, trees[k]) == pytest.approx(logZ - scores[k], abs=1e-9)


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
    a, ta, *_ , ka = case(3, 1, objective == "crf-projective")
    b, tb_, *_, kb = case(5, 2, objective == "crf-projective")
    S = torch.full((2, 6, 6), -7.0, dtype=torch.float64)  # padding must not matter
    S[0, :4, :4] = torch.tensor(a)
    S[1] = torch.tensor(b)
    heads = torch.full((2, 6), -1)
    heads[0, :4] = torch.tensor(ta[ka])
    heads[1] = torch.tensor(tb_[kb])
    both = float(arc_loss(objective, S, heads, torch.tensor([3, 5])))
    assert both == pytest.approx(loss_of(objective, a, ta[ka]) + loss_of(objective, b, tb_[kb]),
                                 abs=1e-9)


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_gradients_match_finite_differences(objective):
    S, trees, *_, k = case(4, 5, objective == "crf-projective")
    S = torch.tensor(S)[None].requires_grad_()
    heads, lengths = torch.tensor(trees[k])[None], torch.tensor([4])
    assert torch.autograd.gradcheck(lambda x: arc_loss(objective, x, heads, lengths), (S,),
                                    eps=1e-6, atol=1e-5)


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
