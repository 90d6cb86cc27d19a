import numpy as np
import pytest
import torch
from treebanks import separable

from arborparse.isbn.history import FEATURE_SETS, Derivation, Inputs, Tokens, decisions_of
from arborparse.isbn.network import Batch, Network, mean_field_update
from arborparse.isbn.transitions import LA, RA
from arborparse.isbn.vocab import Vocabulary


def _setup(features="tuned", latent_links=True, hidden=6, approximation="ff"):
    data = separable(2)
    vocab = Vocabulary.build(data, cutoff=1, unknown_cutoff=0)
    inputs = Inputs(vocab, FEATURE_SETS[features])
    derivations = [Derivation.of(Tokens.of(s, vocab), inputs, decisions_of(s, vocab))
                   for s in data]
    net = Network(vocab, inputs, hidden=hidden, latent_links=latent_links, seed=0,
                  approximation=approximation)
    with torch.no_grad():  # larger weights than the initial ones, to test something
        for p in net.parameters():
            p.mul_(20.0)
        net.inputs[0].zero_()
    return vocab, derivations, net


def _settle(m, W, b, chosen):
    """The mean-field means after decision `chosen` among the rows of (W, b): the fixed
    point of m = σ(logit(m_prev) + W_chosen - Wᵀ softmax(W m + b)), by plain damped
    iteration until it no longer moves."""
    target = torch.logit(m) + W[chosen]
    x = m
    for _ in range(100000):
        new = 0.5 * x + 0.5 * torch.sigmoid(target - W.T @ torch.softmax(W @ x + b, 0))
        if (new - x).abs().max() < 1e-13:
            return new
        x = new
    raise AssertionError("no fixed point")


def _naive(net, vocab, d):
    """log P of one derivation, state by state, from the definitions (the feed-forward or
    the mean-field approximation, as the network's)."""
    W = {k: v.detach() for k, v in net.layers.items()}
    mus, total = [], 0.0
    for t in range(len(d.action)):
        eta = net.bias.detach() + sum(net.inputs.detach()[r] for r in d.inputs[t])
        if net.latent_links:
            for c, parent in enumerate(d.parents[t]):
                if parent >= 0:
                    eta = eta + net.relations.detach()[c] @ mus[parent]
        mu = torch.sigmoid(eta)

        def decide(name, index, rows=None):
            nonlocal mu
            rows = np.arange(len(W[name])) if rows is None else np.asarray(rows)
            z = W[name][:, :-1] @ mu + W[name][:, -1]
            logp = (z[index] - torch.logsumexp(z[rows], 0)).item()
            if net.approximation == "mf" and len(rows) > 1:
                mu = _settle(mu, W[name][rows, :-1], W[name][rows, -1],
                             int(np.flatnonzero(rows == index)[0]))
            return logp

        if d.action[t] >= 0:
            total += decide("action", d.action[t], np.flatnonzero(d.allowed[t]))
            if d.action[t] in (LA, RA):
                total += decide("left_label" if d.action[t] == LA else "right_label",
                                d.label[t])
        if d.pos[t] >= 0:
            total += decide("pos", d.pos[t])
        if d.feat[t] >= 0:
            p = d.pos[t]
            start = sum(len(f) for f in vocab.feats[:p])
            total += decide("feat", start + d.feat[t],
                            range(start, start + len(vocab.feats[p])))
            a, b = vocab.cell_range(p, d.feat[t])
            total += decide("form", a + d.form[t], range(a, b))
        mus.append(mu)
    return total


@pytest.mark.parametrize("latent_links", [True, False])
@pytest.mark.parametrize("features", ["tuned", "local"])
def test_batched_likelihood_equals_the_definition(features, latent_links):
    vocab, derivations, net = _setup(features, latent_links)
    batched = net.log_likelihood(Batch(derivations)).item()
    assert batched == pytest.approx(sum(_naive(net, vocab, d) for d in derivations),
                                    rel=1e-12)
    assert batched < 0


@pytest.mark.parametrize("latent_links", [True, False])
def test_batched_mean_field_likelihood_equals_the_definition(latent_links):
    vocab, derivations, net = _setup(latent_links=latent_links, approximation="mf")
    with torch.no_grad():  # moderate weights: the damped iteration settles within its budget
        for p in net.parameters():
            p.mul_(0.1)
    batched = net.log_likelihood(Batch(derivations)).item()
    # the network stops each state's iteration once it moves less than its tolerance
    assert batched == pytest.approx(sum(_naive(net, vocab, d) for d in derivations),
                                    rel=1e-6)
    # batching changes nothing: one sentence at a time gives the same sum
    alone = sum(net.log_likelihood(Batch([d])).item() for d in derivations)
    assert batched == pytest.approx(alone, rel=1e-12)


@pytest.mark.parametrize("approximation", ["ff", "mf"])
def test_gradient_against_finite_differences(approximation):
    vocab, derivations, net = _setup(hidden=4, approximation=approximation)
    batch = Batch(derivations[:4])
    net.zero_grad()
    net.log_likelihood(batch).backward()
    rng = np.random.default_rng(0)
    eps = 1e-6
    for name, param in net.named_parameters():
        used = torch.nonzero(param.grad.abs() > 1e-8)
        for k in rng.choice(len(used), size=min(3, len(used)), replace=False):
            index = tuple(used[k].tolist())
            with torch.no_grad():
                param[index] += eps
                up = net.log_likelihood(batch).item()
                param[index] -= 2 * eps
                down = net.log_likelihood(batch).item()
                param[index] += eps
            assert (up - down) / (2 * eps) == pytest.approx(param.grad[index].item(),
                                                            rel=1e-5, abs=1e-7), name
    assert net.inputs.grad[0].abs().max() == 0  # the padding row is never trained


def test_mean_field_update_reaches_its_stationary_point():
    rng = np.random.default_rng(0)
    W = torch.tensor(rng.normal(size=(7, 5)))
    b = torch.tensor(rng.normal(size=7))
    previous = torch.sigmoid(torch.tensor(rng.normal(size=(3, 5))))
    allowed = torch.tensor([[True] * 7, [False, True, True, True, True, False, False],
                            [False, False, False, True, False, False, False]])
    m = mean_field_update(previous, W.expand(3, 7, 5), b.expand(3, 7),
                          torch.tensor([3, 3, 3]), allowed)
    for i in range(2):
        z = (W @ m[i] + b).masked_fill(~allowed[i], -torch.inf)
        expected = torch.sigmoid(torch.logit(previous[i]) + W[3] - W.T @ torch.softmax(z, 0))
        assert torch.allclose(m[i], expected, atol=1e-5)
        # the decision made more probable than before the update
        before = torch.softmax((W @ previous[i] + b).masked_fill(~allowed[i], -torch.inf), 0)
        assert torch.softmax(z, 0)[3] > before[3]
    assert torch.equal(m[2], previous[2])  # no alternative: nothing learnt
