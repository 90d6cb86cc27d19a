"""Conditional log-linear (CRF) training of the linear model (Koo et al. 2007, §4.1).

    L(w) = C Σ_i -log P(y_i | x_i; w) + ½‖w‖²,   P(y | x; w) ∝ exp Σ_{(h,m,l) ∈ y} s(h, m, l)

over non-projective trees (Matrix-Tree Theorem) or projective trees (inside-outside),
single- or multi-root, labels summed out (§3.4). The gradient of -log P(y | x) is
E[f] - f(y): the arc and label marginals minus the gold tree's indicator, scattered onto
the features (`LinearModel.add_expectations`). Projective training projectivizes
the gold trees first (footnote 4), since a non-projective tree has probability 0 there.

Optimizers: ``lbfgs``, batch L-BFGS from scipy (Sha & Pereira 2003), one full pass per
function evaluation; ``sgd``, online stochastic gradient (Smith & Smith 2007, §3.3) with
learning rate η_t = η / (1 + t / N) and the regularizer spread over the N examples,
kept cheap by storing w = a·v (the decay multiplies the scalar a).

Hidden-variable training (Smith & Smith 2007, §5): with K > 1 clusters the model sums a
hidden cluster out of every arc (`LinearModel`), the objective becomes the marginal
likelihood Σ_i log Σ_z P(y_i, z | x_i) (Eq. 17), non-convex, and its gradient the same
expectations with each arc's features of cluster z weighted by P(z | arc) (the gold
tree's arcs by the same posterior). The weights start as seeded Gaussian noise
(`init_noise`) to break the symmetry between the clusters.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.optimize import minimize

from arborparse.errors import ArborparseError
from arborparse.io.conllu import Sentence
from arborparse.linear.common import check_decoders, gold_data, loop
from arborparse.linear.reach import kept_tag_reach, reaches
from arborparse.linear.model import Encoded, LinearModel, distribution
from arborparse.linear.options import DECODERS, LinearOptions
from arborparse.linear.parser import LinearParser
from arborparse.linear.templates import FEATURES
from arborparse.training import Loop, compiling_said, keeps_best, stopwatch

OPTIMIZERS = ("sgd", "lbfgs")


def negative_log_likelihood(model: LinearModel, x: Encoded, heads: np.ndarray,
                            labels: np.ndarray, weights: np.ndarray, projective: bool,
                            single_root: bool, grad: np.ndarray, factor: float = 1.0,
                            scale: float = 1.0) -> float:
    """-log P(heads, labels | x) (clusters summed out) under the weights scale ×
    `weights`; adds factor × its gradient to grad. A second-order model's trees are
    projective (`arborparse.linear.model.distribution`)."""
    S, posteriors = model.labeled_scores(x, weights, scale, posteriors=True)
    sib, grand = model.part_scores(x, weights, scale, marginals=True, every_part=True)
    logZ, mu, mu_sib, mu_grand = distribution(S, sib, grand, projective, single_root)
    m = np.arange(1, len(heads))
    gold = S[heads[1:], m, labels[1:]].sum()
    mu[heads[1:], m, labels[1:]] -= 1.0
    model.add_expectations(x, factor * mu, grad, posteriors)
    if sib is not None:
        parts = model.tree_part_features(x, heads, every_part=True)
        gold += scale * weights[parts].sum()
        model.add_part_expectations(x, factor * mu_sib,
                                    None if mu_grand is None else factor * mu_grand, grad)
        np.subtract.at(grad, parts, factor)
    return float(logZ - gold)


GRID = (0.1, 0.3, 1.0)  # of C, for `ChooseC`
DEFAULT_C = 0.3  # the best of GRID on three UD treebanks' dev sets
LEARNING_RATE = 0.1  # η of sgd
D = LinearOptions()  # the defaults


class LogLinearTrainer:
    """Train a linear parser as a conditional log-linear model.

    Parameters
    ----------
    optimizer : ``"sgd"`` (online) or ``"lbfgs"`` (batch)
    C : weight of the data term against ½‖w‖²; the default, 0.3, was the best of
        {0.1, 0.3, 1} on the development sets of English-EWT, Gothic-PROIEL and
        Turkish-IMST (bench/RESULTS.md); `ChooseC` with `GRID` chooses it on development data
    epochs : passes over the data (sgd) or L-BFGS iterations (lbfgs)
    learning_rate : η of sgd
    decoder, train_decoder, single_root, seed, hash_bits, progress : as in `OnlineTrainer`;
        ``train_decoder="eisner"`` trains the projective distribution; checkpoint, resume:
        as in `OnlineTrainer`, for sgd
    clusters : hidden clusters per arc (1: the plain log-linear model)
    init_noise : standard deviation of the initial weights (0: all zero); needed, with
        clusters, to break their symmetry
    squeeze : drop the arc templates pairing both words and the POS four-grams (to squeeze
        lexical information through the clusters, Smith & Smith §5.2)
    order, second_order : as `LinearModel`'s; order 2 trains the distribution over
        projective trees (second-order marginals are projective), whatever the decoders
    tag_reach : as `OnlineTrainer`'s

    After `fit`: ``parser_``, ``history_`` and ``best_epoch_``: the epoch (sgd) or L-BFGS
    iteration (lbfgs) with the best development LAS, or the last one without dev data.
    """

    def __init__(self, optimizer: str = "lbfgs", C: float = DEFAULT_C, epochs: int = D.epochs,
                 learning_rate: float = LEARNING_RATE, decoder: str = DECODERS[0],
                 train_decoder: str | None = D.train_decoder,
                 single_root: bool = not D.multi_root, seed: int = D.seed,
                 hash_bits: int = D.hash_bits, progress: bool = True, clusters: int = 1,
                 init_noise: float = 0.0, squeeze: bool = D.squeeze, order: int = D.order,
                 second_order: str = D.second_order, checkpoint=None, resume: bool = False,
                 tag_reach: bool = D.tag_reach):
        if optimizer not in OPTIMIZERS:
            raise ArborparseError(f"unknown optimizer {optimizer!r}; choose one of {OPTIMIZERS}")
        self.train_decoder = check_decoders(decoder, train_decoder)
        if epochs < 1 or not (C > 0) or not (learning_rate > 0) or not 10 <= hash_bits <= 31:
            raise ArborparseError("epochs >= 1, C > 0, learning rate > 0, hash_bits in 10..31")
        if clusters < 1 or not (init_noise >= 0):
            raise ArborparseError("clusters >= 1 and init_noise >= 0")
        trainer = {("sgd", False): "loglinear-sgd", ("lbfgs", False): "loglinear",
                   ("sgd", True): "latent", ("lbfgs", True): "latent-lbfgs"}[
            optimizer, clusters > 1]
        LinearOptions(trainer=trainer, order=order, second_order=second_order,
                      train_decoder=train_decoder)  # refuses what order 2 cannot honour
        self.optimizer = optimizer
        self.C = C
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.decoder = decoder
        self.single_root = single_root
        self.seed = seed
        self.hash_bits = hash_bits
        self.progress = progress
        self.clusters = clusters
        self.init_noise = init_noise
        self.squeeze = squeeze
        self.order, self.second_order = order, second_order
        self.tag_reach = tag_reach
        self.checkpoint, self.resume = checkpoint, resume

    @property
    def settings(self) -> dict:
        """What a resumed training must share with the checkpoint."""
        return {**{k: getattr(self, k) for k in (
            "optimizer", "C", "learning_rate", "decoder", "train_decoder", "single_root",
            "seed", "hash_bits", "clusters", "init_noise", "squeeze", "order", "second_order",
            "tag_reach")}, "features": FEATURES}

    @property
    def projective(self) -> bool:
        return self.train_decoder == "eisner" or self.order == 2

    def _data(self, train: list[Sentence]):
        labels, encoded, heads, ids = gold_data(train, self.single_root, self.projective)
        return labels, list(zip(encoded, heads, ids))

    def objective(self, model: LinearModel, data, weights: np.ndarray):
        """L(w) and its gradient over the whole training data (any iterable of prepared
        sentences)."""
        grad = weights.copy()
        total = 0.5 * float(weights @ weights)
        for x, heads, labels in data:
            total += self.C * negative_log_likelihood(model, x, heads, labels, weights,
                                                      self.projective, self.single_root, grad,
                                                      self.C)
        return total, grad

    def _lbfgs(self, model: LinearModel, data, w0: np.ndarray, log: Loop, parser):
        """Batch training: each L-BFGS iteration is an "epoch" of `log` (its parser is
        evaluated on dev and kept if best); the bar counts the sentences of the function
        and gradient evaluations."""
        iteration, start = 1, time.perf_counter()

        def objective(w):
            return self.objective(model, log.bar(iteration, data), w)

        def end_of_iteration(intermediate_result):
            nonlocal iteration, start
            elapsed, value = time.perf_counter() - start, float(intermediate_result.fun)
            log.end(iteration, {"seconds": elapsed, "objective": value},
                    f"{elapsed:.1f}s  objective {value:.2f}", parser(intermediate_result.x))
            iteration, start = iteration + 1, time.perf_counter()

        minimize(objective, w0, jac=True, method="L-BFGS-B", callback=end_of_iteration,
                 options={"maxiter": self.epochs})
        if self.best_epoch_ is None:  # converged before a first iteration ended
            log.end(1, {"seconds": 0.0, "objective": objective(w0)[0]},
                    "converged at the start", parser(w0))

    @keeps_best
    def fit(self, train: list[Sentence], dev: list[Sentence] | None = None,
            save_best=None) -> LogLinearTrainer:
        """Train on `train`, select the best epoch (or iteration) on `dev`; return self.
        `save_best`: a path where the best parser is saved as soon as it is best."""
        labels, data = self._data(train)
        model = LinearModel.hashing(self.hash_bits, labels, self.clusters, self.squeeze,
                                    self.order, self.second_order)
        w0 = model.weights
        if self.init_noise > 0:
            w0 = self.init_noise * np.random.default_rng([self.seed, 1]).standard_normal(
                w0.shape[0])

        self.reach_, self.tag_reach_ = reaches(train, self.tag_reach, self.single_root,
                                               self.projective)

        def parser(weights):
            return LinearParser(model.like(weights.astype(np.float32)), self.decoder,
                                self.single_root, reach=self.reach_, tag_reach=self.tag_reach_)

        if self.optimizer == "lbfgs":
            if self.resume:
                raise ArborparseError("L-BFGS training cannot resume (its state is "
                                      "scipy's); start it again")
            self._lbfgs(model, data, w0, loop(self, dev, save_best), parser)
            return self
        log = loop(self, dev, save_best, checkpoint=self.checkpoint, resume=self.resume,
                   settings=self.settings, may_change=("epochs", "progress"))
        scale, v = 1.0, w0
        rng = np.random.default_rng(self.seed)
        N, step = len(data), 0
        saved = log.resume()
        if saved is not None:
            header, arrays = saved
            scale, v, step = float(header["scale"]), arrays["v"].copy(), int(header["step"])
            rng.bit_generator.state = header["rng"]
            self.parser_ = parser(arrays["best"])
            kept_tag_reach(self, header)

        def state():
            return ({"scale": scale, "step": step, "rng": rng.bit_generator.state,
                     "tag_reach": self.parser_.tag_reach is not None},
                    {"v": v, "best": self.parser_.model.weights})

        for epoch in log:
            loss = 0.0
            with stopwatch() as took:
                for i in log.bar(epoch, rng.permutation(N)):
                    x, heads, gold_labels = data[i]
                    eta = self.learning_rate / (1.0 + step / N)
                    # w = scale * v: w <- (1 - eta / N) w - eta C grad(w) becomes a new
                    # scale and a sparse step on v
                    old = scale
                    scale *= 1.0 - eta / N
                    loss += negative_log_likelihood(model, x, heads, gold_labels, v,
                                                    self.projective, self.single_root, v,
                                                    -eta * self.C / scale, old)
                    if scale < 1e-6:
                        v *= scale
                        scale = 1.0
                    step += 1
            log.end(epoch, {"seconds": took["seconds"], "compiling_seconds": took["compiling"],
                            "negative_log_likelihood": loss},
                    f"{took['seconds']:.1f}s{compiling_said(took)}  NLL {loss:.1f}",
                    parser(scale * v), state=state)
        log.finish()
        return self
