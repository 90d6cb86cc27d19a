import numpy as np
import pytest
from treebanks import separable

from arborparse.errors import ArborparseError
from arborparse.eval import evaluate
from arborparse.linear.loglinear import LogLinearTrainer


@pytest.mark.parametrize("train_decoder", ["mst", "eisner"])
@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("clusters", [1, 3])
def test_gradient_against_finite_differences(train_decoder, single_root, clusters):
    """The log-likelihood's gradient; with clusters, the marginal likelihood's."""
    data = separable(1)[:3]
    trainer = LogLinearTrainer(C=0.7, train_decoder=train_decoder, single_root=single_root,
                               hash_bits=10, progress=False, clusters=clusters)
    labels, prepared = trainer._data(data)
    from arborparse.linear.model import LinearModel

    model = LinearModel.hashing(10, labels, clusters)
    rng = np.random.default_rng(0)
    w = rng.normal(scale=0.3, size=len(model.weights))
    value, grad = trainer.objective(model, prepared, w)
    eps = 1e-6
    for i in rng.choice(np.flatnonzero(grad != w), size=12, replace=False):
        up, down = w.copy(), w.copy()
        up[i] += eps
        down[i] -= eps
        fd = (trainer.objective(model, prepared, up)[0]
              - trainer.objective(model, prepared, down)[0]) / (2 * eps)
        assert fd == pytest.approx(grad[i], abs=1e-5)


@pytest.mark.parametrize("optimizer", ["sgd", "lbfgs"])
def test_fits_separable_data(optimizer):
    data = separable()
    fitted = LogLinearTrainer(optimizer, C=10.0, epochs=8 if optimizer == "sgd" else 60,
                              learning_rate=0.5, hash_bits=14, progress=False).fit(data, data)
    scores = evaluate(data, fitted.parser_.parse(data))
    assert scores["UAS"] == 100.0 and scores["LAS"] == 100.0


def test_bad_options():
    with pytest.raises(ArborparseError, match="unknown optimizer"):
        LogLinearTrainer("adam")
    with pytest.raises(ArborparseError, match="C > 0"):
        LogLinearTrainer(C=0)


def test_lbfgs_evaluates_on_dev_and_keeps_the_best(capsys):
    data = separable()
    fitted = LogLinearTrainer("lbfgs", C=10.0, epochs=6, hash_bits=12).fit(data, data)
    assert [r["epoch"] for r in fitted.history_] == list(range(1, len(fitted.history_) + 1))
    las = [r["LAS"] for r in fitted.history_]
    assert fitted.best_epoch_ == 1 + las.index(max(las))
    assert evaluate(data, fitted.parser_.parse(data))["LAS"] == max(las)
    lines = capsys.readouterr().err.splitlines()
    assert sum("dev UAS" in line for line in lines) == len(las)  # one line per iteration
