"""The edge-factored model s(h, m, l) = w · f(x, h, m) + w · g(x, h, m, l).

With K > 1 hidden clusters (Smith & Smith 2007, §5, Eq. 18) every arc feature is
conjoined with a cluster z and the arc part is summed out:
s(h, m, l) = log Σ_z exp(w · f(x, h, m, z)) + w · g(x, h, m, l). The model stays
edge-factored, so trees are scored, decoded and marginalized as before; the label
features (our labeled extension) are not conjoined. ``max-z`` scoring keeps each arc's
best cluster instead of the sum.

Decoding picks the best label of every arc first (exact for first-order models), then
the best tree under arc score + best label score, non-projective (MST) or projective
(Eisner), single- or multi-root.

Weights are indexed by hashing (a power-of-two vector; the default) or by an exact
dictionary of the features of the gold trees (sorted hashes of arc features and of
label features; see `arborparse.linear.templates.index` and `label_index`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from arborparse.io import model_files as files
from arborparse.io.conllu import Sentence
from arborparse.linear.options import DECODERS
from arborparse.linear.templates import (
    add_arc_expectations,
    add_label_expectations,
    arc_capacity,
    label_scores,
    labeled_arc_hashes,
    labeled_arc_indices,
    score_arcs,
    score_labels,
)
from arborparse.linear.tokens import TokenTable, encode
from arborparse.trees.decode import best_tree
from arborparse.trees.scores import arc_labels

KIND = "linear"
OLD_KINDS = ("first-order",)  # the kind's name in files of arborparse 0.1
VERSION = 2
COMBINES = ("sum", "max")


@dataclass
class Encoded:
    """A sentence ready for scoring: its token table and a scratch buffer."""

    table: TokenTable
    buf: np.ndarray

    @classmethod
    def of(cls, sentence: Sentence) -> Encoded:
        table = encode(sentence)
        widest = int(np.diff(table.feats_ptr).max(initial=0))
        return cls(table, np.empty(arc_capacity(len(table), widest), dtype=np.uint64))


@dataclass
class Scores:
    """arc[h, m]; label[h, m] the best label of the arc and label_score[h, m] its score;
    label_sum[h, m] log Σ_l exp of the label scores (empty unless asked for)."""

    arc: np.ndarray
    label: np.ndarray
    label_score: np.ndarray
    label_sum: np.ndarray

    @property
    def total(self) -> np.ndarray:
        """The score of each arc with its best label (the MAP tree's arc scores)."""
        return self.arc + self.label_score

    @property
    def folded(self) -> np.ndarray:
        """log Σ_l exp s(h, m, l): the arc scores of the tree distribution, labels summed
        out (needs label_sum)."""
        return self.arc + self.label_sum

    def label_probabilities(self, heads: np.ndarray) -> np.ndarray:
        """P(best label | arc) of each word's arc in the tree `heads` (needs label_sum)."""
        m = np.arange(1, len(heads))
        return np.exp(self.label_score[heads[1:], m] - self.label_sum[heads[1:], m])


@dataclass
class LinearModel:
    """Weights, the label set, the feature dictionary (empty keys: hashing) and the number
    of hidden arc clusters.

    weights : hashed, any power-of-two size; with a dictionary, len(keys) arc feature
        weights then len(label_keys) blocks of len(labels) label feature weights
    clusters : K; 1 is the plain linear model (clusters need hashed weights)
    squeeze : without the arc templates that pair both words and the POS four-grams
        (Smith & Smith 2007, §5.2)
    """

    weights: np.ndarray
    labels: list[str]
    keys: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.uint64))
    label_keys: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.uint64))
    clusters: int = 1
    squeeze: bool = False

    def __post_init__(self):
        if self.clusters < 1 or (self.clusters > 1 and not self.hashed):
            raise ValueError("clusters must be >= 1, and more than one needs hashed weights")

    @property
    def hashed(self) -> bool:
        return self.keys.shape[0] == 0

    @classmethod
    def hashing(cls, bits: int, labels: list[str], clusters: int = 1,
                squeeze: bool = False) -> LinearModel:
        return cls(np.zeros(1 << bits), labels, clusters=clusters, squeeze=squeeze)

    @classmethod
    def dictionary(cls, keys, label_keys, labels: list[str]) -> LinearModel:
        return cls(np.zeros(len(keys) + len(label_keys) * len(labels)), labels, keys, label_keys)

    def cluster_scores(self, x: Encoded, weights: np.ndarray | None = None) -> np.ndarray:
        """w · f(x, h, m, z) for every cluster and arc, shape (K, n+1, n+1)."""
        t = x.table
        w = self.weights if weights is None else weights
        return score_arcs(t.attrs, t.feats_ptr, t.feats, w, self.keys, self.clusters, x.buf,
                          self.squeeze)

    def _arc_scores(self, x: Encoded, w: np.ndarray, combine: str, scale: float = 1.0):
        A = scale * self.cluster_scores(x, w)
        if self.clusters == 1:
            return A[0]
        if combine not in COMBINES:
            raise ValueError(f"unknown combine {combine!r}; choose one of {COMBINES}")
        from scipy.special import logsumexp  # here: a third of parsing's start-up otherwise

        with np.errstate(invalid="ignore"):  # -inf everywhere off the arcs
            return logsumexp(A, axis=0) if combine == "sum" else A.max(axis=0)

    def scores(self, x: Encoded, weights: np.ndarray | None = None, combine: str = "sum",
               scale: float = 1.0, with_sum: bool = False) -> Scores:
        """Arc scores (clusters summed out, or their best with ``combine="max"``) and each
        arc's best label with its score, under the weights scale × `weights`; `with_sum`
        also log Σ_l exp of each arc's label scores. O(n²) memory whatever the labels."""
        w = self.weights if weights is None else weights
        t = x.table
        label, label_score, label_sum = score_labels(
            t.attrs, t.feats_ptr, t.feats, w, self.keys, self.label_keys, len(self.labels),
            x.buf, scale, with_sum)
        return Scores(self._arc_scores(x, w, combine, scale), label, label_score, label_sum)

    def labeled_scores(self, x: Encoded, weights: np.ndarray | None = None, scale: float = 1.0,
                       posteriors: bool = False):
        """s(h, m, l) for every arc and label under the weights scale × `weights`, shape
        (n+1, n+1, L): the scores whose exponentials define P(tree | sentence) ∝
        exp Σ s(h, m, l). With `posteriors`, also P(z | arc) (K, n+1, n+1), for
        `add_expectations` (None for one cluster)."""
        w = self.weights if weights is None else weights
        t = x.table
        labels = scale * label_scores(t.attrs, t.feats_ptr, t.feats, w, self.keys,
                                      self.label_keys, len(self.labels), x.buf)
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
        t = x.table
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
        t = x.table
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
                  "temperature": temperature}
        return header, {"weights": self.weights.astype(np.float32), "keys": self.keys,
                        "label_keys": self.label_keys}

    @classmethod
    def from_parts(cls, header: dict, arrays: dict, path) -> LinearModel:
        """The model of a file's header and arrays (it sets ``temperature`` in the header,
        1 for files written before it existed); weights stay float32 (half the memory
        traffic when scoring). Raises ModelFileError, naming `path`, for what is wrong."""
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
                        int(header["clusters"]), bool(header["squeeze"]))
            # files saved before calibration have no temperature: 1 is what they meant
            header["temperature"] = float(header.get("temperature", 1.0))
            if not 0 < header["temperature"] < float("inf"):
                raise ValueError("'temperature' must be a number > 0")
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


def decode(scores: Scores, decoder: str, single_root: bool) -> tuple[np.ndarray, np.ndarray]:
    """The best tree and its labels: (heads, labels), both (n+1,) with -1 at index 0."""
    heads = best_tree(scores.total, decoder == "eisner", single_root)
    if heads is None:
        raise ValueError("no tree has a finite score")
    return heads, arc_labels(scores.label, heads)

