"""Properties of a tree given as ``heads`` (``heads[0] = -1``): cycles and projectivity."""

from __future__ import annotations

import numpy as np


def find_cycle(heads: np.ndarray) -> list[int] | None:
    """The words of a cycle in ``heads`` (``heads[0] = -1``), or None if it is a tree."""
    n = len(heads) - 1
    state = np.zeros(n + 1, dtype=np.int8)  # 0 unseen, 1 on current path, 2 reaches root
    state[0] = 2
    for start in range(1, n + 1):
        path = []
        m = start
        while state[m] == 0:
            state[m] = 1
            path.append(m)
            m = heads[m]
        if state[m] == 1:
            return path[path.index(m):]
        state[path] = 2
    return None


def nonprojective_arcs(heads: np.ndarray) -> np.ndarray:
    """Boolean mask over words 1..n: is the arc into word m non-projective?

    The arc h -> m is non-projective when some word strictly between h and m is not
    a descendant of h. ``heads`` must be a tree (see `find_cycle`).
    """
    n = len(heads) - 1
    mask = np.zeros(n, dtype=bool)
    for m in range(1, n + 1):
        h = heads[m]
        if h <= 0:
            continue
        for k in range(min(h, m) + 1, max(h, m)):
            a = k
            while a > 0 and a != h:
                a = heads[a]
            if a != h:
                mask[m - 1] = True
                break
    return mask


def is_projective(heads: np.ndarray) -> bool:
    """True when no arc of the tree is non-projective."""
    return not nonprojective_arcs(heads).any()
