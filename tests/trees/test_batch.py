"""The PyTorch back end against the numpy one, autograd and finite differences."""

import itertools

import numpy as np
import pytest
import torch
from oracles import brute

from arborparse import trees
from arborparse.trees import batch

CLASSES = list(itertools.product([False, True], [True, False]))
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def random_batch(lengths, scale=1.0, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    N = max(lengths)
    return torch.randn(len(lengths), N + 1, N + 1, generator=g, dtype=dtype) * scale


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("projective,single_root", CLASSES)
def test_matches_numpy_back_end(projective, single_root, device):
    lengths = [9, 1, 4, 6, 2]
    S = random_batch(lengths, scale=2.0).to(device)
    logZ, mu = batch.log_partition_and_marginals(S, lengths, projective, single_root)
    decode = batch.eisner if projective else batch.mst
    heads = decode(S, lengths, single_root)
    assert heads.device.type == device
    for b, n in enumerate(lengths):
        Sb = S[b, :n + 1, :n + 1].cpu().numpy()
        assert logZ[b].item() == pytest.approx(trees.log_partition(Sb, projective, single_root),
                                               abs=1e-10)
        np.testing.assert_allclose(mu[b, :n + 1, :n + 1].cpu().numpy(),
                                   trees.marginals(Sb, projective, single_root), atol=1e-10)
        assert (mu[b, n + 1:] == 0).all() and (mu[b, :, n + 1:] == 0).all()
        want = (trees.eisner if projective else trees.mst)(Sb, single_root=single_root)
        assert heads[b, :n + 1].tolist() == want.tolist()
        assert (heads[b, n + 1:] == -1).all()


@pytest.mark.parametrize("projective,single_root", CLASSES)
def test_marginals_are_the_autograd_gradient(projective, single_root):
    lengths = [6, 3, 5]
    S = random_batch(lengths, seed=1).requires_grad_(True)
    logZ = batch.log_partition(S, lengths, projective, single_root)
    (grad,) = torch.autograd.grad(logZ.sum(), S)
    mu = batch.marginals(S, lengths, projective, single_root)
    torch.testing.assert_close(grad, mu, atol=1e-10, rtol=0)
    assert torch.autograd.gradcheck(
        lambda x: batch.log_partition(x, lengths, projective, single_root), (S,))


def reference_log_z(S, single_root):
    """The textbook Matrix-Tree determinant, no stabilization, differentiated by autograd."""
    A = torch.exp(S)
    n = S.shape[0] - 1
    A = A * (1 - torch.eye(n + 1, dtype=S.dtype))
    words = A[1:, 1:]
    if single_root:
        L = torch.diag(words.sum(0)) - words
        L = torch.cat([A[:1, 1:], L[1:]], dim=0)
    else:
        L = torch.diag(A[:, 1:].sum(0)) - words
    return torch.logdet(L)


@pytest.mark.parametrize("single_root", [True, False])
def test_nonprojective_against_textbook_autograd(single_root):
    S = random_batch([7], seed=2)[0].requires_grad_(True)
    ref = reference_log_z(S, single_root)
    (ref_grad,) = torch.autograd.grad(ref, S)
    ours = batch.log_partition_and_marginals(S[None].detach(), None, False, single_root)
    assert ours[0].item() == pytest.approx(ref.item(), abs=1e-10)
    ref_grad[:, 0] = 0
    torch.testing.assert_close(ours[1][0], ref_grad, atol=1e-10, rtol=0)


@pytest.mark.parametrize("projective,single_root", CLASSES)
def test_numpy_marginals_by_finite_differences(projective, single_root):
    rng = np.random.default_rng(4)
    S = rng.normal(size=(6, 6))
    mu = trees.marginals(S, projective, single_root)
    eps = 1e-6
    for h, m in [(0, 1), (2, 3), (5, 1), (3, 4), (0, 5)]:
        up, down = S.copy(), S.copy()
        up[h, m] += eps
        down[h, m] -= eps
        fd = (trees.log_partition(up, projective, single_root)
              - trees.log_partition(down, projective, single_root)) / (2 * eps)
        assert fd == pytest.approx(mu[h, m], abs=1e-7)


@pytest.mark.parametrize("projective,single_root", CLASSES)
def test_huge_scores_in_batches(projective, single_root):
    lengths = [5, 4]
    S = random_batch(lengths, scale=1e4, seed=3)
    logZ, mu = batch.log_partition_and_marginals(S, lengths, projective, single_root)
    for b, n in enumerate(lengths):
        Sb = S[b, :n + 1, :n + 1].numpy()
        _, _, ref_z, ref_mu = brute(Sb, projective, single_root)
        assert logZ[b].item() == pytest.approx(ref_z, rel=1e-12)
        np.testing.assert_allclose(mu[b, :n + 1, :n + 1].numpy(), ref_mu, atol=1e-8)


def test_float32_and_long_sentences():
    lengths = [150, 80]
    S = random_batch(lengths, dtype=torch.float32, seed=5)
    for projective in (False, True):
        logZ, mu = batch.log_partition_and_marginals(S, lengths, projective)
        assert torch.isfinite(logZ).all() and torch.isfinite(mu).all()
        ref = trees.log_partition(S[1, :81, :81].double().numpy(), projective)
        assert logZ[1].item() == pytest.approx(ref, rel=1e-5)
        sums = mu.sum(dim=1)
        assert torch.allclose(sums[0, 1:], torch.ones(150), atol=1e-3)


def test_bad_batches():
    with pytest.raises(ValueError, match="shape"):
        batch.log_partition(torch.zeros(3, 3))
    with pytest.raises(ValueError, match="lengths"):
        batch.log_partition(torch.zeros(2, 4, 4), torch.tensor([3, 4]))


@pytest.mark.parametrize("projective,single_root", CLASSES)
@pytest.mark.parametrize("scale", [1.0, 1e4])
def test_tensor_kernels_match_compiled_kernels(projective, single_root, scale):
    """The tensor-operation path (used off CPU) against the compiled path, here on CPU."""
    lengths = torch.tensor([8, 3, 1, 6])
    S = random_batch(lengths.tolist(), scale=scale, seed=9)
    tensor_path = batch._projective_tensor if projective else batch._nonprojective_tensor
    cpu_path = batch._projective_cpu if projective else batch._nonprojective_cpu
    z1, mu1 = tensor_path(S, lengths, single_root)
    z2, mu2 = cpu_path(S, lengths, single_root)
    torch.testing.assert_close(z1, z2, atol=1e-9, rtol=1e-12)
    torch.testing.assert_close(mu1, mu2, atol=1e-8, rtol=0)


@pytest.mark.parametrize("single_root", [True, False])
def test_small_matrix_and_lapack_routes_agree(single_root, monkeypatch):
    lengths = torch.tensor([12, 5, 1, 9])
    S = random_batch(lengths.tolist(), scale=2.0, seed=11)
    small = batch._nonprojective_cpu(S, lengths, single_root)
    monkeypatch.setattr(batch, "SMALL_MATRIX", 0)
    lapack = batch._nonprojective_cpu(S, lengths, single_root)
    torch.testing.assert_close(small[0], lapack[0], atol=1e-10, rtol=0)
    torch.testing.assert_close(small[1], lapack[1], atol=1e-10, rtol=0)


def test_invert_small_against_numpy():
    from arborparse.trees.matrix_tree import invert_small

    rng = np.random.default_rng(5)
    M = rng.normal(size=(6, 7, 7)) + 2 * np.eye(7)
    inverse_t, logdet, negative = invert_small(M, np.full(6, 7))
    sign, ref = np.linalg.slogdet(M)
    np.testing.assert_allclose(inverse_t, np.linalg.inv(M).transpose(0, 2, 1), atol=1e-12)
    np.testing.assert_allclose(logdet, ref, atol=1e-12)
    assert (negative == (sign < 0)).all()


@pytest.mark.parametrize("projective", [False, True])
@pytest.mark.parametrize("single_root", [False, True])
def test_tree_crf_against_brute_force(projective, single_root):
    rng = np.random.default_rng(7)
    sizes = (4, 2)
    S = torch.full((2, 5, 5), -3.0, dtype=torch.float64)
    S[0] = torch.tensor(rng.normal(size=(5, 5)))
    S[1, :3, :3] = torch.tensor(rng.normal(size=(3, 3)))
    crf = batch.TreeCRF(S, torch.tensor(sizes), projective, single_root)
    best, kbest, samples = crf.argmax, crf.kbest(3), crf.sample(2000, rng=1)
    for b, n in enumerate(sizes):
        all_trees, scores, logZ, mu = brute(S[b, :n + 1, :n + 1].numpy(), projective,
                                            single_root)
        p = np.exp(scores - logZ)
        assert float(crf.log_partition[b]) == pytest.approx(logZ, abs=1e-9)
        assert np.allclose(crf.marginals[b, :n + 1, :n + 1].numpy(), mu, atol=1e-9)
        assert float(crf.entropy[b]) == pytest.approx(-(p * np.log(p)).sum(), abs=1e-9)
        heads = torch.full((len(all_trees), 5), -1)
        heads[:, :n + 1] = torch.tensor(all_trees)
        padded = batch.TreeCRF(S[b:b + 1].expand(len(all_trees), -1, -1),
                               torch.full((len(all_trees),), n), projective, single_root)
        assert np.allclose(padded.log_prob(heads).numpy(), scores - logZ, atol=1e-9)
        order = np.argsort(-scores, kind="stable")
        assert np.array_equal(best[b, :n + 1].numpy(), all_trees[order[0]])
        assert [s for s, _ in kbest[b]] == pytest.approx(scores[order[:3]].tolist(), abs=1e-9)
        seen = {tuple(t): 0 for t in all_trees.tolist()}
        for t in samples[b].tolist():
            seen[tuple(t)] += 1
        freq = np.array([seen[tuple(t)] for t in all_trees.tolist()]) / 2000
        assert np.abs(freq - p).max() < 0.05
