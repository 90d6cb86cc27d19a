"""The batched second-order sibling model against brute force, autograd and finite
differences; on the CPU its functions run the compiled kernels sentence by sentence, and the
tensor route (a GPU's) is checked here on the CPU against them and against brute force."""

import numpy as np
import pytest
import torch
from oracles import all_trees, brute_second_order, second_order_parts

from arborparse.trees import batch_second_order as so
from arborparse.trees.scores import NonFiniteScores

ROOTS = [True, False]


def random_scores(n, seed, scale=2.0, B=1):
    g = torch.Generator().manual_seed(seed)
    N1 = n + 1
    S = torch.randn(B, N1, N1, generator=g, dtype=torch.float64) * scale
    sib = torch.randn(B, N1, N1, N1, generator=g, dtype=torch.float64) * scale
    return S, sib


def oracle(S, sib, single_root):
    return brute_second_order(S[0].numpy(), sib[0].numpy(), None, True, single_root)


@pytest.mark.parametrize("n", range(1, 7))
@pytest.mark.parametrize("single_root", ROOTS)
def test_log_z_and_marginals_match_brute_force(n, single_root):
    S, sib = random_scores(n, n)
    _, _, logZ, mu, mu_sib, _ = oracle(S, sib, single_root)
    z, m, m_sib = so.log_partition_and_marginals(S, sib, None, single_root)
    assert z.item() == pytest.approx(logZ, abs=1e-10)
    np.testing.assert_allclose(m[0].numpy(), mu, atol=1e-10)
    np.testing.assert_allclose(m_sib[0].numpy(), mu_sib, atol=1e-10)
    assert so.log_partition(S, sib, None, single_root).item() == pytest.approx(logZ, abs=1e-10)


@pytest.mark.parametrize("n", range(1, 7))
@pytest.mark.parametrize("single_root", ROOTS)
def test_the_best_tree_and_the_scores_of_trees(n, single_root):
    S, sib = random_scores(n, 100 + n)
    trees, scores, *_ = oracle(S, sib, single_root)
    heads = so.eisner(S, sib, None, single_root)
    assert heads[0].tolist() == trees[np.argmax(scores)].tolist()
    np.testing.assert_allclose(so.tree_score(S.expand(len(trees), -1, -1),
                                             sib.expand(len(trees), -1, -1, -1),
                                             torch.tensor(trees)).numpy(), scores,
                               atol=1e-10)


@pytest.mark.parametrize("n", range(1, 7))
def test_siblings_are_the_parts_of_the_oracle(n):
    trees = all_trees(n, False, False)  # parts are defined for every tree
    psib, _ = second_order_parts(trees)
    s = so.siblings(torch.tensor(trees)).numpy()
    m = np.arange(1, n + 1)
    for t, tree in enumerate(trees):
        want = np.zeros_like(psib[t])
        want[tree[1:], m, s[t, 1:]] = True
        assert (psib[t] == want).all()
        assert s[t, 0] == -1


ROUTES = {"compiled": (so.log_partition_and_marginals, so.eisner),  # the CPU's
          "tensor": (lambda S, sib, lengths, single_root: so._tensor_marginals(
              S, sib, so._check(S, sib, lengths), single_root),
                     lambda S, sib, lengths, single_root: so._tensor_eisner(
              S, sib, so._check(S, sib, lengths), single_root))}


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("single_root", ROOTS)
def test_a_padded_batch_is_its_sentences_one_by_one(single_root, route):
    log_partition_and_marginals, eisner = ROUTES[route]
    lengths = [5, 1, 3, 6, 2]
    S, sib = random_scores(max(lengths), 7, B=len(lengths))
    S[2, 4:, :] = float("-inf")  # padding may hold anything, -inf and +inf included
    sib[2, :, 4:] = float("-inf")
    sib[4, 3:, 3:, 3:] = float("inf")
    sib[1, :, :, 2:] = 1e308
    lengths_t = torch.tensor(lengths)
    z, mu, mu_sib = log_partition_and_marginals(S, sib, lengths_t, single_root)
    heads = eisner(S, sib, lengths_t, single_root)
    assert torch.isfinite(mu).all() and torch.isfinite(mu_sib).all()
    for b, n in enumerate(lengths):
        one = (S[b:b + 1, :n + 1, :n + 1], sib[b:b + 1, :n + 1, :n + 1, :n + 1])
        z1, mu1, sib1 = log_partition_and_marginals(*one, None, single_root)
        assert z[b].item() == pytest.approx(z1.item(), abs=1e-10)
        torch.testing.assert_close(mu[b, :n + 1, :n + 1], mu1[0], atol=1e-10, rtol=0)
        torch.testing.assert_close(mu_sib[b, :n + 1, :n + 1, :n + 1], sib1[0], atol=1e-10,
                                   rtol=0)
        assert mu[b].sum().item() == pytest.approx(n) and mu_sib[b].sum().item() == \
            pytest.approx(n)
        assert heads[b, :n + 1].tolist() == eisner(*one, None, single_root)[0].tolist()
        assert (heads[b, n + 1:] == -1).all()


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("single_root", ROOTS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_large_scores_stay_exact_and_finite(single_root, dtype, route):
    n = 5
    S, sib = random_scores(n, 3, scale=1e3)
    _, scores, logZ, mu, mu_sib, _ = oracle(S, sib, single_root)
    z, m, m_sib = ROUTES[route][0](S.to(dtype), sib.to(dtype), None, single_root)
    tol = 1e-8 if dtype == torch.float64 else 1e-1
    assert z.item() == pytest.approx(logZ, abs=tol, rel=1e-6)
    assert torch.isfinite(m).all() and torch.isfinite(m_sib).all()
    np.testing.assert_allclose(m[0].double().numpy(), mu, atol=1e-4)
    np.testing.assert_allclose(m_sib[0].double().numpy(), mu_sib, atol=1e-4)


@pytest.mark.parametrize("single_root", ROOTS)
def test_gradients_match_finite_differences(single_root):
    lengths = torch.tensor([4, 2])
    S, sib = random_scores(4, 11, scale=1.0, B=2)
    S.requires_grad_(True)
    sib.requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda a, s: so.log_partition(a, s, lengths, single_root), (S, sib))
    assert torch.autograd.gradcheck(
        lambda a, s: so.tree_score(a, s, torch.tensor([[-1, 0, 1, 4, 1], [-1, 2, 0, -1, -1]])),
        (S, sib))


def test_shapes_are_checked():
    S, sib = random_scores(3, 0)
    with pytest.raises(ValueError, match="sib must have shape"):
        so.log_partition(S, sib[:, :3])
    with pytest.raises(ValueError, match="lengths"):
        so.log_partition(S, sib, torch.tensor([4]))


@pytest.mark.parametrize("n", range(1, 7))
@pytest.mark.parametrize("single_root", ROOTS)
def test_the_tensor_route_matches_brute_force(n, single_root):
    S, sib = random_scores(n, 200 + n)
    trees, scores, logZ, mu, mu_sib, _ = oracle(S, sib, single_root)
    lengths = torch.tensor([n])
    z, m, m_sib = so._tensor_marginals(S, sib, lengths, single_root)
    assert z.item() == pytest.approx(logZ, abs=1e-10)
    np.testing.assert_allclose(m[0].numpy(), mu, atol=1e-10)
    np.testing.assert_allclose(m_sib[0].numpy(), mu_sib, atol=1e-10)
    assert so._inside(S, sib, lengths, single_root, so._logsumexp).item() == \
        pytest.approx(logZ, abs=1e-10)
    heads = so._tensor_eisner(S, sib, lengths, single_root)
    assert heads[0].tolist() == trees[np.argmax(scores)].tolist()


@pytest.mark.parametrize("single_root", ROOTS)
def test_the_tensor_route_and_its_gradients_match_the_compiled_route(single_root):
    lengths = torch.tensor([5, 1, 3, 6, 2])
    S, sib = random_scores(6, 17, B=5)
    S[2, 4:, :] = float("-inf")  # padding may hold anything
    sib[4, 3:, 3:, 3:] = float("inf")
    tensor, compiled = (so._tensor_marginals(S, sib, lengths, single_root),
                        so._compiled_marginals(S, sib, lengths, single_root))
    for a, b in zip(tensor, compiled):
        torch.testing.assert_close(a, b, atol=1e-9, rtol=0)
    assert (so._tensor_eisner(S, sib, lengths, single_root) ==
            so._compiled_eisner(S, sib, lengths, single_root)).all()
    S.requires_grad_(True)
    sib.requires_grad_(True)
    weights = torch.arange(1.0, 6.0, dtype=torch.float64)  # a gradient that is not all ones
    grads = [torch.autograd.grad((weights * f()).sum(), (S, sib)) for f in (
        lambda: so._inside(S, sib, lengths, single_root, so._logsumexp),
        lambda: so.log_partition(S, sib, lengths, single_root))]
    for a, b in zip(*grads):
        torch.testing.assert_close(a, b, atol=1e-9, rtol=0)
    lengths = torch.tensor([4, 2])
    S, sib = random_scores(4, 11, scale=1.0, B=2)
    S.requires_grad_(True)
    sib.requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda a, s: so._inside(a, s, lengths, single_root, so._logsumexp), (S, sib))


@pytest.mark.parametrize("single_root", ROOTS)
def test_the_tensor_route_agrees_with_the_numpy_back_end(single_root):
    from arborparse.trees import second_order

    lengths = [12, 1, 7, 20]
    S, sib = random_scores(max(lengths), 21, scale=3.0, B=len(lengths))
    z, mu, mu_sib = so._tensor_marginals(S, sib, torch.tensor(lengths), single_root)
    heads = so._tensor_eisner(S, sib, torch.tensor(lengths), single_root)
    for b, n in enumerate(lengths):
        Sb, sibb = S[b, :n + 1, :n + 1].numpy(), sib[b, :n + 1, :n + 1, :n + 1].numpy()
        logZ, want_mu, want_sib, _ = second_order.log_partition_and_marginals(
            Sb, sibb, None, single_root)
        assert z[b].item() == pytest.approx(logZ, abs=1e-9)
        np.testing.assert_allclose(mu[b, :n + 1, :n + 1].numpy(), want_mu, atol=1e-9)
        np.testing.assert_allclose(mu_sib[b, :n + 1, :n + 1, :n + 1].numpy(), want_sib,
                                   atol=1e-9)
        best = second_order.eisner(Sb, sibb, None, single_root)
        assert heads[b, :n + 1].tolist() == best.tolist()
        assert so.tree_score(S[b:b + 1], sib[b:b + 1], heads[b:b + 1]).item() == \
            pytest.approx(second_order.tree_score(Sb, sibb, None, best), abs=1e-9)
        parts = second_order.parts(best)[0]
        s = so.siblings(heads[b:b + 1, :n + 1])[0].numpy()
        assert sorted(map(tuple, parts.tolist())) == \
            sorted((int(best[m]), m, int(s[m])) for m in range(1, n + 1))


@pytest.mark.parametrize("single_root", ROOTS)
def test_the_distribution_object_is_the_functions(single_root):
    lengths = torch.tensor([4, 2, 5])
    S, sib = random_scores(5, 11, B=3)
    crf = so.SiblingCRF(S, sib, lengths, single_root)
    z, mu, mu_sib = so.log_partition_and_marginals(S, sib, lengths, single_root)
    torch.testing.assert_close(crf.log_partition, z)
    torch.testing.assert_close(crf.marginals[0], mu)
    torch.testing.assert_close(crf.marginals[1], mu_sib)
    best = crf.argmax
    assert (best == so.eisner(S, sib, lengths, single_root)).all()
    for b, n in enumerate(lengths.tolist()):  # log P of the best tree, against brute force
        _, scores, logZ, *_ = oracle(S[b:b + 1, :n + 1, :n + 1],
                                     sib[b:b + 1, :n + 1, :n + 1, :n + 1], single_root)
        assert crf.log_prob(best)[b].item() == pytest.approx(scores.max() - logZ, abs=1e-9)


def test_the_compiled_route_keeps_the_dtype_and_the_arc_marginals_alone():
    lengths = torch.tensor([3, 5])
    S, sib = random_scores(5, 31, B=2)
    z, mu, mu_sib = so.log_partition_and_marginals(S.float(), sib.float(), lengths)
    assert z.dtype == mu.dtype == mu_sib.dtype == torch.float32
    want = so.log_partition_and_marginals(S, sib, lengths)
    torch.testing.assert_close(mu.double(), want[1], atol=1e-6, rtol=0)
    torch.testing.assert_close(so.marginals(S, sib, lengths), want[1])


def test_bad_scores_name_the_sentence_and_log_z_needs_no_marginals():
    lengths = torch.tensor([3, 4])
    S, sib = random_scores(4, 41, B=2)
    bad = sib.clone()
    bad[1, 2, 1, 2] = float("nan")
    for f in (so.log_partition_and_marginals, so.eisner, so.log_partition):
        with pytest.raises(NonFiniteScores, match="sentence 1: sib scores must not contain NaN"):
            f(S, bad, lengths)
    S[0, :, 2] = float("-inf")  # word 2 of sentence 0 can have no head
    assert so.log_partition(S, sib, lengths)[0].item() == float("-inf")
    with pytest.raises(NonFiniteScores, match="sentence 0: no tree has a finite score"):
        so.marginals(S, sib, lengths)
    S[0, :, 2] = 0.0
    S.requires_grad_(True)
    with torch.no_grad():  # log Z alone: no marginals computed, none kept
        z = so.log_partition(S, sib, lengths)
    torch.testing.assert_close(z, so.log_partition_and_marginals(S.detach(), sib, lengths)[0])
    (grad,) = torch.autograd.grad(so.log_partition(S, sib, lengths).sum(), S,
                                  create_graph=True)
    with pytest.raises(RuntimeError):  # first derivatives only, said so
        grad.sum().backward()
