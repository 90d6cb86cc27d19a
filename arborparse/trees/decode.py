"""Decoding: the best tree (MST or Eisner), labeled decoding, and exact k-best lists."""

from __future__ import annotations

import heapq

import numpy as np
from numba import njit

from arborparse.trees.arborescence import _mst
from arborparse.trees.projective import _eisner
from arborparse.trees.scores import NO_TREE, NonFiniteScores, arc_labels, check_scores, \
    force_arc, tree_score


@njit(cache=True, nogil=True)
def _best_tree(S, projective, single_root):
    """(heads, whether the best tree of S has a finite score)."""
    heads, ok = _eisner(S, single_root) if projective else _mst(S, single_root)
    if not ok:
        return heads, False
    total = 0.0
    for m in range(1, S.shape[0]):
        total += S[heads[m], m]
    return heads, np.isfinite(total)


@njit(cache=True, nogil=True)
def _best_trees(S, lengths, projective, single_root, heads):
    """The best tree of each sentence b of a padded batch S (B, N+1, N+1) of lengths n_b,
    into heads (B, N+1); returns the first b without a finite tree, or -1."""
    for b in range(S.shape[0]):
        n = lengths[b]
        tree, ok = _best_tree(np.ascontiguousarray(S[b, :n + 1, :n + 1]), projective,
                              single_root)
        if not ok:
            return b
        heads[b, :n + 1] = tree
    return -1


def best_tree(S: np.ndarray, projective: bool, single_root: bool):
    """Heads of the best tree of a checked (n+1, n+1) array, or None when no tree is finite."""
    heads, ok = _best_tree(S, projective, single_root)
    return heads if ok else None


def _decode(S, projective: bool, single_root: bool):
    S = check_scores(S)
    labels = None
    if S.ndim == 3:
        labels = S.argmax(axis=2)
        S = S.max(axis=2)
    heads = best_tree(S, projective, single_root)
    if heads is None:
        raise NonFiniteScores(NO_TREE)
    if labels is None:
        return heads
    return heads, arc_labels(labels, heads)


def mst(S, single_root: bool = True):
    """The maximum spanning arborescence (best non-projective tree). O(n²).

    Parameters
    ----------
    S : array, shape (n+1, n+1) or (n+1, n+1, L)
        ``S[h, m]`` is the score of the arc h -> m (index 0 is the root); column 0 and the
        diagonal are ignored; -inf forbids an arc. Labeled scores pick the best label per
        arc first, which is exact for arc-factored models.
    single_root : bool
        Exactly one word attaches to the root (exact, not "best tree then fix the root").

    Returns
    -------
    heads : ndarray of int, shape (n+1,), ``heads[0] = -1``
    labels : ndarray of int, shape (n+1,), ``labels[0] = -1`` (labeled scores only)
    """
    return _decode(S, False, single_root)


def eisner(S, single_root: bool = True):
    """The best projective tree by Eisner's algorithm. O(n³); O(n² R) where no arc longer than
    R words is allowed (-inf). Arguments as in `mst`."""
    return _decode(S, True, single_root)


def kbest(S, k: int, projective: bool = False, single_root: bool = True):
    """The k best trees exactly, best first, as a list of (score, heads).

    Lawler's partitioning: after taking the best tree of a subproblem, its remaining
    trees split into n disjoint subproblems (keep the arcs of words 1..i-1, forbid the
    arc of word i), each solved by the exact decoder with arcs forced or forbidden through
    -inf scores. O(k n) decoder calls: O(k n³) non-projective, O(k n⁴) projective. A
    waiting subproblem is kept as its constraints (each word's forced head, the arcs
    forbidden), O(n + k), not as its n x n scores: O(k n²) memory in all, not O(k n³).
    Fewer than k trees are returned when fewer exist.

    Parameters
    ----------
    S : array, shape (n+1, n+1)
    k : int, k >= 1
    """
    S = check_scores(S, labeled_ok=False)
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    N = S.shape[0]
    found = []
    heads = best_tree(S, projective, single_root)
    if heads is None:
        return found
    counter = 0
    queue = [(-tree_score(S, heads), counter, heads, np.full(N, -1), ())]
    while queue and len(found) < k:
        neg, _, heads, fixed, forbidden = heapq.heappop(queue)
        found.append((-neg, heads))
        if len(found) == k:
            break
        forced = S.copy()  # the subproblem's scores, rebuilt from its constraints
        for m in np.flatnonzero(fixed >= 0):
            force_arc(forced, fixed[m], m)
        for h, m in forbidden:
            forced[h, m] = -np.inf
        fixed = fixed.copy()
        for m in range(1, N):
            if fixed[m] < 0:  # a forced arc, forbidden, leaves no tree
                child = forced.copy()
                child[heads[m], m] = -np.inf
                alt = best_tree(child, projective, single_root)
                if alt is not None:
                    counter += 1
                    heapq.heappush(queue, (-tree_score(S, alt), counter, alt, fixed.copy(),
                                           (*forbidden, (heads[m], m))))
                force_arc(forced, heads[m], m)
                fixed[m] = heads[m]
    return found
