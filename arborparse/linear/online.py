"""Online large-margin training of the linear model (McDonald et al. 2005, Figure 4).

- ``perceptron``: the averaged perceptron (Collins 2002): w += f(gold) - f(best).
- ``mira``: single-best MIRA, the closed form for one constraint
  s(gold) - s(best) >= loss(best), step min(C, max(0, (loss - margin) / ‖Δf‖²)) (Hildreth's
  algorithm on the 1 x 1 program, which is this).
- ``mira-kbest``: k constraints from the exact k best trees, solved by Hildreth's algorithm.
- ``mira-factored``: the edge constraints of §3.2, s(gold arc into m) - s(other arc into m)
  >= 1, for every word m and every other (head, best label) of m; those violated under
  the current weights (margin < 1) enter Hildreth's algorithm.

The loss is the number of words with a wrong head plus the number with a wrong label.
A second-order model (the perceptron and single-best MIRA; McDonald & Pereira 2006)
decodes with the second-order decoders and its updates also count the features of the
trees' sibling (and grandparent) parts.
Weights are averaged over every step (Figure 4, line 5) with the usual trick: alongside w
keep u = Σ_t t Δ_t; the average after T steps is w - u / T.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from arborparse.errors import ArborparseError
from arborparse.io.conllu import Sentence
from arborparse.linear.common import check_decoders, gold_data, loop
from arborparse.linear.reach import kept_tag_reach, reaches
from arborparse.linear.hildreth import hildreth
from arborparse.linear.model import LinearModel, Scores, decode, gold_feature_keys
from arborparse.linear.options import ONLINE as TRAINERS
from arborparse.linear.options import DECODERS, LinearOptions
from arborparse.linear.parser import LinearParser
from arborparse.linear.templates import FEATURES
from arborparse.trees import kbest
from arborparse.trees.scores import arc_labels
from arborparse.training import Loop, compiling_said, keeps_best, stopwatch

D = LinearOptions()  # the defaults


def _loss(heads, labels, gold_h, gold_l) -> int:
    """The words with a wrong head plus those with a wrong label (the root excluded)."""
    return int((heads != gold_h)[1:].sum() + (labels != gold_l)[1:].sum())


def _sparse_rows(idx: np.ndarray, ptr: np.ndarray, signs: np.ndarray, size: int):
    """A CSR matrix with one row per group of indices, each entry signs[group]."""
    rows = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    return sp.csr_matrix((signs[rows].astype(np.float64), (rows, idx)),
                         shape=(len(ptr) - 1, size))


class OnlineTrainer:
    """Train a linear parser with an online large-margin algorithm.

    Parameters
    ----------
    trainer : ``"perceptron"``, ``"mira"``, ``"mira-kbest"`` or ``"mira-factored"``
    epochs : passes over the training data; the epoch with the best development LAS
        (UAS for unlabeled data) is kept
    extend : with dev, more passes while the best is one of the last `extend`
        (`arborparse.training.Loop`'s)
    decoder : ``"mst"`` (non-projective) or ``"eisner"`` (projective), used for parsing
    train_decoder : the decoder used during training (default: `decoder`)
    single_root : trees with exactly one word attached to the root (as UD requires)
    seed : shuffling seed; training is reproducible bit for bit
    hash_bits : log2 of the hashed weight vector's size
    exact_features : index the features of the gold training trees exactly instead of
        hashing (a dictionary; slower to build, no collisions)
    k : constraints of ``mira-kbest``
    order, second_order : as `LinearModel`'s (order 2: perceptron and mira, hashed
        features)
    C : bound on the MIRA step sizes (``inf``: hard constraints, as McDonald et al.)
    progress : show a progress bar on stderr
    checkpoint : where the weights are written after every epoch (None: nowhere)
    resume : continue from `checkpoint`
    tag_reach : give the parser the tag reach of the training trees
        (`arborparse.linear.reach.TagReach`; with dev, kept where it costs no dev LAS)

    The defaults are `LinearOptions`' (the family's option table). After `fit`:
    ``parser_`` (the best epoch's `LinearParser`), ``history_`` (one dict per
    epoch) and ``best_epoch_``.
    """

    def __init__(self, trainer: str = D.trainer, epochs: int = D.epochs,
                 decoder: str = DECODERS[0], train_decoder: str | None = D.train_decoder,
                 single_root: bool = not D.multi_root, seed: int = D.seed,
                 hash_bits: int = D.hash_bits, exact_features: bool = D.exact_features,
                 k: int = D.k, C: float = math.inf, order: int = D.order,
                 second_order: str = D.second_order, progress: bool = True, checkpoint=None,
                 resume: bool = False, tag_reach: bool = D.tag_reach, extend: int = D.extend):
        if trainer not in TRAINERS:
            raise ArborparseError(f"unknown trainer {trainer!r}; choose one of {TRAINERS}")
        self.train_decoder = check_decoders(decoder, train_decoder)
        if epochs < 1 or k < 1 or not (C > 0) or not (10 <= hash_bits <= 31):
            raise ArborparseError("epochs and k must be >= 1, C > 0, hash_bits in 10..31")
        LinearOptions(trainer=trainer, exact_features=exact_features, order=order,
                      second_order=second_order)  # refuses what order 2 cannot honour
        self.trainer = trainer
        self.epochs, self.extend = epochs, extend
        self.decoder = decoder
        self.single_root = single_root
        self.seed = seed
        self.hash_bits = hash_bits
        self.exact_features = exact_features
        self.k = k
        self.C = C
        self.order, self.second_order = order, second_order
        self.tag_reach = tag_reach
        self.progress = progress
        self.checkpoint, self.resume = checkpoint, resume

    @property
    def settings(self) -> dict:
        """What a resumed training must share with the checkpoint."""
        return {"trainer": self.trainer, "decoder": self.decoder,
                "train_decoder": self.train_decoder, "single_root": self.single_root,
                "seed": self.seed, "hash_bits": self.hash_bits,
                "exact_features": self.exact_features, "k": self.k, "C": self.C,
                "order": self.order, "second_order": self.second_order,
                "tag_reach": self.tag_reach, "features": FEATURES}

    # ------------------------------------------------------------------ set-up

    def _model(self, encoded, heads, labels) -> LinearModel:
        if not self.exact_features:
            return LinearModel.hashing(self.hash_bits, labels, order=self.order,
                                       second_order=self.second_order)
        return LinearModel.dictionary(*gold_feature_keys(encoded, heads), labels)

    # ----------------------------------------------------------------- updates

    def _delta(self, model, x, gold_h, gold_l, heads, labels):
        """f(gold) - f(tree) as (indices, values): the arcs of the words where they
        differ, and every second-order part of both trees (those they share cancel)."""
        diff = np.flatnonzero((gold_h != heads) | (gold_l != labels))
        diff = diff[diff > 0]
        plus, _ = model.arc_features(x, gold_h[diff], diff, gold_l[diff])
        minus, _ = model.arc_features(x, heads[diff], diff, labels[diff])
        plus = np.concatenate([plus, model.tree_part_features(x, gold_h)])
        minus = np.concatenate([minus, model.tree_part_features(x, heads)])
        idx = np.concatenate([plus, minus])
        vals = np.concatenate([np.ones(len(plus)), -np.ones(len(minus))])
        uniq, inverse = np.unique(idx, return_inverse=True)
        sums = np.bincount(inverse, weights=vals, minlength=len(uniq))
        keep = sums != 0
        return uniq[keep], sums[keep]

    def _step(self, model, x, w, scores: Scores, gold_h, gold_l):
        """The update of w on one sentence, as (columns, step): w[columns] += step; None
        where no constraint is active."""
        if self.trainer in ("perceptron", "mira"):
            heads, labels = decode(scores, self.train_decoder, self.single_root)
            loss = _loss(heads, labels, gold_h, gold_l)
            if loss == 0:
                return None
            idx, vals = self._delta(model, x, gold_h, gold_l, heads, labels)
            if self.trainer == "perceptron":
                return idx, vals
            # one constraint: Hildreth's algorithm on its 1 x 1 program, no sparse matrices
            alpha = hildreth(np.array([[vals @ vals]]), np.array([loss - vals @ w[idx]]),
                             self.C)
            return idx, alpha[0] * vals
        A, b = self._constraints(model, x, w, scores, gold_h, gold_l)
        if A is None:
            return None
        # the columns the constraints touch, renumbered 0..U-1
        columns, local = np.unique(A.indices, return_inverse=True)
        rows = sp.csr_matrix((A.data, local, A.indptr), shape=(A.shape[0], len(columns)))
        return columns, rows.T @ hildreth((rows @ rows.T).toarray(), b, self.C)

    def _constraints(self, model, x, w, scores: Scores, gold_h, gold_l):
        """The rows a_j of the active constraints and their violations b_j (mira-kbest,
        mira-factored)."""
        if self.trainer == "mira-factored":
            return self._factored(model, x, w, scores, gold_h, gold_l)
        found = kbest(scores.total, self.k, self.train_decoder == "eisner", self.single_root)
        rows, b = [], []
        for _, heads in found:
            labels = arc_labels(scores.label, heads)
            loss = _loss(heads, labels, gold_h, gold_l)
            if loss == 0:
                continue
            idx, vals = self._delta(model, x, gold_h, gold_l, heads, labels)
            rows.append(sp.csr_matrix((vals, (np.zeros(len(idx), dtype=np.int64), idx)),
                                      shape=(1, len(w))))
            b.append(loss - float(vals @ w[idx]))
        if not rows:
            return None, None
        return sp.vstack(rows, format="csr"), np.array(b)

    def _factored(self, model, x, w, scores: Scores, gold_h, gold_l):
        n = len(gold_h) - 1
        words = np.arange(1, n + 1)
        gold_idx, gold_ptr = model.arc_features(x, gold_h[1:], words, gold_l[1:])
        owner = np.repeat(np.arange(n), np.diff(gold_ptr))
        gold_score = np.bincount(owner, weights=w[gold_idx], minlength=n)
        total = scores.total
        hs, ms, ls = [], [], []
        for m in words:
            g = gold_h[m]
            margin = gold_score[m - 1] - total[:, m]
            for h in np.flatnonzero(margin < 1.0):
                if h == m or (h == g and scores.label[h, m] == gold_l[m]):
                    continue
                hs.append(h)
                ms.append(m)
                ls.append(scores.label[h, m])
        if not hs:
            return None, None
        hs, ms, ls = np.array(hs), np.array(ms), np.array(ls)
        comp_idx, comp_ptr = model.arc_features(x, hs, ms, ls)
        V = len(hs)
        comp = _sparse_rows(comp_idx, comp_ptr, -np.ones(V), len(w))
        gold_rows = _sparse_rows(gold_idx, gold_ptr, np.ones(n), len(w))
        A = (gold_rows[ms - 1] + comp).tocsr()
        A.sum_duplicates()
        b = 1.0 - A @ w
        return A, b

    # --------------------------------------------------------------- training

    def one_pass(self, model, w, u, steps: int, encoded, gold_heads, gold_labels, order):
        """Update w in place on the sentences of `order`, one after the other, and u (the
        sum of step number × update, for averaging) from step number `steps`; return (the
        next step number, the sentences with an update)."""
        errors = 0
        for i in order:
            x = encoded[i]
            update = self._step(model, x, w, model.scores(x, w), gold_heads[i],
                                gold_labels[i])
            if update is not None:
                errors += 1
                columns, step = update
                w[columns] += step
                u[columns] += steps * step
            steps += 1
        return steps, errors

    @keeps_best
    def fit(self, train: list[Sentence], dev: list[Sentence] | None = None,
            save_best=None) -> OnlineTrainer:
        """Train on `train`, select the best epoch on `dev` (or keep the last); return self.
        `save_best`: a path where the best parser is saved as soon as it is best. With
        ``checkpoint``, the weights are written there after every epoch, and ``resume``
        continues from them."""
        labels, encoded, gold_heads, gold_labels = gold_data(train, self.single_root)
        self.reach_, self.tag_reach_ = reaches(train, self.tag_reach)
        model = self._model(encoded, gold_heads, labels)
        w = model.weights
        u = np.zeros_like(w)
        steps = 1
        rng = np.random.default_rng(self.seed)
        log = self.loop(dev, save_best)
        saved = log.resume()
        if saved is not None:
            header, arrays = saved
            w[:], u[:], steps = arrays["w"], arrays["u"], int(header["steps"])
            rng.bit_generator.state = header["rng"]
            self.parser_ = self._parser(model, arrays["best"], header["temperature"],
                                        header.get("label_temperature"))
            kept_tag_reach(self, header)

        def state():
            return ({"steps": steps, "rng": rng.bit_generator.state,
                     "temperature": self.parser_.temperature,
                     "label_temperature": self.parser_.label_temperature,
                     "tag_reach": self.parser_.tag_reach is not None},
                    {"w": w, "u": u, "best": self.parser_.model.weights})

        for epoch in log:
            with stopwatch() as took:
                steps, errors = self.one_pass(model, w, u, steps, encoded, gold_heads,
                                              gold_labels,
                                              log.bar(epoch, rng.permutation(len(train))))
            self.end_epoch(log, epoch, model, w - u / steps, len(train), took, errors,
                           state=state)
        log.finish()
        return self

    def loop(self, dev, save_best) -> Loop:
        """The epoch loop, calibrated on dev, with the checkpoint if one was asked for."""
        return loop(self, dev, save_best, calibrate=True, checkpoint=self.checkpoint,
                    settings=self.settings, may_change=("epochs", "extend", "progress"),
                    resume=self.resume, extend=self.extend)

    def _parser(self, model, weights, temperature: float = 1.0,
                label_temperature: float | None = None) -> LinearParser:
        # float32, as saved: the parser evaluated on dev is exactly the one in the file
        return LinearParser(model.like(weights.astype(np.float32)), self.decoder,
                            self.single_root, temperature, reach=self.reach_,
                            tag_reach=self.tag_reach_, label_temperature=label_temperature)

    def end_epoch(self, log: Loop, epoch: int, model, average: np.ndarray,
                  sentences: int, took: dict, errors: int, more: dict | None = None,
                  note: str = "", state=None) -> None:
        """Hand the epoch's parser, from the averaged weights, to `log` (dev scores, the
        best kept) with the epoch's record (`more` added) and line (`note` added); `took`:
        the epoch's `stopwatch` (its rate leaves out the compiling)."""
        parser = self._parser(model, average)
        elapsed, compiling = took["seconds"], took["compiling"]
        rate = sentences / max(elapsed - compiling, 1e-3)
        log.end(epoch, {"seconds": elapsed, "compiling_seconds": compiling,
                        "sentences_per_second": rate, "train_errors": errors,
                        **(more or {})},
                f"{elapsed:.1f}s{compiling_said(took)}  {rate:.0f} sent/s  sentences with "
                f"updates {errors}{note}", parser, state=state)
