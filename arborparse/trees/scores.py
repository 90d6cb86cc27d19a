"""Checking score arrays and folding labels into arcs."""

from __future__ import annotations

import numpy as np
from numba import njit

NOT_FINITE = "scores must not contain NaN or +inf (-inf forbids an arc)"
NO_TREE = "no tree has a finite score (too many arcs are -inf)"


class NonFiniteScores(ValueError):
    """Scores with NaN or +inf (`NOT_FINITE`), or under which no tree has a finite score
    (`NO_TREE`); a trainer whose weights diverged meets it (`arborparse.training.keeps_best`
    says so)."""


def check_scores(S, labeled_ok: bool = True) -> np.ndarray:
    """S as a float64 array of shape (n+1, n+1) or (n+1, n+1, L), n >= 1, with no NaN or +inf.

    -inf is allowed and forbids an arc. Raises ValueError with what is wrong.
    """
    S = np.asarray(S, dtype=np.float64)
    if S.ndim not in ((2, 3) if labeled_ok else (2,)) or S.shape[0] != S.shape[1]:
        want = "(n+1, n+1) or (n+1, n+1, L)" if labeled_ok else "(n+1, n+1)"
        raise ValueError(f"scores must have shape {want}, got {S.shape}")
    if S.shape[0] < 2:
        raise ValueError("scores must cover the root and at least one word (n >= 1)")
    if S.ndim == 3 and S.shape[2] < 1:
        raise ValueError("labeled scores need at least one label")
    if np.isnan(S).any() or np.isposinf(S).any():
        raise NonFiniteScores(NOT_FINITE)
    return S


def fold_labels(S: np.ndarray) -> np.ndarray:
    """Unlabeled scores log Σ_l exp S[h, m, l] of labeled scores (the sum over labels, §3.4;
    the labels are the last axis)."""
    top = S.max(axis=-1)
    safe = np.where(np.isfinite(top), top, 0.0)
    shifted = np.subtract(S, safe[..., None])  # one temporary of S's size, reused
    np.exp(shifted, out=shifted)
    with np.errstate(divide="ignore"):
        return np.log(shifted.sum(axis=-1)) + safe


def labels_given_arcs(S: np.ndarray, folded: np.ndarray | None = None) -> np.ndarray:
    """P(l | arc) ∝ exp S[..., l] of labeled scores S (labels the last axis), 0 on the arcs
    not scored (every label -inf); `folded`: `fold_labels` of S where the caller has it."""
    folded = fold_labels(S) if folded is None else folded
    with np.errstate(invalid="ignore"):  # -inf - -inf on the arcs not scored
        return np.nan_to_num(np.exp(S - folded[..., None]))


def arc_labels(best: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """The label of each word's arc in a tree: best[heads[m], m]; -1 at index 0."""
    labels = np.full(len(heads), -1, dtype=np.int64)
    labels[1:] = best[heads[1:], np.arange(1, len(heads))]
    return labels


@njit(cache=True, nogil=True)
def allowed_best(row, head, root):
    """The best label of a word's arc by its scores `row` (L,) where HEAD 0 and the label
    `root` go together (Universal Dependencies: the root word, and only it, is ``root``):
    `root` for an arc from 0, the best other label for any other arc; with root -1 (a
    label set without it), the best label (`root` where it is the only one)."""
    if root >= 0 and head == 0:
        return root
    best = -1
    for label in range(row.shape[0]):
        if label != root and (best < 0 or row[label] > row[best]):
            best = label
    return root if best < 0 else best  # `root` the only label: nothing else to give


def allowed_scores(scores: np.ndarray, heads: np.ndarray, root: int) -> np.ndarray:
    """`scores` (W, L) of the labels of W arcs into words whose heads are `heads` (W,), those
    `allowed_best` never gives at -inf (the root label's 0 where it is the only one): a new
    array, whose argmax over each row of finite scores is `allowed_best`'s label."""
    scores = np.array(scores, dtype=np.float64)
    if root >= 0 and scores.shape[1] > 1:
        from_root = np.asarray(heads) == 0
        scores[from_root] = -np.inf
        scores[from_root, root] = 0.0
        scores[~from_root, root] = -np.inf
    return scores


def force_arc(S: np.ndarray, h: int, m: int) -> None:
    """Keep h -> m as the only arc into m allowed by S (in place): every other is -inf."""
    keep = S[h, m]
    S[:, m] = -np.inf
    S[h, m] = keep


def tree_score(S: np.ndarray, heads: np.ndarray) -> float:
    """Σ_m S[heads[m], m] over words 1..n."""
    m = np.arange(1, len(heads))
    return float(S[heads[1:], m].sum())
