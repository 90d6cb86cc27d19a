import numpy as np
import pytest
from treebanks import separable

from arborparse.errors import ArborparseError
from arborparse.eval import evaluate
from arborparse.learn.eg import EGTrainer


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
    mu = trainer._marginals(theta)
    assert mu[2, 1, 0] > 0.99 and mu[0, 3, 0] > 0.99
    assert data


def test_bad_options():
    with pytest.raises(ArborparseError, match="C > 0"):
        EGTrainer(C=-1)
    with pytest.raises(ArborparseError, match="unknown decoder"):
        EGTrainer(decoder="cky")
