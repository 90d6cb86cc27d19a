"""Checking score arrays and folding labels into arcs."""

from __future__ import annotations

import numpy as np


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
        raise ValueError("scores must not contain NaN or +inf (-inf forbids an arc)")
    return S


def fold_labels(S: np.ndarray) -> np.ndarray:
    """Unlabeled scores log Σ_l exp S[h, m, l] of labeled scores (the sum over labels, §3.4)."""
    top = S.max(axis=2)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.exp(S - safe[..., None]).sum(axis=2)) + safe


def tree_score(S: np.ndarray, heads: np.ndarray) -> float:
    """Σ_m S[heads[m], m] over words 1..n."""
    m = np.arange(1, len(heads))
    return float(S[heads[1:], m].sum())
