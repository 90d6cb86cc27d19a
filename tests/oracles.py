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
    logZ, _, mu = _distribution(S, trees, scores)
    return trees, scores, logZ, mu


def _distribution(S: np.ndarray, trees: np.ndarray, scores: np.ndarray):
    """(log Z, each tree's probability, arc marginals) of trees with these scores."""
    logZ = logsumexp(scores)
    p = np.exp(scores - logZ)
    mu = np.zeros_like(S)
    m = np.arange(1, trees.shape[1])
    for t, w in zip(trees, p):
        mu[t[1:], m] += w
    return logZ, p, mu


def second_order_parts(trees: np.ndarray):
    """Sibling and grandparent parts of each tree, as boolean indicator arrays.

    ``sib[t, h, m, s]`` is set when, in tree t, m is a child of h whose next sibling towards h
    on the same side is s (s == h when m is h's closest child on that side); ``grand[t, g, h, m]``
    when h -> m and g -> h (h > 0).
    """
    T, N = trees.shape
    child = np.zeros((T, N, N), dtype=bool)  # child[t, h, m]: h -> m
    rows = np.repeat(np.arange(T), N - 1)
    child[rows, trees[:, 1:].ravel(), np.tile(np.arange(1, N), T)] = True
    sib = np.zeros((T, N, N, N), dtype=bool)
    for h in range(N):
        prev = np.full(T, h)
        for m in range(h + 1, N):  # right children, outward
            on = child[:, h, m]
            sib[on, h, m, prev[on]] = True
            prev = np.where(on, m, prev)
        prev = np.full(T, h)
        for m in range(h - 1, 0, -1):  # left children, outward
            on = child[:, h, m]
            sib[on, h, m, prev[on]] = True
            prev = np.where(on, m, prev)
    grand = np.zeros((T, N, N, N), dtype=bool)
    for m in range(1, N):
        h = trees[:, m]
        inner = h > 0
        t = np.arange(T)[inner]
        grand[t, trees[t, h[inner]], h[inner], m] = True
    return sib, grand


def brute_second_order(S, sib, grand, projective: bool, single_root: bool):
    """(trees, scores, log Z, arc, sibling and grandparent marginals) by enumeration.

    A tree scores Σ S[h, m] + Σ sib[h, m, s] over its sibling parts + Σ grand[g, h, m] over its
    grandparent parts (``grand`` may be None).
    """
    n = S.shape[0] - 1
    trees = all_trees(n, projective, single_root)
    psib, pgrand = second_order_parts(trees)
    scores = scores_of(S, trees) + (psib * sib).sum(axis=(1, 2, 3))
    if grand is not None:
        scores = scores + (pgrand * grand).sum(axis=(1, 2, 3))
    logZ, p, mu = _distribution(S, trees, scores)
    mu_sib = np.tensordot(p, psib, axes=1)
    mu_grand = np.tensordot(p, pgrand, axes=1)
    return trees, scores, logZ, mu, mu_sib, mu_grand


def recovered_temperatures(parser, sentences, draw, labels, seed: int = 0) -> dict:
    """The temperatures `parser.calibrate` fits to `sentences` given trees drawn by
    ``draw(sentence, rng)`` -> (heads, the label probabilities of each word (n, L)) and
    labels drawn from those; checked to be the parser's after the fit."""
    rng = np.random.default_rng(seed)
    sampled = []
    for sentence in sentences:
        heads, p = draw(sentence, rng)
        chosen = [labels[rng.choice(len(labels), p=row / row.sum())] for row in p]
        sampled.append(sentence.with_tree(heads, chosen))
    fitted = parser.calibrate(sampled)
    assert fitted == {"temperature": parser.temperature,
                      "label_temperature": parser.label_temperature}
    return fitted
