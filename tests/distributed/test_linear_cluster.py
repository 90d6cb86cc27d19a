"""Training on a real Dask cluster: iterative parameter mixing (its averaging against the
brute-force sum of the weights, a separable treebank learned from shards) and the sharded
log-linear objective (equal to the serial one, the same model)."""

import numpy as np
import pytest
from click.testing import CliRunner
from treebanks import separable, separable_text

from arborparse.cli import cli
from arborparse.linear.cluster import (MixingTrainer, ShardedLogLinearTrainer,
                                             _shard_pass, shard_ranges)
from arborparse.errors import ArborparseError
from arborparse.eval import evaluate
from arborparse.linear.common import gold_data
from arborparse.linear.reach import reach
from arborparse.linear.loglinear import LogLinearTrainer
from arborparse.linear.model import LinearModel
from arborparse.linear.online import OnlineTrainer


def test_shards_cover_the_data_once():
    for n in range(1, 30):
        for shards in range(1, n + 1):
            ranges = shard_ranges(n, shards)
            assert [i for r in ranges for i in r] == list(range(n))
            assert max(map(len, ranges)) - min(map(len, ranges)) <= 1


@pytest.mark.parametrize("kind", ["perceptron", "mira"])
def test_a_shard_pass_sums_its_weights_over_its_steps(kind):
    trainer = OnlineTrainer(kind, hash_bits=12, progress=False)
    labels, encoded, heads, gold = gold_data(separable(2), True)
    model = trainer._model(encoded, heads, labels)
    w0 = np.random.default_rng(0).standard_normal(len(model.weights))
    w, total, n, _ = _shard_pass(trainer, model, (encoded, heads, gold), w0, 7)
    order = np.random.default_rng(7).permutation(len(encoded))
    brute, step, u = w0.copy(), w0.copy(), np.zeros_like(w0)
    expected = np.zeros_like(w0)
    for i in order:  # one sentence at a time, summing the weights after each step
        trainer.one_pass(model, step, u, 1, encoded, heads, gold, [i])
        expected += step
    assert n == len(encoded) and np.allclose(w, step)
    assert np.allclose(total, expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("kind", ["perceptron", "mira"])
def test_mixing_separates_a_separable_treebank_from_shards(client, kind):
    """McDonald et al. (2010), Theorem 3: on separable data the mixed weights stop making
    mistakes; the averaged parser then parses the training data (almost) perfectly."""
    data = separable(3)
    for shards in (1, 2, 4):
        fitted = MixingTrainer(OnlineTrainer(kind, epochs=4, hash_bits=14, progress=False),
                               shards, client).fit(data)
        assert fitted.history_[-1]["train_errors"] == 0
        assert evaluate(data, fitted.parser_.parse(data))["LAS"] >= 95
        assert [h["shards"] for h in fitted.history_] == [shards] * 4
        assert fitted.parser_.reach == reach(data)  # the training trees' longest arcs


def test_too_many_shards_are_refused(client):
    data = separable(1)
    with pytest.raises(ArborparseError, match="at most one shard a sentence"):
        MixingTrainer(OnlineTrainer(progress=False), len(data) + 1, client).fit(data)


def test_the_sharded_log_linear_objective_is_the_serial_one(client):
    data = separable(3)
    settings = dict(C=0.3, epochs=8, hash_bits=14, progress=False)
    serial = LogLinearTrainer("lbfgs", **settings)
    sharded = ShardedLogLinearTrainer(3, client, **settings)
    labels, prepared = serial._data(data)
    _, shards = sharded._data(data)
    model = LinearModel.hashing(14, labels)
    w = np.random.default_rng(1).standard_normal(len(model.weights))
    value, grad = serial.objective(model, prepared, w)
    value_s, grad_s = sharded.objective(model, shards, w)
    assert abs(value_s - value) <= 1e-9 * abs(value)
    assert np.abs(grad_s - grad).max() <= 1e-9 * np.abs(grad).max()
    a = LogLinearTrainer("lbfgs", **settings).fit(data).parser_
    b = ShardedLogLinearTrainer(3, client, **settings).fit(data).parser_
    assert np.allclose(a.model.weights, b.model.weights, rtol=1e-5, atol=1e-6)
    assert a.reach == b.reach == reach(data)
    assert [s.to_text() for s in a.parse(data)] == [s.to_text() for s in b.parse(data)]


def test_the_command_line(tmp_path):
    train = tmp_path / "train.conllu"
    train.write_text(separable_text(2))
    run = lambda *args: CliRunner().invoke(cli, list(map(str, args)))  # noqa: E731
    base = ["train", "--train", train, "--model", tmp_path / "m.npz", "--components", "parser",
            "--quiet", "--force"]
    r = run(*base, "--trainer", "perceptron", "--epochs", 2, "--scheduler", "local",
            "--workers", 1, "--shards", 2)
    assert r.exit_code == 0, r.output
    r = run(*base, "--trainer", "eg", "--scheduler", "local")
    assert r.exit_code == 2 and "--scheduler does not apply to --trainer eg" in r.output
    r = run(*base, "--shards", 2)
    assert r.exit_code == 2 and "shards and workers apply to training on a cluster" in r.output
    r = run(*base[:-1], "--trainer", "perceptron", "--scheduler", "local", "--resume")
    assert r.exit_code == 1 and "writes no checkpoint, so it cannot be resumed" in r.output


def test_order_2_trains_on_the_cluster(client):
    """Parameter mixing and the sharded log-linear objective take second-order models as
    they are (the model carries its order)."""
    data = separable(2)
    fitted = MixingTrainer(OnlineTrainer("perceptron", epochs=3, hash_bits=14, order=2,
                                         progress=False), 2, client).fit(data)
    assert fitted.parser_.model.order == 2
    assert evaluate(data, fitted.parser_.parse(data))["LAS"] >= 95
    settings = dict(C=0.3, hash_bits=12, order=2, progress=False)
    serial = LogLinearTrainer("lbfgs", **settings)
    sharded = ShardedLogLinearTrainer(2, client, **settings)
    labels, prepared = serial._data(data)
    _, shards = sharded._data(data)
    model = LinearModel.hashing(12, labels, order=2)
    w = np.random.default_rng(1).standard_normal(len(model.weights))
    value, grad = serial.objective(model, prepared, w)
    value_s, grad_s = sharded.objective(model, shards, w)
    assert abs(value_s - value) <= 1e-9 * abs(value)
    assert np.abs(grad_s - grad).max() <= 1e-9 * np.abs(grad).max()
