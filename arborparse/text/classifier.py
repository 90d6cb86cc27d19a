"""A compiled averaged perceptron that tags the words of sentences left to right (or the
characters of paragraphs: the tokenizer's items).

Each word is scored against its candidate classes (all classes where it has none) with its
static features (`arborparse.text.features`) and dynamic ones: the classes already given to
the two words before it, and, for a tagger that reads another's tag (XPOS after UPOS),
that "given" tag of the word itself, alone and paired with the word, its suffixes of 2, 3,
4 and 6 characters and the previous class (chosen when FEATS still read the UPOS: the
suffix pairs took Turkish-IMST dev UFeats 85.03 -> 85.38, Gothic-PROIEL 86.46 -> 86.60; a
tagger that reads none has the same constant there). A feature f and a class c own the
weight c places after a hash of f in a vector of 2^bits (wrapping around): the weights of one
feature for every class lie side by side, so that scoring a word's candidates reads a few
cache lines per feature instead of one per (feature, class) pair (the tagger's and the
lemmatizer's training on English-EWT 1.7-2.1 times as fast as with a hash of each pair; dev
UPOS -0.05 to +0.48, UFeats -0.40 to +0.87 on six treebanks, the collisions falling
elsewhere). A class may have parts (a FEATS bundle's
``Case=Dat`` and ``Number=Sing``), shared with every class that holds them: part p's
weights live where those of a class numbered ``len(classes) + p`` would, and a class
scores its own weights and its parts', so that a bundle seen rarely learns from the common
features it is made of. Training is the averaged perceptron (Collins
2002) with the predicted classes as history, as at tagging time. The static columns the
dynamic features pair with are the taggers' (`WORD_PAIRS`) unless a user names others.
"""

from __future__ import annotations

from itertools import chain

import numpy as np
from numba import njit

from arborparse.errors import ArborparseError
from arborparse.text.features import WORD
from arborparse.training import Loop

DYNAMIC = 11
_PRIME = np.uint64(0x100000001B3)
_NONE, _NO_OFFSETS = np.empty(0), np.zeros(1, dtype=np.int64)  # `predict`: no scores
# the static columns the dynamic features pair with: the word, its 3-character suffix
# (with the previous class and the given tag), its 2-, 4- and 6-character suffixes (with
# the given tag)
WORD_PAIRS = (WORD.index("lower"), WORD.index("s3"), WORD.index("s2"), WORD.index("s4"),
              WORD.index("s6"))


@njit(inline="always", cache=True)
def _mix(h, x):
    return (np.uint64(h) ^ np.uint64(x)) * _PRIME


@njit(inline="always", cache=True)
def _start(feature):
    """Where the weights of a feature start: a hash of the feature; its weight for class c
    lies c places further (`_slot`), so that the candidates of a word read a few cache
    lines per feature, not one for each class."""
    x = np.uint64(feature) * np.uint64(0x9E3779B97F4A7C15)
    return x ^ (x >> np.uint64(29))


@njit(inline="always", cache=True)
def _slot(start, c, mask):
    return np.int64((start + np.uint64(c)) & mask)


@njit(cache=True, nogil=True)
def _features(X, i, start, history, given, pairs, out):
    """out: where the weights of item i's static features and its dynamic ones (`pairs`:
    `WORD_PAIRS`) start (`_start`)."""
    F = X.shape[1]
    for k in range(F):
        out[k] = X[i, k]
    p1 = history[i - 1] + 1 if i - 1 >= start else 0
    p2 = history[i - 2] + 1 if i - 2 >= start else 0
    g = given[i] + 1
    word, suffix = X[i, pairs[0]], X[i, pairs[1]]
    out[F] = _mix(0xA1, p1)
    out[F + 1] = _mix(_mix(0xA2, p1), p2)
    out[F + 2] = _mix(_mix(0xA3, p1), word)
    out[F + 3] = _mix(0xB1, g)
    out[F + 4] = _mix(_mix(0xB2, g), word)
    out[F + 5] = _mix(_mix(0xB3, g), suffix)
    out[F + 6] = _mix(_mix(0xB4, g), p1)
    out[F + 7] = _mix(_mix(0xA4, p1), suffix)
    out[F + 8] = _mix(_mix(0xB5, g), X[i, pairs[2]])
    out[F + 9] = _mix(_mix(0xB6, g), X[i, pairs[3]])
    out[F + 10] = _mix(_mix(0xB7, g), X[i, pairs[4]])
    for k in range(F + DYNAMIC):
        out[k] = _start(out[k])


@njit(inline="always", cache=True)
def _parts(pptr, c):
    """Where class c's parts are listed in pids (none for the class -1, a candidate that
    stands for something outside the classes: the lemmatizer's form kept as it is)."""
    return (pptr[c], pptr[c + 1]) if c >= 0 else (0, 0)


@njit(inline="always", cache=True)
def _with_parts(score, W, feats, c, pptr, pids, part_score, stamp, now, mask):
    """score (class c's own weights summed) plus the scores of c's parts (part p's weights
    live at class id ``classes + p``; a part's score is computed once per item, the
    items told apart by `now` in `stamp`)."""
    lo, hi = _parts(pptr, c)
    for j in range(lo, hi):
        p = pids[j]
        if stamp[p] != now:
            stamp[p] = now
            part = 0.0
            for f in feats:
                part += W[_slot(f, pptr.shape[0] - 1 + p, mask)]
            part_score[p] = part
        score += part_score[p]
    return score


@njit(inline="always", cache=True)
def _score(W, feats, c, pptr, pids, part_score, stamp, now, mask):
    """The score of class c: its own weights and those of its parts (`_with_parts`)."""
    score = 0.0
    for f in feats:
        score += W[_slot(f, c, mask)]
    return _with_parts(score, W, feats, c, pptr, pids, part_score, stamp, now, mask)


@njit(cache=True, nogil=True)
def _best(W, feats, i, cptr, cand, every, pptr, pids, part_score, stamp, now, mask,
          scores, at, own):
    """The best candidate class of word i (the first on ties); `now` tells this word's
    part scores from those of the words before (`_score`). Each candidate's score is
    written to ``scores[at + j]`` unless `scores` is empty. `every`: the classes in order
    (the candidates of a word that has none); `own`: scratch of at least as many entries
    as any word has candidates.

    The candidates' own weights are summed feature by feature (each feature's weights
    for every class lie side by side: its few cache lines read once, the sums
    independent), each sum in the order of the features, as `_score` does: the same
    scores."""
    lo, hi = cptr[i], cptr[i + 1]
    cs = cand[lo:hi] if hi > lo else every
    count = cs.shape[0]
    for j in range(count):
        own[j] = 0.0
    for f in feats:
        for j in range(count):
            own[j] += W[_slot(f, cs[j], mask)]
    best, best_score = -1, -np.inf
    for j in range(count):
        c = cs[j]
        score = _with_parts(own[j], W, feats, c, pptr, pids, part_score, stamp, now, mask)
        if scores.shape[0]:
            scores[at + j] = score
        if score > best_score:
            best, best_score = c, score
    return best


@njit(inline="always", cache=True)
def _scratch(cptr, classes):
    """`_best`'s `every` (the classes in order) and `own` (room for any item's
    candidates)."""
    most = classes
    for i in range(cptr.shape[0] - 1):
        most = max(most, cptr[i + 1] - cptr[i])
    return np.arange(classes), np.empty(most)


@njit(cache=True, nogil=True)
def _update(W, U, feats, c, pptr, pids, delta, step, mask):
    """Add `delta` to the weights of class c and its parts (U: `delta` times the step)."""
    lo, hi = _parts(pptr, c)
    for f in feats:
        k = _slot(f, c, mask)
        W[k] += delta
        U[k] += delta * step
        for j in range(lo, hi):
            k = _slot(f, pptr.shape[0] - 1 + pids[j], mask)
            W[k] += delta
            U[k] += delta * step


@njit(cache=True, nogil=True)
def predict(W, X, bounds, given, cptr, cand, classes, pairs, pptr, pids, scores, sptr):
    """The class of every word, sentence by sentence, left to right; the scores of word
    i's candidates written from ``scores[sptr[i]]`` on unless `scores` is empty."""
    mask = np.uint64(W.shape[0] - 1)
    out = np.empty(X.shape[0], dtype=np.int64)
    feats = np.empty(X.shape[1] + DYNAMIC, dtype=np.uint64)
    part_score, stamp = np.empty(pids.shape[0]), np.full(pids.shape[0], -1, dtype=np.int64)
    every, own = _scratch(cptr, classes)
    for s in range(bounds.shape[0] - 1):
        for i in range(bounds[s], bounds[s + 1]):
            _features(X, i, bounds[s], out, given, pairs, feats)
            out[i] = _best(W, feats, i, cptr, cand, every, pptr, pids, part_score, stamp,
                           i, mask, scores, sptr[i] if scores.shape[0] else 0, own)
    return out


@njit(cache=True, nogil=True)
def margins(W, X, bounds, given, history, pairs, pptr, pids, a, b):
    """Each word's score of class a minus that of class b, with `history` (`predict`'s
    classes) as the classes before it."""
    mask = np.uint64(W.shape[0] - 1)
    margin = np.empty(X.shape[0])
    feats = np.empty(X.shape[1] + DYNAMIC, dtype=np.uint64)
    part_score, stamp = np.empty(pids.shape[0]), np.full(pids.shape[0], -1, dtype=np.int64)
    for s in range(bounds.shape[0] - 1):
        for i in range(bounds[s], bounds[s + 1]):
            _features(X, i, bounds[s], history, given, pairs, feats)
            margin[i] = (_score(W, feats, a, pptr, pids, part_score, stamp, i, mask)
                         - _score(W, feats, b, pptr, pids, part_score, stamp, i, mask))
    return margin


@njit(cache=True, nogil=True)
def train_epoch(W, U, step, X, bounds, gold, given, cptr, cand, classes, pairs, pptr, pids,
                order):
    """One pass in sentence order `order`: perceptron updates of W, and of U with the
    update times the step (the averaged weights are W - U / step). Returns (step, errors)."""
    mask = np.uint64(W.shape[0] - 1)
    history = np.empty(X.shape[0], dtype=np.int64)
    feats = np.empty(X.shape[1] + DYNAMIC, dtype=np.uint64)
    part_score, stamp = np.empty(pids.shape[0]), np.full(pids.shape[0], -1, dtype=np.int64)
    errors, none = 0, np.empty(0)  # no scores wanted
    every, own = _scratch(cptr, classes)
    for s in order:
        for i in range(bounds[s], bounds[s + 1]):
            _features(X, i, bounds[s], history, given, pairs, feats)
            # the step tells the words apart: the weights of the parts change between them
            guess = _best(W, feats, i, cptr, cand, every, pptr, pids, part_score, stamp,
                          step, mask, none, 0, own)
            if guess != gold[i]:
                errors += 1
                _update(W, U, feats, gold[i], pptr, pids, 1.0, step, mask)
                _update(W, U, feats, guess, pptr, pids, -1.0, step, mask)
            history[i] = guess
            step += 1
    return step, errors


def offsets(lengths) -> np.ndarray:
    """0 and the running sums of `lengths`: where each run of items (a sentence's words, an
    item's candidates) starts, and where the last one ends."""
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    out[1:] = np.cumsum(lengths)
    return out


def candidate_arrays(lists) -> tuple[np.ndarray, np.ndarray]:
    """(cptr, cand) for `Classifier`: the candidate classes of item i are
    ``cand[cptr[i]:cptr[i + 1]]`` (none: every class)."""
    cptr = offsets([len(c) for c in lists])
    return cptr, np.fromiter(chain.from_iterable(lists), dtype=np.int64, count=cptr[-1])


class Classifier:
    """An averaged perceptron over `classes` (strings), its weights hashed into 2^bits.

    `fit` trains on arrays that `arborparse.text.tagger` prepares (static features X of all
    words, sentence bounds, gold class ids, given tags, candidate lists) and keeps the
    epoch `choose(predicted ids)` scores highest (the last without `choose`), as
    `best_epoch_`."""

    def __init__(self, classes: list[str], bits: int = 22, weights: np.ndarray | None = None,
                 pairs: tuple[int, ...] = WORD_PAIRS, parts=None):
        """With `weights` (read from a model file), `bits` follows from their length.
        `parts(class)`: the names of a class's parts (none without it)."""
        self.classes = list(classes)
        self.weights = np.zeros(1 << bits, dtype=np.float32) if weights is None else \
            np.asarray(weights, dtype=np.float32)
        size = self.weights.shape[0] if self.weights.ndim == 1 else 0
        if size < 2 or size & (size - 1):  # read from a file: `_slot` masks by size - 1
            raise ValueError(f"classifier weights of shape {self.weights.shape}: one row of a "
                             "power of two")
        self.bits = int(self.weights.shape[0]).bit_length() - 1
        self.pairs = np.array(pairs, dtype=np.int64)
        names: dict[str, int] = {}
        lists = [[names.setdefault(p, len(names)) for p in parts(c)] if parts else []
                 for c in self.classes]
        self.pptr, self.pids = candidate_arrays(lists)

    def weight_index(self, feature: int, c: int) -> int:
        """Where the weight of static feature hash `feature` for class c lives."""
        return int(_slot(_start(np.uint64(feature)), c, np.uint64(self.weights.shape[0] - 1)))

    def predict(self, X, bounds, given, cptr, cand) -> np.ndarray:
        return predict(self.weights, X, bounds, given, cptr, cand, len(self.classes),
                       self.pairs, self.pptr, self.pids, _NONE, _NO_OFFSETS)

    def scores(self, X, bounds, given, cptr, cand) -> tuple[np.ndarray, np.ndarray]:
        """(the scores of every word's candidates as `predict` goes, sptr): word i's are
        ``scores[sptr[i]:sptr[i + 1]]``, in the order of its candidates, all classes where
        it has none."""
        counts = np.diff(cptr)
        sptr = offsets(np.where(counts > 0, counts, len(self.classes)))
        scores = np.empty(sptr[-1])
        predict(self.weights, X, bounds, given, cptr, cand, len(self.classes), self.pairs,
                self.pptr, self.pids, scores, sptr)
        return scores, sptr

    def margins(self, X, bounds, given, cptr, cand, a: int, b: int) -> np.ndarray:
        """How much more each word scores class a than class b, as `predict` goes."""
        return margins(self.weights, X, bounds, given, self.predict(X, bounds, given, cptr,
                                                                    cand),
                       self.pairs, self.pptr, self.pids, a, b)

    def fit(self, data, epochs: int, seed: int = 0, choose=None, progress: bool = False,
            name: str = "", metric: str = "accuracy") -> list[dict]:
        """Train on ``data = (X, bounds, gold, given, cptr, cand)`` in the shared epoch loop
        (`arborparse.training.Loop`; a line per epoch on stderr with `progress`, prefixed
        by `name`, the `choose` score shown as `metric`); returns one record per epoch
        (training errors and the score)."""
        X, bounds, gold, given, cptr, cand = data
        W = np.zeros(1 << self.bits)
        U = np.zeros(1 << self.bits)
        rng = np.random.default_rng(seed)
        self.epochs, self.progress, step, kept = epochs, progress, 1, None
        log = Loop(self, choose is not None, metric=metric, report=(metric,), name=name,
                   unit="sentence")
        for epoch in log:
            order = rng.permutation(len(bounds) - 1)
            step, errors = train_epoch(W, U, step, X, bounds, gold, given, cptr, cand,
                                       len(self.classes), self.pairs, self.pptr, self.pids,
                                       order)
            self.weights = (W - U / step).astype(np.float32)

            def keep():
                nonlocal kept
                kept = self.weights

            scores = None if choose is None else {metric: choose(self)}
            log.end(epoch, {"train_errors": int(errors)}, f"errors {errors}", scores=scores,
                    keep=keep)
        self.weights = kept
        return self.history_


class Trained:
    """What the front end's models built on `Classifier` share: the sizes of training, and
    one line on stderr per epoch (with ``progress``, passed to `Classifier.fit`)."""

    def __init__(self, epochs: int = 10, bits: int = 22, seed: int = 0, progress: bool = True):
        if epochs < 1 or not 10 <= bits <= 30:
            raise ArborparseError("epochs must be >= 1 and bits in 10..30")
        self.epochs = epochs
        self.bits = bits
        self.seed = seed
        self.progress = progress
