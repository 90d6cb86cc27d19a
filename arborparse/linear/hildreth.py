"""Hildreth's algorithm for the MIRA quadratic programs (as in MSTParser).

    min ½‖Σ_j α_j a_j‖² - Σ_j α_j b_j   s.t. 0 ≤ α_j ≤ C

the dual of: min ‖w' - w‖² s.t. a_j · w' ≥ a_j · w + b_j, where b_j is how far constraint j
is from holding (loss minus margin). Coordinate ascent on the most violated KKT condition.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def hildreth(G, b, C, max_iter=10000, eps=1e-8):
    """The dual variables α (V,) for the Gram matrix G (V, V) of the a_j and the violations b.

    Constraints whose vectors are zero (G[j, j] = 0) cannot be met and keep α_j = 0.
    """
    V = b.shape[0]
    alpha = np.zeros(V)
    F = b.copy()
    for _ in range(max_iter):
        best = eps
        i = -1
        for j in range(V):
            if G[j, j] <= 0.0:
                continue
            if alpha[j] <= 0.0:
                v = F[j]
            elif alpha[j] >= C:
                v = -F[j]
            else:
                v = abs(F[j])
            if v > best:
                best = v
                i = j
        if i < 0:
            break
        step = F[i] / G[i, i]
        new = min(max(alpha[i] + step, 0.0), C)
        add = new - alpha[i]
        alpha[i] = new
        for j in range(V):
            F[j] -= add * G[j, i]
    return alpha
