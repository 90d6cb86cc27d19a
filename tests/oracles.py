"""Brute-force enumerators: every head assignment of n words, kept if it is a tree of the class."""

from functools import lru_cache

import numpy as np
from scipy.special import logsumexp


@lru_cache(maxsize=None)
def all_trees(n: int, projective: bool, single_root: bool) -> np.ndarray:
    """Every tree of n words in the class, as an array (T, n+1) of heads (column 0 is -1)."""
    grids = np.meshgrid(*[np.arange(n + 1)] * n, indexing="ij")
    heads = np.stack([g.ravel() for g in grids], axis=1)  # (all, n): head of words 1..n
    m = np.arange(1, n + 1)
    ok = (heads != m).all(axis=1)
    full = np.concatenate([np.zeros((len(heads), 1), dtype=heads.dtype), heads], axis=1)
    cur = np.tile(np.arange(n + 1), (len(heads), 1))
    for _ in range(n):
        cur = np.take_along_axis(full, cur, axis=1)
    ok &= (cur == 0).all(axis=1)
    if single_root:
        ok &= (heads == 0).sum(axis=1) == 1
    if projective:
        lo = np.minimum(heads, m)
        hi = np.maximum(heads, m)
        a1, a2 = lo[:, :, None], lo[:, None, :]
        b1, b2 = hi[:, :, None], hi[:, None, :]
        crossing = (a1 < a2) & (a2 < b1) & (b1 < b2)
        ok &= ~crossing.any(axis=(1, 2))
    trees = full[ok].copy()
    trees[:, 0] = -1
    trees.setflags(write=False)
    return trees


def scores_of(S: np.ndarray, trees: np.ndarray) -> np.ndarray:
    m = np.arange(1, trees.shape[1])
    return S[trees[:, 1:], m].sum(axis=1)


def brute(S: np.ndarray, projective: bool, single_root: bool):
    """(trees, scores, log Z, marginals) by enumeration, for unlabeled (n+1, n+1) scores."""
    n = S.shape[0] - 1
    trees = all_trees(n, projective, single_root)
    scores = scores_of(S, trees)
    logZ = logsumexp(scores)
    p = np.exp(scores - logZ)
    mu = np.zeros_like(S)
    m = np.arange(1, n + 1)
    for t, w in zip(trees, p):
        mu[t[1:], m] += w
    return trees, scores, logZ, mu
