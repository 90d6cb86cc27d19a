import numpy as np
import pytest
from oracles import all_trees
from treebanks import separable

from arborparse.errors import ArborparseError
from arborparse.eval import evaluate
from arborparse.linear.eg import EGTrainer


@pytest.mark.parametrize("decoder", ["mst", "eisner"])
@pytest.mark.parametrize("C", [1.0, 10.0])
def test_fits_separable_data_and_the_dual_objective_rises(decoder, C):
    data = separable()
    fitted = EGTrainer(C=C, epochs=8, decoder=decoder, hash_bits=14,
                       progress=False).fit(data, data)
    assert evaluate(data, fitted.parser_.parse(data))["LAS"] == 100.0
    objective = [h["dual_objective"] for h in fitted.history_]
    rates = [h["learning_rate"] for h in fitted.history_]
    # after any halving, the dual objective does not decrease again
    for t in range(1, len(objective)):
        if rates[t] == rates[t - 1]:
            assert objective[t] >= objective[t - 1] - 1e-9
    assert fitted.history_[0]["learning_rate"] == pytest.approx(1 / C)
    # θ: one float32 (n+1, n+1, L) array per sentence
    labels = len(fitted.parser_.model.labels)
    assert fitted.dual_bytes_ == sum(4 * (len(s) + 1) ** 2 * labels for s in data)


def test_initial_dual_gives_the_gold_tree_most_mass():
    data = separable(1)[:2]
    trainer = EGTrainer(epochs=1, hash_bits=12, progress=False)
    theta = np.zeros((4, 4, 2), dtype=np.float32)
    theta[[2, 3, 0], [1, 2, 3], [0, 1, 0]] = 9.0
    mu, mu_sib, mu_grand = trainer._marginals([theta, None, None])
    assert mu_sib is None and mu_grand is None
    assert mu[2, 1, 0] > 0.99 and mu[0, 3, 0] > 0.99
    assert data


def test_bad_options():
    with pytest.raises(ArborparseError, match="C > 0"):
        EGTrainer(C=-1)
    with pytest.raises(ArborparseError, match="unknown decoder"):
        EGTrainer(decoder="cky")


@pytest.mark.parametrize("decoder", ["mst", "eisner"])
def test_primal_objective_and_duality_gap(decoder):
    """The primal L(w) by enumerating every labeled tree; weak duality every pass."""
    data = separable(1)[:4]
    trainer = EGTrainer(C=0.5, epochs=3, decoder=decoder, hash_bits=12, progress=False,
                        primal=True)
    fitted = trainer.fit(data)
    assert all(h["duality_gap"] >= -1e-9 for h in fitted.history_)
    assert fitted.history_[-1]["duality_gap"] == pytest.approx(
        fitted.history_[-1]["primal_objective"] - fitted.history_[-1]["dual_objective"])

    from arborparse.linear.common import gold_data
    from arborparse.linear.model import LinearModel

    labels, encoded, heads, ids = gold_data(data, True, decoder == "eisner")
    model = LinearModel.hashing(12, labels)
    w = np.random.default_rng(0).normal(scale=0.5, size=1 << 12)
    L = len(labels)
    losses, hinge = [], 0.0
    for x, h, lab in zip(encoded, heads, ids):
        n = len(h) - 1
        m = np.arange(1, n + 1)
        S = model.labeled_scores(x, w)
        loss = ((np.arange(n + 1)[:, None] != h[None, :])[:, :, None]
                | (np.arange(L)[None, :] != lab[:, None])[None, :, :]).astype(np.float32)
        losses.append(loss)
        best = max((loss + S)[tree[1:], m].max(axis=1).sum()
                   for tree in all_trees(n, decoder == "eisner", True))
        hinge += best - S[h[1:], m, lab[1:]].sum()
    expected = 0.5 * hinge + 0.5 * float(w @ w)
    assert trainer.primal_objective(model, w, encoded, heads, ids, losses) == pytest.approx(
        expected, rel=1e-9)


def test_the_kept_weights_are_the_mean_of_every_step_so_far():
    """One sentence: the iterates are the initial weights and the end of each pass, and the
    kept weights their mean, over every pass so far (by default; without averaging, the
    end of the pass)."""
    data = separable(1)[:1]

    def weights(epochs=1, **options):
        fitted = EGTrainer(C=1.0, epochs=epochs, hash_bits=12, progress=False,
                           **options).fit(data)
        return fitted.parser_.model.weights.astype(np.float64)

    start = weights(average=False, learning_rate=1e-12)  # θ (and so w) does not move
    one, two = weights(average=False), weights(2, average=False)
    assert np.abs(one - start).max() > 1e-3 and np.abs(two - one).max() > 1e-3
    assert weights() == pytest.approx((start + one) / 2, abs=1e-5)
    assert weights(2) == pytest.approx((start + one + two) / 3, abs=1e-5)


def test_passes_go_on_while_dev_rises():
    """With dev, EG goes on past its epochs while the best dev LAS is one of the last
    `extend` passes (at most three times the epochs), as the online trainers do."""
    data = separable()
    runs = {extend: EGTrainer(C=1.0, epochs=2, extend=extend, hash_bits=12,
                              progress=False).fit(data, data) for extend in (0, 2)}
    assert len(runs[0].history_) == 2
    assert 2 < len(runs[2].history_) <= 6
    assert len(EGTrainer(C=1.0, epochs=2, extend=2, hash_bits=12,
                         progress=False).fit(data).history_) == 2  # no dev: the epochs
    with pytest.raises(ArborparseError, match="extend >= 0"):
        EGTrainer(extend=-1)
