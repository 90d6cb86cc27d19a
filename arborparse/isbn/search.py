"""Beam search for the ISBN parser (spec §8): a best-first search within each round that ends
with a Shift, the beam keeping the B best items after each Shift, with label pruning (only
the K most probable labels of an arc are expanded).

The network's weights are copied into numpy arrays: one state costs an input sum, seven
H×H products and the rows of the output layers it needs, without framework overhead.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass

import numpy as np

from arborparse.isbn.history import RELATIONS, History, Inputs, Tokens
from arborparse.isbn.network import MF_DAMPING, MF_ITERATIONS, MF_TOLERANCE, Network
from arborparse.isbn.transitions import LA, RA, RED, SHIFT


def _log_softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max()
    return z - np.log(np.exp(z).sum())


class Scorer:
    """The network in numpy, one state at a time."""

    def __init__(self, net: Network):
        def array(t):
            return t.detach().cpu().numpy().astype(np.float64)

        self.inputs = array(net.inputs)
        self.bias = array(net.bias)
        # the relation matrices side by side, (H, 7H): one product per state
        self.relations = None if net.relations is None else \
            np.ascontiguousarray(np.concatenate(list(array(net.relations)), axis=1))
        self.zeros = np.zeros(net.hidden)
        self.layers = {name: (array(W[:, :-1]), array(W[:, -1]))
                       for name, W in net.layers.items()}
        self.feat_start = net.feat_start.cpu().numpy()
        self.feat_stop = net.feat_stop.cpu().numpy()
        self.first_cell = net.first_cell.cpu().numpy()
        self.cell_start = net.cell_start.cpu().numpy()
        self.cell_stop = net.cell_stop.cpu().numpy()
        self.mean_field = net.approximation == "mf"

    def mean(self, rows: list[int], parents: list[np.ndarray | None]) -> np.ndarray:
        eta = self.bias + self.inputs[rows].sum(axis=0)
        if self.relations is not None:
            eta += self.relations @ np.concatenate([self.zeros if mu is None else mu
                                                    for mu in parents])
        return 1.0 / (1.0 + np.exp(-eta))

    def log_probs(self, name: str, mu: np.ndarray, start: int = 0, stop: int | None = None):
        W, b = self.layers[name]
        return _log_softmax(W[start:stop] @ mu + b[start:stop])

    def update(self, m: np.ndarray, name: str, chosen: int, start: int = 0,
               stop: int | None = None, rows=None) -> np.ndarray:
        """The means after a decision (mean field; the same means under feed-forward):
        `chosen` among rows[start:stop] of the layer, or among `rows`."""
        W, b = self.layers[name]
        W, b = (W[rows], b[rows]) if rows is not None else (W[start:stop], b[start:stop])
        if not self.mean_field or len(b) == 1:
            return m
        m = np.clip(m, 1e-12, 1 - 1e-12)
        target = np.log(m) - np.log1p(-m) + W[chosen]
        for _ in range(MF_ITERATIONS):
            z = W @ m + b
            p = np.exp(z - z.max())
            p /= p.sum()
            step = MF_DAMPING * m + (1 - MF_DAMPING) / (1 + np.exp(W.T @ p - target))
            converged = np.abs(step - m).max() < MF_TOLERANCE
            m = step
            if converged:
                break
        return m

    def word(self, mu: np.ndarray, p: int, f: int, w: int):
        """(log P of POS p, of bundle f, of form w, the means after them); the end of the
        sentence is POS 0 alone."""
        pos = float(self.log_probs("pos", mu)[p])
        mu = self.update(mu, "pos", p)
        if p == 0:
            return pos, 0.0, 0.0, mu
        start, stop = self.feat_start[p], self.feat_stop[p]
        feat = float(self.log_probs("feat", mu, start, stop)[f])
        mu = self.update(mu, "feat", f, start, stop)
        cell = self.first_cell[p] + f
        start, stop = self.cell_start[cell], self.cell_stop[cell]
        form = float(self.log_probs("form", mu, start, stop)[w])
        return pos, feat, form, self.update(mu, "form", w, start, stop)


@dataclass
class Item:
    """A partial derivation: its log-probability, history, the μ of its states, and the
    word-generation log-probability of its last Shift (ω)."""

    logp: float
    history: History
    mus: list
    omega: float = 0.0


def _state(scorer: Scorer, item: Item):
    """The new state of an item (not yet registered in its history): the history, μ, the
    masked action log-probabilities and the allowed actions."""
    history = item.history
    parents, rows = history.new_state(register=False)
    mu = scorer.mean(rows, [item.mus[p] if p >= 0 else None for p in parents])
    allowed = np.flatnonzero(history.config.allowed())
    W, b = scorer.layers["action"]
    z = W[allowed] @ mu + b[allowed]
    actions = np.full(4, -np.inf)
    actions[allowed] = _log_softmax(z)
    return history, mu, actions, allowed


def _successor(history, mus, logp, action, label=None) -> Item:
    history = history.copy()
    history.register()
    history.apply(action, label)
    return Item(logp, history, mus)


def beam_search(scorer: Scorer, tokens: Tokens, inputs: Inputs, beam: int = 5,
                branching: int = 3) -> list[Item]:
    """The final beam: complete derivations, the most probable first (log P(tree,
    sentence) in logp)."""
    history = History(tokens, inputs)
    parents, rows = history.new_state()
    mu = scorer.mean(rows, [None] * RELATIONS)
    *first, mu = scorer.word(mu, int(tokens.pos[1]), int(tokens.feat[1]), int(tokens.form[1]))
    items = [Item(sum(first), history, [mu], sum(first))]
    tie = itertools.count()  # heap order among equal log-probabilities: first pushed
    for _ in range(len(tokens)):
        queue = [(-o.logp, next(tie), o) for o in items]
        heapq.heapify(queue)
        new: list[Item] = []
        thr = thr_word = -np.inf
        while queue:
            o = heapq.heappop(queue)[2]
            if o.logp < thr:
                break
            history, mu, actions, allowed = _state(scorer, o)

            def after(action, mu=mu, allowed=allowed):
                return scorer.update(mu, "action", int(np.searchsorted(allowed, action)),
                                     rows=allowed)

            if np.isfinite(actions[SHIFT]) and o.logp + actions[SHIFT] >= thr:
                shifted = _successor(history, o.mus, o.logp + actions[SHIFT], SHIFT)
                p, f, w = shifted.history.next_word()
                pos, feat, form, final = scorer.word(after(SHIFT), p, f, w)
                logp = shifted.logp + pos
                if logp >= thr_word and logp + feat >= thr_word and \
                        logp + feat + form >= thr_word + 1e-12:
                    shifted.logp, shifted.omega = logp + feat + form, pos + feat + form
                    shifted.mus = o.mus + [final]
                    new.append(shifted)
                    new.sort(key=lambda x: -x.logp)
                    del new[beam:]
                    if len(new) == beam:
                        thr_word = new[-1].logp
                        thr = thr_word - 0.5 * max(x.omega for x in new)
            for action, name in ((LA, "left_label"), (RA, "right_label")):
                if np.isfinite(actions[action]) and o.logp + actions[action] >= thr:
                    m = after(action)
                    labels = scorer.log_probs(name, m)
                    for label in np.argsort(-labels)[:branching]:
                        logp = o.logp + actions[action] + labels[label]
                        if logp >= thr:
                            final = scorer.update(m, name, int(label))
                            heapq.heappush(queue, (-logp, next(tie), _successor(
                                history, o.mus + [final], logp, action, int(label))))
            if np.isfinite(actions[RED]) and o.logp + actions[RED] >= thr:
                logp = o.logp + actions[RED]
                heapq.heappush(queue, (-logp, next(tie), _successor(
                    history, o.mus + [after(RED)], logp, RED)))
            if len(queue) > 3000:
                queue = heapq.nsmallest(2000, queue)
                heapq.heapify(queue)
        items = new
    return items
