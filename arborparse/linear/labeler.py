"""The second-stage labeler: each arc of a decided tree labelled again by a classifier that
reads the tree (McDonald, Lerman & Pereira 2006, who label a tree's arcs in a second stage
with the labels of neighbouring arcs as features).

The model's own label scores s(h, m, l) are first-order: they see the arc and its two
words, never the rest of the tree. Once the tree is decided, `Labeler` scores each word's
label from what the tree says around its arc: the word's children (their tags and
lemmas), its grandparent, its siblings and its rank among them, and the labels already
given to its head and to the siblings between it and its head (arcs are labelled from the
root down, each head's children from the nearest out). Its scores are added to the
model's, weighted by `joint_weight` (chosen on dev: `choose`): the two classifiers
disagree where each sees what the other does not. The probability of the label it gives
(LabelProb) is the softmax of those summed scores at a temperature of its own, fitted on
dev (`fit_temperature`).

The labeler is a multiclass averaged perceptron trained on the gold trees, with hashed
features (`BITS`-bit rows of one weight per label).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numba import njit

from arborparse.linear.templates import _final, _mix, _start, direction_distance
from arborparse.linear.tokens import FORM, LEMMA, UPOS, XPOS, encode
from arborparse.trees.distribution import label_temperature
from arborparse.trees.scores import allowed_best, allowed_scores, labels_given_arcs

BITS = 16  # log2 of the rows of weights (one weight per label each)
EPOCHS = 10
# the weights of the model's scores tried on dev, in units of σ(labeler scores) / σ(model's)
JOINT_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
_T = 200  # the labeler's template ids start here (the model's are below)
_NONE = np.uint64(0x4E4F4E4500000004)  # no such word or label


@njit(cache=True)
def _children(heads):
    """Each word's children in order: (ptr, kids), h's children kids[ptr[h]:ptr[h+1]]."""
    N = heads.shape[0]
    ptr = np.zeros(N + 1, dtype=np.int64)
    for m in range(1, N):
        ptr[heads[m] + 1] += 1
    for h in range(N):
        ptr[h + 1] += ptr[h]
    kids = np.empty(max(N - 1, 0), dtype=np.int64)
    fill = ptr[:-1].copy()
    for m in range(1, N):
        kids[fill[heads[m]]] = m
        fill[heads[m]] += 1
    return ptr, kids


@njit(cache=True)
def labelling_order(heads):
    """The words in the order they are labelled: from the root down (breadth first), each
    head's children from the nearest out (the left one first at equal distance), so that a
    word's head and the siblings between it and its head come before it."""
    N = heads.shape[0]
    ptr, kids = _children(heads)
    order = np.empty(N - 1, dtype=np.int64)
    queue = np.empty(N, dtype=np.int64)
    queue[0], first, last, k = 0, 0, 1, 0
    while first < last:
        h = queue[first]
        first += 1
        left, right = ptr[h], ptr[h + 1]  # kids[left:right] ascending: split at h
        split = left
        while split < right and kids[split] < h:
            split += 1
        a, b = split - 1, split  # nearest left, nearest right
        while a >= left or b < right:
            if b >= right or (a >= left and h - kids[a] <= kids[b] - h):
                m = kids[a]
                a -= 1
            else:
                m = kids[b]
                b += 1
            order[k] = m
            k += 1
            queue[last] = m
            last += 1
    return order


@njit(inline="always", cache=True)
def _put(out, k, h, mask):
    out[k] = np.int64(_final(h) & mask)
    return k + 1


@njit(cache=True)
def features(attrs, feats_ptr, feats, heads, ptr, kids, labels, m, mask, out):
    """Write the weight rows of word m's features into out (`_rows` long);
    return how many. labels[i]: word i's label id where it is decided (those `labelling_order`
    puts before m), read only there."""
    n = attrs.shape[0] - 1
    h = heads[m]
    dd = np.uint64(direction_distance(h, m))
    right = np.uint64(1 if h < m else 0)
    mu, ml, mx = np.uint64(attrs[m, UPOS]), np.uint64(attrs[m, LEMMA]), np.uint64(attrs[m, XPOS])
    hu, hl, hx = np.uint64(attrs[h, UPOS]), np.uint64(attrs[h, LEMMA]), np.uint64(attrs[h, XPOS])
    k = _put(out, 0, _start(_T), mask)
    k = _put(out, k, _mix(_start(_T + 1), np.uint64(attrs[m, FORM])), mask)
    k = _put(out, k, _mix(_start(_T + 2), ml), mask)
    k = _put(out, k, _mix(_start(_T + 3), mu), mask)
    k = _put(out, k, _mix(_start(_T + 4), mx), mask)
    k = _put(out, k, _mix(_mix(_start(_T + 5), mu), dd), mask)
    k = _put(out, k, _mix(_mix(_start(_T + 6), ml), right), mask)
    k = _put(out, k, _mix(_mix(_start(_T + 7), mx), dd), mask)
    for a in range(feats_ptr[m], feats_ptr[m + 1]):
        f = np.uint64(feats[a])
        k = _put(out, k, _mix(_start(_T + 8), f), mask)
        k = _put(out, k, _mix(_mix(_start(_T + 9), f), mu), mask)
    k = _put(out, k, _mix(_start(_T + 10), hu), mask)
    k = _put(out, k, _mix(_start(_T + 11), hl), mask)
    k = _put(out, k, _mix(_start(_T + 12), hx), mask)
    k = _put(out, k, _mix(_start(_T + 13), np.uint64(attrs[h, FORM])), mask)
    for a in range(feats_ptr[h], feats_ptr[h + 1]):
        k = _put(out, k, _mix(_mix(_start(_T + 14), np.uint64(feats[a])), mu), mask)
    k = _put(out, k, _mix(_mix(_mix(_start(_T + 15), hu), mu), right), mask)
    k = _put(out, k, _mix(_mix(_mix(_start(_T + 16), hu), mu), dd), mask)
    k = _put(out, k, _mix(_mix(_mix(_start(_T + 17), hx), mx), right), mask)
    k = _put(out, k, _mix(_mix(_mix(_start(_T + 18), hl), mu), right), mask)
    k = _put(out, k, _mix(_mix(_mix(_start(_T + 19), hu), ml), right), mask)
    k = _put(out, k, _mix(_mix(_start(_T + 20), hl), ml), mask)
    after = np.uint64(attrs[m + 1, UPOS]) if m < n else _NONE
    k = _put(out, k, _mix(_mix(_mix(_start(_T + 21), mu), np.uint64(attrs[m - 1, UPOS])),
                          after), mask)
    # the word's children
    k = _put(out, k, _mix(_mix(_start(_T + 22), mu), np.uint64(min(ptr[m + 1] - ptr[m], 3))),
             mask)
    for a in range(ptr[m], ptr[m + 1]):
        c = kids[a]
        side = np.uint64(1 if c > m else 0)
        cu, cl = np.uint64(attrs[c, UPOS]), np.uint64(attrs[c, LEMMA])
        k = _put(out, k, _mix(_mix(_mix(_start(_T + 23), mu), cu), side), mask)
        k = _put(out, k, _mix(_mix(_start(_T + 24), cl), side), mask)
        k = _put(out, k, _mix(_mix(_mix(_start(_T + 25), mu), cl), side), mask)
    # the grandparent, the siblings, the labels decided before
    gu = np.uint64(attrs[heads[h], UPOS]) if h > 0 else _NONE
    k = _put(out, k, _mix(_mix(_mix(_mix(_start(_T + 26), gu), hu), mu), right), mask)
    rank, near = 0, -1
    for a in range(ptr[h], ptr[h + 1]):
        c = kids[a]
        if c == m:
            continue
        k = _put(out, k, _mix(_mix(_mix(_start(_T + 28), mu), np.uint64(attrs[c, UPOS])),
                              np.uint64(1 if c > m else 0)), mask)
        if (c < h) == (m < h) and abs(c - h) < abs(m - h):  # between m and its head
            rank += 1
            if near < 0 or abs(c - h) > abs(near - h):
                near = c
            k = _put(out, k, _mix(_start(_T + 33), np.uint64(labels[c])), mask)
    k = _put(out, k, _mix(_mix(_mix(_start(_T + 27), mu), right), np.uint64(min(rank, 3))),
             mask)
    if near >= 0:
        k = _put(out, k, _mix(_mix(_start(_T + 29), mu), np.uint64(attrs[near, UPOS])), mask)
    inner = np.uint64(labels[near]) if near >= 0 else _NONE
    k = _put(out, k, _mix(_mix(_start(_T + 32), inner), mu), mask)
    if h > 0:
        k = _put(out, k, _mix(_mix(_start(_T + 30), hu), np.uint64(min(ptr[h + 1] - ptr[h], 4))),
                 mask)
    above = np.uint64(labels[h]) if h > 0 else _NONE
    k = _put(out, k, _mix(_mix(_start(_T + 31), above), mu), mask)
    return k


@njit(cache=True)
def _rows(feats_ptr):
    """Room for the feature rows `features` may write for a word of the sentence whose
    FEATS pointers are `feats_ptr`."""
    widest = 0
    for i in range(feats_ptr.shape[0] - 1):
        widest = max(widest, feats_ptr[i + 1] - feats_ptr[i])
    return np.empty(40 + 3 * widest + 4 * feats_ptr.shape[0], dtype=np.int64)


@njit(inline="always", cache=True)
def _add_rows(W, rows, count, score):
    """score[l] = the sum of W[rows[j], l] over the word's `count` feature rows."""
    score[:] = 0.0
    for j in range(count):
        row = W[rows[j]]
        for label in range(W.shape[1]):
            score[label] += row[label]


@njit(cache=True)
def _label(attrs, feats_ptr, feats, heads, W, joint, weight, labels, own, root):
    """Label every word of the tree `heads` in `labelling_order`: the label with the best
    labeler score (written into own[m]) plus weight × joint[m] (the model's scores of m's
    arc), the root label (id `root`; -1: none) where and only where the head is 0
    (`allowed_best`)."""
    rows = _rows(feats_ptr)
    ptr, kids = _children(heads)
    mask = np.uint64(W.shape[0] - 1)
    both = np.empty(W.shape[1])
    for m in labelling_order(heads):
        count = features(attrs, feats_ptr, feats, heads, ptr, kids, labels, m, mask, rows)
        score = own[m]
        _add_rows(W, rows, count, score)
        for label in range(both.shape[0]):
            both[label] = score[label] + weight * joint[m, label]
        labels[m] = allowed_best(both, heads[m], root)
    return labels


@njit(cache=True)
def _train_sentence(attrs, feats_ptr, feats, heads, gold, W, U, step):
    """One perceptron pass over a sentence's words (in `labelling_order`, with the gold
    labels of the words before): W and U (the step-weighted updates, for the average)
    updated where the best label is wrong. Returns the step count after it and the
    errors."""
    rows = _rows(feats_ptr)
    ptr, kids = _children(heads)
    mask = np.uint64(W.shape[0] - 1)
    score = np.empty(W.shape[1])
    errors = 0
    for m in labelling_order(heads):
        count = features(attrs, feats_ptr, feats, heads, ptr, kids, gold, m, mask, rows)
        _add_rows(W, rows, count, score)
        guess, y = np.argmax(score), gold[m]
        if guess != y:
            errors += 1
            for j in range(count):
                W[rows[j], y] += 1.0
                W[rows[j], guess] -= 1.0
                U[rows[j], y] += step
                U[rows[j], guess] -= step
        step += 1
    return step, errors


def _own_labels(joint: np.ndarray, heads: np.ndarray, root: int) -> np.ndarray:
    """The model's own labels of a tree: each arc's best by `joint` (`allowed_best`)."""
    labels = np.full(len(heads), -1, dtype=np.int64)
    for m in range(1, len(heads)):
        labels[m] = allowed_best(joint[m], heads[m], root)
    return labels


def _spread(own: list, tried: list) -> float:
    """σ of the labeler's scores over σ of the model's (1 where either is constant)."""
    mine = np.concatenate([o[1:].ravel() for o in own])
    theirs = np.concatenate([joint[1:].ravel() for _, _, joint in tried])
    if mine.size == 0 or not mine.std() > 0 or not theirs.std() > 0:
        return 1.0
    return float(mine.std() / theirs.std())


def _number(value) -> bool:
    """Whether a model file's header entry is a number (not a string, not true or false)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass
class Labeler:
    """A trained second-stage labeler: weights (2^bits, L) over the model's labels, the
    weight of the model's own label scores beside it, and the temperature of the
    probabilities of its labels (`probabilities`; None: not fitted, in files written
    before it)."""

    weights: np.ndarray
    joint_weight: float = 1.0
    temperature: float | None = None

    @classmethod
    def fit(cls, sentences, labels: list[str], epochs: int = EPOCHS, seed: int = 0,
            bits: int = BITS) -> Labeler:
        """Train on the gold trees and labels of `sentences` (each label one of `labels`,
        the model's, in their order)."""
        index = {label: i for i, label in enumerate(labels)}
        data = [(encode(s), s.heads,
                 np.array([-1] + [index[d] for d in s.deprels], dtype=np.int64))
                for s in sentences]
        W = np.zeros((1 << bits, len(labels)))
        U = np.zeros_like(W)
        step = 1
        rng = np.random.default_rng(seed)
        for _ in range(epochs):
            for i in rng.permutation(len(data)):
                t, heads, gold = data[i]
                step, _ = _train_sentence(t.attrs, t.feats_ptr, t.feats, heads, gold, W, U,
                                          step)
        return cls((W - U / step).astype(np.float32))

    def labels(self, table, heads: np.ndarray, joint: np.ndarray, own: np.ndarray | None = None,
               root: int = -1) -> np.ndarray:
        """The label ids of the tree `heads` of the sentence `table` (-1 at index 0), given
        `joint` (n+1, L): the model's label scores of each word's arc; `own`, an (n+1, L)
        array, gets the labeler's scores; `root`: the id of the label that goes with HEAD
        0 and only with it (-1: none)."""
        labels = np.full(len(heads), -1, dtype=np.int64)
        own = np.empty(joint.shape) if own is None else own
        return _label(table.attrs, table.feats_ptr, table.feats,
                      np.asarray(heads, dtype=np.int64), self.weights, joint,
                      self.joint_weight, labels, own, root)

    def probabilities(self, own: np.ndarray, joint: np.ndarray, heads: np.ndarray,
                      labels: np.ndarray, root: int = -1) -> np.ndarray:
        """P(labels[m] | the tree and the labels given before m's) for each word m >= 1:
        the softmax at `temperature` of the scores the labels were chosen by (`own`, the
        labeler's, as `labels` wrote them, plus `joint_weight` × `joint`) over the labels
        the word's arc may take (`root` as in `labels`)."""
        return self.distribution(own, joint, heads, root)[np.arange(len(heads) - 1),
                                                          labels[1:]]

    def distribution(self, own: np.ndarray, joint: np.ndarray, heads: np.ndarray,
                     root: int = -1) -> np.ndarray:
        """P(l | the tree and the labels given before m) of every label l for each word m
        >= 1, (n, L), as `probabilities` gives them for the labels chosen (at temperature 1
        where a file written before the temperature has none)."""
        return labels_given_arcs(self._chosen_by(own, joint, heads, root)[1:] /
                                 (self.temperature or 1.0))

    def _chosen_by(self, own: np.ndarray, joint: np.ndarray, heads: np.ndarray, root: int
                   ) -> np.ndarray:
        """The scores each word's label is chosen by, (n+1, L): the labeler's (`own`) plus
        `joint_weight` × the model's (`joint`), -inf for the labels its arc may not take."""
        return allowed_scores(own + self.joint_weight * joint, heads, root)

    def fit_temperature(self, tried: list, gold: list, root: int = -1) -> Labeler:
        """This labeler with the temperature of maximum likelihood of the gold labels of
        the words whose head is right in `tried` ((table, heads, joint) of the dev
        sentences as the parser decodes them, as `choose` takes them); `gold` holds
        (heads, label ids, -1 where the model does not know the label) of each. Where no
        word qualifies, this labeler as it is."""
        rows, found = [], []
        for (table, heads, joint), (gold_heads, gold_labels) in zip(tried, gold):
            own = np.zeros(joint.shape)
            self.labels(table, heads, joint, own, root)
            scores = self._chosen_by(own, joint, heads, root)
            words = np.flatnonzero((heads == gold_heads) & (gold_labels >= 0))
            words = words[words > 0]
            words = words[np.isfinite(scores[words, gold_labels[words]])]
            rows.append(scores[words])
            found.append(gold_labels[words])
        found = np.concatenate(found) if found else np.empty(0, dtype=np.int64)
        if not len(found):  # nothing to fit on: as it was
            return self
        return replace(self, temperature=label_temperature(np.concatenate(rows), found))

    def choose(self, tried: list, evaluate, root: int = -1) -> tuple[Labeler | None, list]:
        """(the labeler with the joint weight that labels the dev trees best, or None where
        the model's own labels do at least as well; the labels it gives): `tried` holds
        (table, heads, joint) of the dev sentences as the model parses them,
        `evaluate(labels)` the dev score of their label ids (an array per sentence, -1 at
        index 0); `root` as in `labels`. The weights tried are `JOINT_WEIGHTS` in units of
        σ(labeler scores) / σ(joint)."""
        own = [np.empty(joint.shape) for _, _, joint in tried]
        found = [self.with_weight(0.0).labels(t, heads, joint, o, root)
                 for (t, heads, joint), o in zip(tried, own)]
        ratio = _spread(own, tried)
        best = (None, [_own_labels(joint, heads, root) for _, heads, joint in tried])
        best_score = evaluate(best[1])
        for weight in JOINT_WEIGHTS:
            labeler = self.with_weight(weight * ratio)
            if weight != 0:
                found = [labeler.labels(t, heads, joint, root=root) for t, heads, joint in tried]
            score = evaluate(found)
            if score > best_score:
                best, best_score = (labeler, found), score
        return best

    def with_weight(self, joint_weight: float) -> Labeler:
        return replace(self, joint_weight=joint_weight)

    def parts(self) -> tuple[dict, dict]:
        """(header entries, arrays) for the parser's model file."""
        header = {"joint_weight": self.joint_weight}
        if self.temperature is not None:
            header["temperature"] = self.temperature
        return header, {"labeler": self.weights}

    @classmethod
    def from_parts(cls, header: dict, arrays: dict, labels: int) -> Labeler:
        """The labeler of a model file's header entry and arrays; raises ValueError."""
        W = arrays["labeler"]
        rows = W.shape[0] if W.ndim == 2 else 0
        if W.ndim != 2 or W.shape[1] != labels or rows < 2 or rows & (rows - 1):
            raise ValueError(f"the labeler's weights have shape {W.shape}, expected (a power "
                             f"of two, {labels})")
        weight, temperature = header["joint_weight"], header.get("temperature")
        if not _number(weight) or not 0 <= weight < float("inf"):
            raise ValueError("the labeler's 'joint_weight' must be a number >= 0")
        if temperature is not None and not (  # files written before it have none
                _number(temperature) and 0 < temperature < float("inf")):
            raise ValueError("the labeler's 'temperature' must be a number > 0")
        return cls(W, float(weight), None if temperature is None else float(temperature))
