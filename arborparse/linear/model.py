"""The edge-factored model s(h, m, l) = w · f(x, h, m) + w · g(x, h, m, l).

With K > 1 hidden clusters (Smith & Smith 2007, §5, Eq. 18) every arc feature is
conjoined with a cluster z and the arc part is summed out:
s(h, m, l) = log Σ_z exp(w · f(x, h, m, z)) + w · g(x, h, m, l). The model stays
edge-factored, so trees are scored, decoded and marginalized as before; the label
features (our labeled extension) are not conjoined. ``max-z`` scoring keeps each arc's
best cluster instead of the sum.

Second order (``order=2``; McDonald & Pereira 2006): the score of a tree adds w · f of its
sibling parts (and, with ``second_order="siblings+grandparents"``, of its grandparent
parts; `arborparse.linear.parts`) to the arcs' scores; the parts are unlabeled, so labels
stay first-order.

Decoding picks the best label of every arc first (exact: labels are first-order), then
the best tree under arc score + best label score (+ the part scores), non-projective
(MST; second order: McDonald & Pereira's approximation) or projective (Eisner; second
order: its exact second-order extension), single- or multi-root.

Weights are indexed by hashing (a power-of-two vector; the default) or by an exact
dictionary of the features of the gold trees (sorted hashes of arc features and of
label features; see `arborparse.linear.templates.index` and `label_index`).
"""

from __future__ import annotations

import dataclasses
import functools
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from arborparse import memory, trees
from arborparse.io import model_files as files
from arborparse.io.conllu import Sentence
from arborparse.linear.options import DECODERS, GRAND_WORDS, SECOND_ORDER, SIBLING_WORDS
from arborparse.linear.parts import (entry_indices, entry_values, expand, part_entries, reduce,
                                     scatter, tree_entries)
from arborparse.linear.templates import (
    NO_EXPS,
    NO_SKIP,
    PRODUCTS,
    add_arc_expectations,
    add_label_expectations,
    arc_capacity,
    label_scores,
    labeled_arc_hashes,
    labeled_arc_indices,
    label_rows,
    label_tables,
    own_between,
    score_arc_rows,
    score_arcs,
    score_labels,
    window_label_rows,
)
from arborparse.linear.tokens import SUFFIX, TokenTable, encode
from arborparse.trees import second_order
from arborparse.trees.decode import best_tree
from arborparse.trees.scores import NO_TREE, NonFiniteScores, arc_labels, labels_given_arcs

KIND = "linear"
OLD_KINDS = ("first-order",)  # the kind's name in files of arborparse 0.1
# 3: the temperatures of the labels and of the second-stage labeler (LabelProb), which a
# reader of version 2 would leave out; version 2 files are read with T_l = T and the
# model's probability of the labeler's label, as they were written
VERSION, OLDEST = 3, 2
COMBINES = ("sum", "max")
THREADED_WORDS = 64  # sentences of this many words or more are scored in `threads` threads
# what an order-2 parse takes per (n+1)³, in bytes (its parts' entries, scores and charts),
# for the best tree and with the marginals (measured: with siblings, 463 MB at 300 words
# either way; with grandparents too, 517 and 1,076 MB at 200 words)
ARCS = "arcs"  # what `LinearModel._parts_of` gives past `SIBLING_WORDS`: no parts
PART_BYTES = {ARCS: (0, 0), "siblings": (18, 18), "siblings+grandparents": (64, 136)}
# what any parse takes per (n+1)² (the arc and label scores, the reach's mask, the
# decoder's arrays), for the best tree and with the marginals or MBR (measured with
# English-EWT's pipeline: 87 and 124 bytes from 2,000 to 4,000 words)
ARC_BYTES = (96, 136)


def _threaded(x: Encoded, threads: int) -> bool:
    """Whether the sentence is scored in threads: several asked, `THREADED_WORDS` or more
    words."""
    return threads > 1 and len(x.table) >= THREADED_WORDS


def _in_threads(fill, rows: int, threads: int) -> None:
    """fill(lo, hi) over the head rows 0..rows-1 of a sentence's arrays, split into blocks
    run at once, one by this thread and the others by a pool shared by the process (the
    kernels release the GIL and write disjoint rows); no more blocks than cores."""
    if threads <= 1:
        fill(0, rows)
        return
    threads = max(1, min(threads, os.cpu_count() or 1, rows))
    bounds = np.linspace(0, rows, threads + 1).astype(np.int64)
    others = [_pool(threads - 1).submit(fill, lo, hi)
              for lo, hi in zip(bounds[1:-1], bounds[2:])] if threads > 1 else []
    fill(bounds[0], bounds[1])
    for done in others:
        done.result()


@functools.lru_cache(maxsize=None)
def _pool(workers: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(workers, thread_name_prefix="arborparse-scoring")


os.register_at_fork(after_in_child=_pool.cache_clear)  # a forked child has no pool threads


@dataclass
class Encoded:
    """A sentence ready for scoring: its token table and a scratch buffer."""

    table: TokenTable
    buf: np.ndarray

    @classmethod
    def of(cls, sentence: Sentence, suffixes: bool = True) -> Encoded:
        """The sentence encoded for a model with (or without) the suffix features."""
        return cls.of_table(encode(sentence, suffixes))

    @classmethod
    def of_table(cls, table: TokenTable) -> Encoded:
        return cls(table, arc_buffer([table]))


def arc_buffer(tables: list[TokenTable]) -> np.ndarray:
    """Scratch room for the features of any arc of these sentences (`arc_capacity` of the
    longest and of the most FEATS a word has)."""
    widest = max((int(np.diff(t.feats_ptr).max(initial=0)) for t in tables), default=0)
    return np.empty(arc_capacity(max((len(t) for t in tables), default=0), widest),
                    dtype=np.uint64)


@dataclass
class Scores:
    """arc[h, m]; label[h, m] the best label of the arc and label_score[h, m] its score;
    label_sum[h, m] log Σ_l exp of the label scores (empty unless asked for); a second-order
    model's part scores sib[h, m, s] and grand[g, h, m] (None: no such parts, or none made:
    `LinearModel._parts_of`); label_scale: what turns label_score - label_sum into the log
    probability of the best label (1 but for `tempered` scores)."""

    arc: np.ndarray
    label: np.ndarray
    label_score: np.ndarray
    label_sum: np.ndarray
    sib: np.ndarray | None = None
    grand: np.ndarray | None = None
    label_scale: float = 1.0

    @property
    def total(self) -> np.ndarray:
        """The score of each arc with its best label (the MAP tree's arc scores)."""
        return self.arc + self.label_score

    @property
    def folded(self) -> np.ndarray:
        """log Σ_l exp s(h, m, l): the arc scores of the tree distribution, labels summed
        out (needs label_sum)."""
        return self.arc + self.label_sum

    @property
    def best_label_log_probability(self) -> np.ndarray:
        """log P(best label | arc) of every arc, -inf where it is not scored (needs
        label_sum)."""
        with np.errstate(invalid="ignore"):  # -inf - -inf where not scored
            gap = (self.label_score - self.label_sum) * self.label_scale
        return np.where(np.isneginf(self.label_score), -np.inf, gap)

    def tempered(self, ratio: float) -> Scores:
        """Every score times `ratio` (> 0), the label log-sum-exp too, the log probabilities
        of the labels unchanged: scores made at scale 1 / T_l as those of the heads'
        distribution at 1 / T (ratio T_l / T), whose `folded` arcs are
        (T_l / T) log Σ_l exp(s / T_l) (`LinearParser`'s two temperatures; with hidden
        clusters the arc scores made at 1 / T_l have the clusters summed out at that
        scale, and stay so)."""
        if ratio == 1.0:
            return self
        sib, grand = (None if p is None else p * ratio for p in (self.sib, self.grand))
        return Scores(self.arc * ratio, self.label, self.label_score * ratio,
                      self.label_sum * ratio, sib, grand, self.label_scale / ratio)


@dataclass
class LinearModel:
    """Weights, the label set, the feature dictionary (empty keys: hashing) and the number
    of hidden arc clusters.

    weights : hashed, any power-of-two size; with a dictionary, len(keys) arc feature
        weights then len(label_keys) blocks of len(labels) label feature weights
    clusters : K; 1 is the plain linear model (clusters need hashed weights)
    squeeze : without the arc templates that pair both words and the POS four-grams
        (Smith & Smith 2007, §5.2)
    order : 1 (arcs) or 2 (arcs and sibling parts; hashed weights, one cluster)
    second_order : the parts of order 2, ``"siblings"`` or ``"siblings+grandparents"``
    suffixes : whether the arc features read the words' suffixes (files saved before them:
        False, and their sentences are encoded without: `Encoded.of`)
    """

    weights: np.ndarray
    labels: list[str]
    keys: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.uint64))
    label_keys: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.uint64))
    clusters: int = 1
    squeeze: bool = False
    order: int = 1
    second_order: str = SECOND_ORDER[0]
    suffixes: bool = True

    def __post_init__(self):
        if self.clusters < 1 or (self.clusters > 1 and not self.hashed):
            raise ValueError("clusters must be >= 1, and more than one needs hashed weights")
        if self.order not in (1, 2) or self.second_order not in SECOND_ORDER:
            raise ValueError(f"order must be 1 or 2, second_order one of {SECOND_ORDER}")
        if self.order == 2 and (self.clusters > 1 or not self.hashed):
            raise ValueError("order 2 needs hashed weights and one cluster")

    @property
    def hashed(self) -> bool:
        return self.keys.shape[0] == 0

    @property
    def grandparents(self) -> bool:
        """Whether the model scores grandparent parts."""
        return self.order == 2 and self.second_order == "siblings+grandparents"

    @classmethod
    def hashing(cls, bits: int, labels: list[str], clusters: int = 1, squeeze: bool = False,
                order: int = 1, second_order: str = SECOND_ORDER[0]) -> LinearModel:
        return cls(np.zeros(1 << bits), labels, clusters=clusters, squeeze=squeeze,
                   order=order, second_order=second_order)

    def encoded(self, sentence: Sentence) -> Encoded:
        """The sentence encoded for this model (with the SUFFIX column where it reads it)."""
        return Encoded.of(sentence, self.suffixes)

    def _table(self, x: Encoded) -> TokenTable:
        """x's token table, refused (ValueError) where it was encoded for a model with
        other features (its SUFFIX column: `encoded`)."""
        if (x.table.attrs.shape[1] > SUFFIX) != self.suffixes:
            raise ValueError("the sentence was encoded for a model "
                             f"{'without' if self.suffixes else 'with'} the suffix features: "
                             "encode it with this model's `encoded`")
        return x.table

    def like(self, weights: np.ndarray) -> LinearModel:
        """The same model with other weights."""
        return dataclasses.replace(self, weights=weights)

    @classmethod
    def dictionary(cls, keys, label_keys, labels: list[str]) -> LinearModel:
        return cls(np.zeros(len(keys) + len(label_keys) * len(labels)), labels, keys, label_keys)

    def cluster_scores(self, x: Encoded, weights: np.ndarray | None = None,
                       threads: int = 1, known: np.ndarray | None = None,
                       between: tuple | None = None) -> np.ndarray:
        """w · f(x, h, m, z) for every cluster and arc, shape (K, n+1, n+1); sentences of
        `THREADED_WORDS` words or more in `threads` threads (the same scores). The arcs
        where `known` ((n+1, n+1) booleans) is set are not scored (-inf). `between`: the
        in-between tables x shares with the other windows of its sentence
        (`templates.cut_between`; one thread, as they are filled)."""
        t = self._table(x)
        w = self.weights if weights is None else weights
        threads = threads if _threaded(x, threads) and between is None else 1
        if known is None and threads == 1 and between is None:
            return score_arcs(t.attrs, t.feats_ptr, t.feats, w, self.keys, self.clusters,
                              x.buf, self.squeeze)
        S = np.full((self.clusters, len(t) + 1, len(t) + 1), -np.inf)
        known = NO_SKIP if known is None else known
        _in_threads(lambda lo, hi: score_arc_rows(
            t.attrs, t.feats_ptr, t.feats, w, self.keys, self.clusters, np.empty_like(x.buf),
            self.squeeze, lo, hi, S, known,
            own_between(t.attrs, self.clusters) if between is None else between),
            len(t) + 1, threads)
        return S

    def _arc_scores(self, x: Encoded, w: np.ndarray, combine: str, scale: float = 1.0,
                    threads: int = 1, known: np.ndarray | None = None,
                    between: tuple | None = None):
        A = scale * self.cluster_scores(x, w, threads, known, between)
        if self.clusters == 1:
            return A[0]
        if combine not in COMBINES:
            raise ValueError(f"unknown combine {combine!r}; choose one of {COMBINES}")
        from scipy.special import logsumexp  # here: a third of parsing's start-up otherwise

        with np.errstate(invalid="ignore"):  # -inf everywhere off the arcs
            return logsumexp(A, axis=0) if combine == "sum" else A.max(axis=0)

    def scores(self, x: Encoded, weights: np.ndarray | None = None, combine: str = "sum",
               scale: float = 1.0, with_sum: bool = False, threads: int = 1,
               known: np.ndarray | None = None, tables: tuple | None = None,
               between: tuple | None = None) -> Scores:
        """Arc scores (clusters summed out, or their best with ``combine="max"``) and each
        arc's best label with its score, under the weights scale × `weights`; `with_sum`
        also log Σ_l exp of each arc's label scores. O(n²) memory whatever the labels.
        Sentences of `THREADED_WORDS` words or more are scored in `threads` threads (the
        same scores). The arcs where `known` ((n+1, n+1) booleans) is set are not scored:
        -inf, label 0 (for scores the caller has already; at order 2 only arcs left out of
        every tree, the parser's reach, as no part with such an arc is scored either).
        `tables`: x's label tables
        made already, with these weights and at this scale (`label_tables`,
        `window_label_tables`; nothing checks it); `between`:
        its in-between tables, shared with its sentence's other windows (`cluster_scores`)."""
        w = self.weights if weights is None else weights
        t = x.table
        threads = threads if _threaded(x, threads) else 1
        if known is None and threads == 1 and tables is None:
            label, label_score, label_sum = score_labels(
                t.attrs, t.feats_ptr, t.feats, w, self.keys, self.label_keys,
                len(self.labels), scale, with_sum)
        else:
            tables, exps = tables or self.label_tables(x, scale, with_sum, w)
            N = len(t) + 1
            label = np.zeros((N, N), dtype=np.int64)
            label_score = np.full((N, N), -np.inf)
            label_sum = np.full((N, N) if with_sum else (0, 0), -np.inf)
            skip = NO_SKIP if known is None else known
            _in_threads(lambda lo, hi: label_rows(tables, scale, lo, hi, label, label_score,
                                                  label_sum, skip, exps), N, threads)
        return Scores(self._arc_scores(x, w, combine, scale, threads, known, between), label,
                      label_score, label_sum, *self.part_scores(x, w, scale, with_sum,
                                                                known=known))

    def label_tables(self, x: Encoded, scale: float = 1.0, with_sum: bool = True,
                     weights: np.ndarray | None = None) -> tuple:
        """(the label tables of x, their exponentials at `scale` or `NO_EXPS`), as
        `scores` reads them (`templates.label_tables`, `templates.label_exps`: the
        exponentials where the log-sum-exp is wanted, for sentences of `PRODUCTS` words
        or more, as `templates.score_labels` does; one compiled call)."""
        t = x.table
        w = self.weights if weights is None else weights
        return label_tables(t.attrs, t.feats_ptr, t.feats, w, self.keys, self.label_keys,
                            len(self.labels), scale, with_sum and len(t) >= PRODUCTS)

    def window_label_tables(self, paragraph: tuple, x: Encoded, a: int,
                            scale: float = 1.0) -> tuple:
        """`label_tables` of x, the words a.. of the sentence whose label tables (with
        their exponentials at `scale`) are `paragraph`, cut from them
        (`templates.window_label_rows`)."""
        (token, pair, tag, distance), (Et, Mt, Ep, Mp, Ed, Md) = paragraph
        t = x.table
        if len(t) < PRODUCTS:
            Et, Mt = NO_EXPS[:2]
        rows, tags, Et, Mt = window_label_rows(token, tag, Et, Mt, a, t.attrs, t.feats_ptr,
                                               t.feats, self.weights, self.keys,
                                               self.label_keys, scale)
        return (rows, pair, tags, distance), \
            ((Et, Mt, Ep, Mp, Ed, Md) if Et.shape[0] else NO_EXPS)

    @staticmethod
    def _entries(x: Encoded, size: int, grandparents: bool, known: np.ndarray | None = None):
        """The sentence's parts' entries (`arborparse.linear.parts.part_entries`, with the
        `grandparents` or not; without the parts of an arc set in `known`) and the weight
        indices of the entries' features: (sib, grand, indices, ptr)."""
        attrs = x.table.attrs
        sib, grand, keys = part_entries(attrs, grandparents,
                                        NO_SKIP if known is None else known)
        return (sib, grand, *entry_indices(attrs, keys, size))

    def check_fits(self, words: int, where: str = "", marginals: bool = False,
                   from_text: bool = False, every_part: bool = False) -> None:
        """Refuse (`ArborparseError`, after `where`) a sentence of `words` words whose
        parse would not fit in the memory free (`arborparse.memory`; `from_text`: a
        sentence of raw text): its arcs take `ARC_BYTES`, an order-2 model's parts
        `PART_BYTES` (those `_parts_of` makes), each for the best tree or, with
        `marginals`, for its marginals (or MBR tree) too, the reach or not."""
        parts = PART_BYTES[self._parts_of(words, every_part)][marginals] \
            if self.order == 2 else 0
        memory.check_fits(words, ARC_BYTES[marginals], parts, where, "this order-2 model",
                          "parse it with an order-1 model (arborparse train --order 1)",
                          from_text)

    def _parts_of(self, words: int, every_part: bool = False) -> str:
        """The parts scored for a sentence of `words` words: the model's, but siblings alone
        past `GRAND_WORDS` words, where the grandparents' best tree and marginals take
        O(n⁴) time (15 s for the best tree of 300 words, where siblings alone take 0.1 s),
        and none (`ARCS`: the arcs alone, as an order-1 model's) past `SIBLING_WORDS`, where
        the siblings' O(n³) memory passes a gigabyte (18 GB at 1,000 words); unless
        `every_part` (the trainers of marginals: their gradient needs them all)."""
        if every_part or words <= GRAND_WORDS:
            return self.second_order
        return SECOND_ORDER[0] if words <= SIBLING_WORDS else ARCS

    def part_scores(self, x: Encoded, weights: np.ndarray | None = None, scale: float = 1.0,
                    marginals: bool = False, every_part: bool = False,
                    known: np.ndarray | None = None
                    ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The part scores scale × w · f: sib[h, m, s] and grand[g, h, m], each (n+1, n+1,
        n+1) (None where the model has no such parts, grand None past `GRAND_WORDS` words
        and both past `SIBLING_WORDS`, unless `every_part`: `_parts_of`; 0 where (h, m, s)
        or (g, h, m) is no part of any tree, and where one of its arcs is set in `known`,
        the arcs left out, as `scores` takes them). A sentence whose parts would not fit in
        memory (with their `marginals` to come, if said) is refused (`check_fits`)."""
        n = len(x.table)
        parts = self._parts_of(n, every_part)
        if self.order == 1 or parts == ARCS:
            return None, None
        self.check_fits(n, marginals=marginals, every_part=every_part)
        grandparents = parts == SECOND_ORDER[1]
        w = self.weights if weights is None else weights
        sib, grand, indices, ptr = self._entries(x, w.shape[0], grandparents, known)
        values = scale * entry_values(w, indices, ptr)
        return expand(sib, values), expand(grand, values) if grandparents else None

    def add_part_expectations(self, x: Encoded, mu_sib: np.ndarray,
                              mu_grand: np.ndarray | None, out: np.ndarray) -> None:
        """out += Σ mu_sib[h, m, s] f(h, m, s) + Σ mu_grand[g, h, m] f(g, h, m), over the
        parts of the sentence (e.g. the part marginals minus the gold tree's parts; all of
        them: `part_scores` with `every_part`)."""
        if self.grandparents and mu_grand is None:
            raise ValueError("a model with grandparents needs their marginals too (part "
                             "scores made with every_part)")
        sib, grand, indices, ptr = self._entries(x, out.shape[0], self.grandparents)
        counts = np.zeros(len(ptr) - 1)
        reduce(sib, mu_sib, counts)
        if self.grandparents:
            reduce(grand, mu_grand, counts)
        scatter(counts, indices, ptr, out)

    def tree_part_features(self, x: Encoded, heads: np.ndarray, every_part: bool = False
                           ) -> np.ndarray:
        """The weight indices of the features of the second-order parts of the tree
        `heads`, one per occurrence (empty for a first-order model): those `part_scores`
        scores (`_parts_of`: past `GRAND_WORDS` words no grandparents, past `SIBLING_WORDS`
        none, unless `every_part`)."""
        parts = self._parts_of(len(heads) - 1, every_part)
        if self.order == 1 or parts == ARCS:
            return np.empty(0, dtype=np.int64)
        sib, grand = second_order.parts(np.asarray(heads, dtype=np.int64))
        if parts != SECOND_ORDER[1]:
            grand = grand[:0]
        attrs = x.table.attrs
        return entry_indices(attrs, tree_entries(attrs, sib, grand),
                             self.weights.shape[0])[0]

    def labeled_scores(self, x: Encoded, weights: np.ndarray | None = None, scale: float = 1.0,
                       posteriors: bool = False):
        """s(h, m, l) for every arc and label under the weights scale × `weights`, shape
        (n+1, n+1, L): the scores whose exponentials define P(tree | sentence) ∝
        exp Σ s(h, m, l). With `posteriors`, also P(z | arc) (K, n+1, n+1), for
        `add_expectations` (None for one cluster)."""
        w = self.weights if weights is None else weights
        t = x.table
        labels = scale * label_scores(t.attrs, t.feats_ptr, t.feats, w, self.keys,
                                      self.label_keys, len(self.labels))
        if self.clusters == 1 or not posteriors:
            S = self._arc_scores(x, w, "sum", scale)[:, :, None] + labels
            return (S, None) if posteriors else S
        A = scale * self.cluster_scores(x, w)
        from scipy.special import logsumexp, softmax

        with np.errstate(invalid="ignore"):
            arc = logsumexp(A, axis=0)
            P = np.nan_to_num(softmax(A, axis=0))
        return arc[:, :, None] + labels, P

    def add_expectations(self, x: Encoded, D: np.ndarray, out: np.ndarray,
                         posteriors: np.ndarray | None = None) -> None:
        """out += Σ_{h,m,l} D[h, m, l] ∂s(h, m, l)/∂w, D shaped like `labeled_scores`:
        the arc and label features, the arc features of cluster z weighted by P(z | arc)
        (`posteriors` from `labeled_scores`; needed when there are clusters)."""
        t = self._table(x)
        size = out.shape[0]
        arc = D.sum(axis=2)[None]
        if self.clusters > 1:
            if posteriors is None:
                raise ValueError("a model with clusters needs the cluster posteriors")
            arc = arc * posteriors
        add_arc_expectations(t.attrs, t.feats_ptr, t.feats, arc, self.keys, size, x.buf, out,
                             self.squeeze)
        add_label_expectations(t.attrs, t.feats_ptr, t.feats, D, self.keys, self.label_keys,
                               len(self.labels), size, x.buf, out)

    def arc_features(self, x: Encoded, heads, words, labels) -> tuple[np.ndarray, np.ndarray]:
        """Weight indices of the features of the labeled arcs heads[i] -> words[i] with
        labels[i]: (indices, ptr), arc i owning ``indices[ptr[i]:ptr[i+1]]``; features
        unknown to a dictionary are dropped."""
        t = self._table(x)
        return labeled_arc_indices(t.attrs, t.feats_ptr, t.feats,
                                   np.asarray(heads, dtype=np.int64),
                                   np.asarray(words, dtype=np.int64),
                                   np.asarray(labels, dtype=np.int64), self.keys,
                                   self.label_keys, len(self.labels), self.weights.shape[0],
                                   x.buf, self.squeeze)

    def parts(self, decoder: str, single_root: bool, temperature: float = 1.0):
        """(header, arrays) of a model file (`arborparse.io.model_files`)."""
        header = {"labels": self.labels, "decoder": decoder, "single_root": single_root,
                  "hashed": self.hashed, "clusters": self.clusters, "squeeze": self.squeeze,
                  "order": self.order, "second_order": self.second_order,
                  "suffixes": self.suffixes, "temperature": temperature}
        return header, {"weights": self.weights.astype(np.float32), "keys": self.keys,
                        "label_keys": self.label_keys}

    @classmethod
    def from_parts(cls, header: dict, arrays: dict, path) -> LinearModel:
        """The model of a file's header and arrays (it sets ``temperature`` in the header,
        1 for files written before it existed, and ``label_temperature``, the temperature
        for files written before it; files without ``order`` are first-order,
        those without ``suffixes`` read none);
        weights stay float32 (half the memory traffic when scoring). Raises
        ModelFileError, naming `path`, for what is wrong."""
        for name in ("weights", "keys", "label_keys"):
            if name not in arrays:
                raise files.ModelFileError(f"{path}: the model file has no {name!r} array")
        try:
            labels = header["labels"]
            if not isinstance(labels, list) or not labels or \
                    not all(isinstance(label, str) and label for label in labels):
                raise ValueError("'labels' must be a non-empty list of labels")
            model = cls(arrays["weights"], labels,
                        arrays["keys"].astype(np.uint64), arrays["label_keys"].astype(np.uint64),
                        int(header["clusters"]), bool(header["squeeze"]),
                        header.get("order", 1), header.get("second_order", SECOND_ORDER[0]),
                        bool(header.get("suffixes", False)))
            # files saved before calibration have no temperature: 1 is what they meant
            header["temperature"] = float(header.get("temperature", 1.0))
            # files saved before the labels had a temperature of their own used T for both
            header["label_temperature"] = float(header.get("label_temperature",
                                                           header["temperature"]))
            for name in ("temperature", "label_temperature"):
                if not 0 < header[name] < float("inf"):
                    raise ValueError(f"{name!r} must be a number > 0")
            size = model.weights.shape
            expected = len(model.keys) + len(model.label_keys) * len(labels)
            if len(size) != 1 or (model.hashed and (size[0] < 2 or size[0] & (size[0] - 1))) \
                    or (not model.hashed and size[0] != expected):
                raise ValueError(f"the weights have shape {size}, expected "
                                 + ("a power of two" if model.hashed else f"({expected},)"))
        except (KeyError, TypeError, ValueError) as e:
            raise files.ModelFileError(f"{path}: the model file's header is invalid ({e})") from e
        return model


def gold_feature_keys(encoded: list[Encoded], heads: list[np.ndarray], squeeze: bool = False):
    """The sorted arc and label feature hashes of gold trees: an exact dictionary (and,
    counted, the size of the feature set)."""
    arcs, labels = [], []
    for x, h in zip(encoded, heads):
        t = x.table
        a, b = labeled_arc_hashes(t.attrs, t.feats_ptr, t.feats, h[1:],
                                  np.arange(1, len(h), dtype=np.int64), x.buf, squeeze)
        arcs.append(np.unique(a))
        labels.append(np.unique(b))
    return np.unique(np.concatenate(arcs)), np.unique(np.concatenate(labels))


def distribution(S: np.ndarray, sib: np.ndarray | None, grand: np.ndarray | None,
                 projective: bool, single_root: bool):
    """(log Z, μ, μ_sib, μ_grand) of P(tree, labels) ∝ exp(Σ S[h, m, l] + its parts'
    scores): μ (n+1, n+1, L) the labeled arc marginals, μ_sib and μ_grand the part marginals
    (None where there are no such parts). With parts (second order) the trees are
    projective whatever `projective` says: the labels are summed out of S and each arc's
    marginal shared among its labels by P(l | arc)."""
    if sib is None:
        return (*trees.log_partition_and_marginals(S, projective, single_root), None, None)
    from scipy.special import logsumexp

    with np.errstate(invalid="ignore"):  # -inf where there is no arc
        folded = logsumexp(S, axis=2)
        log_z, arcs, mu_sib, mu_grand = second_order.log_partition_and_marginals(
            folded, sib, grand, single_root)
        mu = arcs[:, :, None] * labels_given_arcs(S, folded)
    return log_z, mu, mu_sib, mu_grand


def decode(scores: Scores, decoder: str, single_root: bool) -> tuple[np.ndarray, np.ndarray]:
    """The best tree and its labels: (heads, labels), both (n+1,) with -1 at index 0."""
    if scores.sib is None:
        heads = best_tree(scores.total, decoder == "eisner", single_root)
    else:
        best = second_order.eisner if decoder == "eisner" else second_order.approximate
        heads = best(scores.total, scores.sib, scores.grand, single_root)
    if heads is None:
        raise NonFiniteScores(NO_TREE)
    return heads, arc_labels(scores.label, heads)

