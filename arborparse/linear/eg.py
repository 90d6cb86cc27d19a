"""Max-margin training by exponentiated gradient (Koo et al. 2007, Figure 2; Bartlett et al.
2004), for labeled arcs.

The loss is L(w) = C Σ_i max_y (E_{i,y} - m_{i,y}(w)) + ½‖w‖², with E_{i,y} the number of
words of y with a wrong head or a wrong label (a word counts once: Koo et al.'s "number of
incorrect dependencies", a dependency being a labeled arc). Each training sentence keeps
dual parameters θ_i[h, m, l] (float32, one (n+1, n+1, L) array per sentence) that define a
distribution over its labeled trees, P(y) ∝ exp Σ θ; μ_i are its marginals (Matrix-Tree or
inside-outside). Figure 2, example by example:

    θ'_i = θ_i + η C (l_i + s_i(w))          l_i[h, m, l]: errors of the labeled arc
    w   += C Σ (μ_i - μ'_i) f                (μ from θ_i, μ' from θ'_i)
    θ_i  = θ'_i;   obj += C Σ l_i μ'_i

A second-order model (Koo et al.'s framework over projective trees) also keeps θ_i over the
sentence's sibling (and grandparent) parts, (n+1, n+1, n+1) each: their loss is 0, so they
move by η C s_i(w) of the parts, and the marginals are the second-order ones
(`arborparse.linear.model.distribution`).

with θ initialized to β on the gold arcs and 0 elsewhere, w = C Σ_i (f(y_i) - E_{μ_i}[f]),
η = 1 / C (or as given), and η halved after a pass whose dual objective obj - ½‖w‖² fails
to increase.

The weights handed to dev (and saved) are, by default, the mean of every iterate w since the
first pass (as the averaged perceptron's): with η = 1/C the steps overshoot, and w swings
between two states from one pass to the next, which the mean damps. With dev, the passes go
on past `epochs` while the best dev LAS is one of the last `extend` (as the online
trainers'): the mean keeps rising for 15 to 30 passes (Turkish-IMST dev UAS at C = 0.003:
68.01 at best with the mean of each pass, restarted every pass; 68.88 with the mean of
every step; test UAS with C chosen on dev 72.02 -> 73.55; bench/RESULTS.md).

With ``primal=True`` each pass also reports the primal objective L(w) (loss-augmented
decoding of every training sentence, about the cost of a perceptron pass) and the duality
gap L(w) - dual ≥ 0, which goes to 0 as EG converges.
"""

from __future__ import annotations

import numpy as np

from arborparse import trees
from arborparse.errors import ArborparseError
from arborparse.io.conllu import Sentence
from arborparse.linear.common import check_decoders, gold_data, loop
from arborparse.linear.reach import reaches
from arborparse.linear.model import LinearModel, distribution
from arborparse.linear.options import LinearOptions
from arborparse.linear.parser import LinearParser
from arborparse.training import compiling_said, keeps_best, stopwatch


GRID = (0.001, 0.003, 0.01)  # of C, for `ChooseC`
DEFAULT_C = 0.003  # the best of GRID on three UD treebanks' dev sets
D = LinearOptions()  # the defaults


class EGTrainer:
    """Train a linear parser as a max-margin model by exponentiated gradient.

    Parameters
    ----------
    C : regularization constant; the default, 0.003, was the best of {0.001, 0.003, 0.01}
        on the development sets of English-EWT, Gothic-PROIEL and Turkish-IMST
        (bench/RESULTS.md); `ChooseC` with `GRID` chooses it on development data
    learning_rate : the initial η (default 1 / C, as in the paper); every dual step moves θ
        by η C (l + s), so η C < 1 takes smaller steps
    epochs : passes over the training data; the pass with the best development LAS is kept
    extend : with dev, more passes while the best is one of the last `extend` (at most
        `arborparse.training.EXTENDED` times `epochs` in all; 0: stop at `epochs`)
    beta : initial dual parameter of the gold arcs (9 in the paper)
    decoder, train_decoder, single_root, hash_bits, progress : as in `OnlineTrainer`;
        ``train_decoder="eisner"`` uses projective marginals (and projectivized gold trees)

    order, second_order : as `LinearModel`'s; order 2 trains over projective trees
    primal : also compute the primal objective and the duality gap after every pass (order
        1)
    average : hand dev (and the model file) the mean of the weights of every step so far
        (default), or the weights at the end of the pass
    tag_reach : as `OnlineTrainer`'s

    After `fit`: ``parser_``, ``history_`` (with the dual objective and learning rate of each
    pass, and the primal objective and gap if asked), ``best_epoch_`` and ``dual_bytes_``
    (memory held by the θ arrays).
    """

    def __init__(self, C: float = DEFAULT_C, epochs: int = 10, beta: float = 9.0,
                 decoder: str = "mst", train_decoder: str | None = None,
                 single_root: bool = True, hash_bits: int = 23, progress: bool = True,
                 primal: bool = False, learning_rate: float | None = None,
                 average: bool = True, order: int = D.order,
                 second_order: str = D.second_order, tag_reach: bool = D.tag_reach,
                 extend: int = D.extend):
        self.train_decoder = check_decoders(decoder, train_decoder)
        if epochs < 1 or extend < 0 or not (C > 0) or not 10 <= hash_bits <= 31:
            raise ArborparseError("epochs must be >= 1, extend >= 0, C > 0, hash_bits in "
                                  "10..31")
        if learning_rate is not None and not (learning_rate > 0):
            raise ArborparseError("the learning rate must be > 0")
        if primal and order == 2:
            raise ArborparseError("the primal objective is computed for order 1 only")
        LinearOptions(trainer="eg", order=order, second_order=second_order,
                      train_decoder=train_decoder)  # refuses what order 2 cannot honour
        self.C = C
        self.epochs, self.extend = epochs, extend
        self.beta = beta
        self.decoder = decoder
        self.single_root = single_root
        self.hash_bits = hash_bits
        self.progress = progress
        self.primal = primal
        self.average = average
        self.learning_rate = 1.0 / C if learning_rate is None else learning_rate
        self.order, self.second_order = order, second_order
        self.tag_reach = tag_reach

    @property
    def projective(self) -> bool:
        return self.train_decoder == "eisner" or self.order == 2

    def _marginals(self, theta: list) -> list:
        """[μ, μ_sib, μ_grand] of the distribution of dual parameters theta = [θ, θ_sib,
        θ_grand] (None where the model has no such parts)."""
        arcs, sib, grand = (None if t is None else t.astype(np.float64) for t in theta)
        return list(distribution(arcs, sib, grand, self.projective, self.single_root)[1:])

    @staticmethod
    def _add(model: LinearModel, x, D: list, out: np.ndarray) -> None:
        """out += Σ D f: D = [arcs (n+1, n+1, L), sibling parts, grandparent parts]."""
        model.add_expectations(x, D[0], out)
        if D[1] is not None:
            model.add_part_expectations(x, D[1], D[2], out)

    def primal_objective(self, model: LinearModel, w: np.ndarray, encoded, heads, ids,
                         losses) -> float:
        """L(w) = C Σ_i max_y (E_{i,y} - m_{i,y}(w)) + ½‖w‖², the max by loss-augmented
        decoding over the training class of trees."""
        hinge = 0.0
        for x, h, lab, loss in zip(encoded, heads, ids, losses):
            S = model.labeled_scores(x, w)
            augmented = S + loss
            worst, worst_labels = (trees.eisner if self.projective else trees.mst)(
                augmented, single_root=self.single_root)
            m = np.arange(1, len(h))
            hinge += float(augmented[worst[1:], m, worst_labels[1:]].sum()
                           - S[h[1:], m, lab[1:]].sum())
        return self.C * hinge + 0.5 * float(w @ w)

    @keeps_best
    def fit(self, train: list[Sentence], dev: list[Sentence] | None = None,
            save_best=None) -> EGTrainer:
        """Train on `train`, select the best pass on `dev`; return self.
        `save_best`: a path where the best parser is saved as soon as it is best."""
        labels, encoded, heads, ids = gold_data(train, self.single_root, self.projective)
        self.reach_, self.tag_reach_ = reaches(train, self.tag_reach, self.single_root,
                                               self.projective)
        model = LinearModel.hashing(self.hash_bits, labels, order=self.order,
                                    second_order=self.second_order)
        w = model.weights
        L = len(labels)
        thetas, losses = [], []
        for x, h, lab in zip(encoded, heads, ids):
            N = len(h)
            m = np.arange(1, N)
            gold = np.zeros((N, N, L))
            gold[h[1:], m, lab[1:]] = 1.0
            # the error of the labeled arc h' -> m with l: [h' wrong or l wrong]
            head_wrong = np.arange(N)[:, None] != h[None, :]
            label_wrong = np.arange(L)[None, :] != lab[:, None]
            loss = (head_wrong[:, :, None] | label_wrong[None, :, :]).astype(np.float32)
            theta = [np.zeros((N, N, L), dtype=np.float32), None, None]
            theta[0][h[1:], m, lab[1:]] = self.beta
            for j, parts in ((1, model.order == 2), (2, model.grandparents)):
                if parts:
                    theta[j] = np.zeros((N, N, N), dtype=np.float32)
            mu = self._marginals(theta)
            self._add(model, x, [self.C * (gold - mu[0])] +
                      [None if d is None else -self.C * d for d in mu[1:]], w)
            np.add.at(w, model.tree_part_features(x, h, every_part=True), self.C)
            thetas.append(theta)
            losses.append(loss)
        self.dual_bytes_ = sum(t.nbytes for theta in thetas for t in theta if t is not None)
        eta = self.learning_rate
        previous = -np.inf
        log = loop(self, dev, save_best, calibrate=True, extend=self.extend)
        u = np.zeros_like(w) if self.average else None  # Σ step number × update
        steps = 1
        for epoch in log:
            obj = 0.0
            with stopwatch() as took:
                for i in log.bar(epoch, range(len(encoded))):
                    x, theta, loss = encoded[i], thetas[i], losses[i]
                    S = model.labeled_scores(x, w)
                    valid = np.isfinite(S)
                    step = np.where(valid, eta * self.C * (loss + np.where(valid, S, 0.0)), 0.0)
                    new = [(theta[0] + step).astype(np.float32)] + [
                        None if t is None else (t + eta * self.C * s).astype(np.float32)
                        for t, s in zip(theta[1:], model.part_scores(x, w, marginals=True,
                                                                    every_part=True))]
                    mu, mu_new = self._marginals(theta), self._marginals(new)
                    update = [None if a is None else self.C * (a - b) for a, b in zip(mu, mu_new)]
                    self._add(model, x, update, w)
                    if u is not None:
                        self._add(model, x, [None if d is None else steps * d for d in update], u)
                        steps += 1
                    thetas[i] = new
                    obj += self.C * float((loss * mu_new[0]).sum())
            obj -= 0.5 * float(w @ w)
            record = {"seconds": took["seconds"], "compiling_seconds": took["compiling"],
                      "dual_objective": obj, "learning_rate": eta}
            if self.primal:
                record["primal_objective"] = self.primal_objective(model, w, encoded, heads,
                                                                   ids, losses)
                record["duality_gap"] = record["primal_objective"] - obj
            if obj < previous:
                eta /= 2.0
            previous = obj
            kept = w if u is None else w - u / steps  # the mean of w over every step
            parser = LinearParser(model.like(kept.astype(np.float32)), self.decoder,
                                  self.single_root, reach=self.reach_, tag_reach=self.tag_reach_)
            log.end(epoch, record,
                    f"{record['seconds']:.1f}s{compiling_said(took)}  dual objective {obj:.2f}  "
                    f"eta {eta:.3g}", parser)
        return self
