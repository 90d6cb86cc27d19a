"""The linear models trained on a Dask cluster, the training data cut into shards.

- `MixingTrainer`: iterative parameter mixing (McDonald, Hall & Mann 2010, Figure 3) for
  the perceptron and MIRA. Each epoch every shard trains one pass of `OnlineTrainer`
  from the mixed weights; the new weights are the shards' mean. The parser of an epoch is
  the average of the mixed trajectory: each shard returns the sum of its weights over its
  steps, and the mean of those sums, accumulated over the epochs, divided by the mean
  number of steps, is the averaged weight vector.
- `ShardedLogLinearTrainer`: batch L-BFGS of the log-linear model with the objective and
  its gradient summed over the shards, each computed by a worker: the same function as
  `LogLinearTrainer.objective`, up to the order of floating-point sums.

The shards are scattered to the workers once; the weights travel once per epoch (L-BFGS:
once per function evaluation), and the shards' vectors are summed on a worker.
"""

from __future__ import annotations

import numpy as np

from arborparse.errors import ArborparseError
from arborparse.io.conllu import Sentence
from arborparse.linear.common import gold_data, loop
from arborparse.linear.reach import reaches
from arborparse.linear.loglinear import LogLinearTrainer, negative_log_likelihood
from arborparse.linear.model import LinearModel
from arborparse.linear.online import OnlineTrainer
from arborparse.training import keeps_best, stopwatch


def shard_ranges(n: int, shards: int) -> list[range]:
    """`shards` contiguous ranges of about equal size covering 0..n-1."""
    bounds = np.linspace(0, n, shards + 1).round().astype(int)
    return [range(a, b) for a, b in zip(bounds[:-1], bounds[1:])]


def _check(shards: int, n: int) -> None:
    if shards < 1:
        raise ArborparseError("shards must be >= 1")
    if shards > n:
        raise ArborparseError(f"{shards} shards for {n} training sentences: give at most one "
                              "shard a sentence")


# ---------------------------------------------------------------------- on the workers

def _shard_pass(trainer: OnlineTrainer, model, shard, w: np.ndarray, seed):
    """One pass over a shard from weights w: (its last weights, the sum of its weights
    over its steps, its steps, its sentences with an update)."""
    encoded, heads, labels = shard
    w0, w = w, w.copy()
    u = np.zeros_like(w)
    order = np.random.default_rng(seed).permutation(len(encoded))
    n = len(encoded)
    _, errors = trainer.one_pass(model, w, u, 1, encoded, heads, labels, order)
    return w, n * w0 + (n + 1) * (w - w0) - u, n, errors


def _mean(*results):
    """The element-wise mean of the shards' results (vectors and numbers alike), errors
    summed."""
    k = len(results)
    w = sum(r[0] for r in results) / k
    total = sum(r[1] for r in results) / k
    return w, total, sum(r[2] for r in results) / k, sum(r[3] for r in results)


def _shard_objective(C: float, projective: bool, single_root: bool, model, shard,
                     w: np.ndarray):
    """C Σ -log P(y | x) over the shard and its gradient (without the regularizer)."""
    grad = np.zeros_like(w)
    total = 0.0
    for x, heads, labels in shard:
        total += C * negative_log_likelihood(model, x, heads, labels, w, projective,
                                             single_root, grad, C)
    return total, grad


def _sum(*results):
    return sum(r[0] for r in results), sum(r[1] for r in results)


# ---------------------------------------------------------------------- on the client

class MixingTrainer:
    """Parameters
    ----------
    trainer : the `OnlineTrainer` (perceptron or MIRA) whose pass each shard runs; its
        epochs, seed, decoders and features are the job's
    shards : how many parts the training data is cut into (more than the workers is fine)
    client : a `distributed.Client` (None: the current one)

    After `fit`: ``parser_``, ``history_`` and ``best_epoch_`` as `OnlineTrainer`'s.
    """

    def __init__(self, trainer: OnlineTrainer, shards: int, client=None):
        self.trainer, self.shards, self.client = trainer, shards, client
        self.epochs, self.progress = trainer.epochs, trainer.progress
        self.extend = trainer.extend

    @property
    def tag_reach_(self):
        """The tag reach the epochs' parsers get: the inner trainer's (the loop drops it
        where dev says it costs)."""
        return self.trainer.tag_reach_

    @tag_reach_.setter
    def tag_reach_(self, value):
        self.trainer.tag_reach_ = value

    @keeps_best
    def fit(self, train: list[Sentence], dev: list[Sentence] | None = None,
            save_best=None) -> MixingTrainer:
        from distributed import get_client

        t = self.trainer
        _check(self.shards, len(train))
        client = self.client or get_client()
        labels, encoded, gold_heads, gold_labels = gold_data(train, t.single_root)
        t.reach_, t.tag_reach_ = reaches(train, t.tag_reach)
        model = t._model(encoded, gold_heads, labels)
        order = np.random.default_rng(t.seed).permutation(len(train))  # shards by chance
        parts = [[order[i] for i in r] for r in shard_ranges(len(train), self.shards)]
        shards = client.scatter([([encoded[i] for i in p], [gold_heads[i] for i in p],
                                  [gold_labels[i] for i in p]) for p in parts], hash=False)
        model_ref, trainer_ref = client.scatter([model, t], broadcast=True, hash=False)
        w = model.weights.astype(np.float64)
        total, steps = np.zeros_like(w), 0.0
        log = loop(self, dev, save_best, calibrate=True, extend=self.extend)
        for epoch in log:
            with stopwatch() as took:  # the compiling of this process alone: a worker
                # process's stays in the rate
                w_ref = client.scatter(w, broadcast=True, hash=False)
                passes = [client.submit(_shard_pass, trainer_ref, model_ref, shard, w_ref,
                                        [t.seed, epoch, k], pure=False)
                          for k, shard in enumerate(log.bar(epoch, shards))]
                w, shard_total, n, errors = client.submit(_mean, *passes,
                                                          pure=False).result()
            total += shard_total
            steps += n
            t.end_epoch(log, epoch, model, total / steps, len(train), took, errors,
                        {"shards": self.shards}, f"  ({self.shards} shards mixed)")
        log.finish()
        return self


class ShardedLogLinearTrainer(LogLinearTrainer):
    """`LogLinearTrainer` with ``optimizer="lbfgs"`` whose objective and gradient are summed
    over `shards` parts of the training data on the Dask `client` (None: the current one);
    other parameters as `LogLinearTrainer`'s."""

    def __init__(self, shards: int, client=None, **settings):
        super().__init__("lbfgs", **settings)
        self.shards, self.client = shards, client

    def _data(self, train: list[Sentence]):
        from distributed import get_client

        _check(self.shards, len(train))
        self.client = self.client or get_client()
        labels, encoded, heads, ids = gold_data(train, self.single_root, self.projective)
        data = list(zip(encoded, heads, ids))
        self._model_ref = None
        return labels, self.client.scatter([[data[i] for i in r]
                                            for r in shard_ranges(len(data), self.shards)],
                                           hash=False)

    def objective(self, model: LinearModel, data, weights: np.ndarray):
        """L(w) and its gradient, `data` the shards (scattered)."""
        client = self.client
        if self._model_ref is None:
            self._model_ref = client.scatter(model, broadcast=True, hash=False)
        w_ref = client.scatter(weights, broadcast=True, hash=False)
        parts = [client.submit(_shard_objective, self.C, self.projective, self.single_root,
                               self._model_ref, shard, w_ref, pure=False) for shard in data]
        total, grad = client.submit(_sum, *parts, pure=False).result()
        return total + 0.5 * float(weights @ weights), grad + weights
