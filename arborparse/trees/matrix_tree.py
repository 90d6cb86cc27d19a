"""Non-projective trees: partition function and marginals by the Matrix-Tree Theorem.

Koo, Globerson, Carreras & Collins (2007), §3. With A[h, m] = exp(S[h, m]):

- multi-root: Z = det(L + diag(r)), L the Laplacian over words, r_m = A[0, m];
- single-root: Z = det(L̂), L̂ the Laplacian of the words with its first row replaced by r.

The marginals are the §3.2 formulas over the inverse of the same matrix.

Two exact routes, both O(n³):

- LAPACK LU of the matrix, after shifting column m of S by its maximum c_m (every
  modifier has exactly one head: log Z moves by c_m, the marginals not at all) and
  scaling each row by its largest magnitude ρ_i (computed in log space; log det moves by
  Σ ρ_i). Every exponent taken is ≤ 0. Used when the reciprocal condition number shows
  the factorization is accurate.
- Otherwise (and for short sentences, where it is faster), a subtraction-free
  elimination in log space, exact for any magnitudes of scores (`_eliminate`).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from scipy.linalg.lapack import dgecon, dgetrf, dgetrs

NEG_INF = -np.inf


def _scaled_matrix(S: np.ndarray, single_root: bool):
    """The row-scaled matrix M, its log row scales rho, the column-shifted log A, and Σ c."""
    N = S.shape[0]
    n = N - 1
    logA = S.astype(np.float64, copy=True)
    logA[np.arange(N), np.arange(N)] = NEG_INF
    logA[:, 0] = NEG_INF
    c = logA[:, 1:].max(axis=0)
    c = np.where(np.isfinite(c), c, 0.0)
    logA[:, 1:] -= c
    words = logA[1:, 1:]  # words[h-1, m-1]
    heads = logA if not single_root else logA[1:]
    with np.errstate(divide="ignore"):
        top = heads[:, 1:].max(axis=0)
        safe = np.where(np.isfinite(top), top, 0.0)
        log_diag = np.log(np.exp(heads[:, 1:] - safe).sum(axis=0)) + safe
    # log magnitudes and signs of the n x n matrix
    logmag = words.copy()
    logmag[np.arange(n), np.arange(n)] = log_diag
    sign = -np.ones((n, n))
    sign[np.arange(n), np.arange(n)] = 1.0
    if single_root:
        logmag[0] = logA[0, 1:]
        sign[0] = 1.0
    rho = logmag.max(axis=1)
    rho = np.where(np.isfinite(rho), rho, 0.0)
    M = sign * np.exp(logmag - rho[:, None])
    return M, rho, logA, c.sum()


# Below this many words the log-space elimination is faster than LAPACK; above it, the
# LU factorization is used whenever it is well conditioned (error about eps / rcond).
SMALL = 24
MIN_RCOND = 1e-6


def _factor(S: np.ndarray, single_root: bool):
    """LU of the scaled matrix and the log Z it gives, or None when it is ill-conditioned."""
    M, rho, logA, shift = _scaled_matrix(S, single_root)
    lu, piv, info = dgetrf(M)
    if info != 0:
        return None
    rcond, _ = dgecon(lu, np.abs(M).sum(axis=0).max(), norm="1")
    diag = np.diag(lu)
    swaps = np.count_nonzero(piv != np.arange(len(piv)))
    if rcond < MIN_RCOND or np.prod(np.sign(diag)) * (-1) ** swaps <= 0:
        return None
    logZ = float(np.log(np.abs(diag)).sum() + rho.sum() + shift)
    return lu, piv, rho, logA, logZ


def _clean(S: np.ndarray) -> np.ndarray:
    W = S.astype(np.float64, copy=True)
    W[np.arange(len(W)), np.arange(len(W))] = NEG_INF
    W[:, 0] = NEG_INF
    return W


def log_partition(S: np.ndarray, single_root: bool = True) -> float:
    """log Z over non-projective trees of the (n+1, n+1) score array S. O(n³)."""
    factored = None if len(S) - 1 <= SMALL else _factor(S, single_root)
    if factored is None:
        return float(_eliminate(_clean(S), single_root, False)[0])
    return factored[-1]


def marginals(S: np.ndarray, single_root: bool = True) -> tuple[float, np.ndarray]:
    """log Z and the arc marginals mu[h, m] (shape (n+1, n+1)) over non-projective trees. O(n³)."""
    factored = None if len(S) - 1 <= SMALL else _factor(S, single_root)
    if factored is None:
        return _eliminate(_clean(S), single_root, True)
    lu, piv, rho, logA, logZ = factored
    N = len(S)
    Minv, _ = dgetrs(lu, piv, np.eye(N - 1))  # Minv[j, i]
    mu = np.zeros((N, N))
    words = logA[1:, 1:]  # log A[h, m] for words, index [h-1, m-1]
    d = np.diag(Minv)  # Minv[m, m]
    # term with Linv[m, m] = Minv[m, m] exp(-rho_m); term with Linv[m, h] = Minv[m, h] exp(-rho_h)
    own = np.exp(words - rho[None, :]) * d[None, :]
    cross = np.exp(words - rho[:, None]) * Minv.T
    if single_root:
        own[:, 0] = 0.0
        cross[0, :] = 0.0
        mu[0, 1:] = np.exp(logA[0, 1:] - rho[0]) * Minv[:, 0]
    else:
        mu[0, 1:] = np.exp(logA[0, 1:] - rho) * d
    mu[1:, 1:] = own - cross
    mu[np.arange(N), np.arange(N)] = 0.0
    np.clip(mu, 0.0, 1.0, out=mu)
    return logZ, mu


@njit(cache=True)
def _lae(a, b):
    """log(exp(a) + exp(b)) without overflow."""
    if a == NEG_INF:
        return b
    if b == NEG_INF:
        return a
    if a > b:
        return a + np.log1p(np.exp(b - a))
    return b + np.log1p(np.exp(a - b))


@njit(cache=True)
def _eliminate(logW, single_root, want_grad):
    """Subtraction-free elimination in log space: log Z and (optionally) its gradient.

    The matrix of the Matrix-Tree Theorem is a Laplacian plus root weights; eliminating
    word k keeps that form (Grassmann-Taksar-Heyman): the arcs i -> j become
    A[i, j] + A[i, k] A[k, j] / p_k, the root weights r_j + A[k, j] r_k / p_k, and the pivot
    p_k is a sum of the remaining weights into k (plus r_k for multi-root trees). Every
    quantity is a sum of positive terms, so log Z is exact to rounding for any score
    magnitudes. Single-root trees take the first-order term in the root weights: pivots
    leave r out and the last pivot is the last root weight. The gradient (the arc
    marginals) is the reverse-mode derivative of the same steps. O(n³).
    """
    N = logW.shape[0]
    n = N - 1
    a = np.empty((n + 1, n, n))
    r = np.empty((n + 1, n))
    for i in range(n):
        r[0, i] = logW[0, i + 1]
        for j in range(n):
            a[0, i, j] = logW[i + 1, j + 1] if i != j else NEG_INF
    order = np.arange(n)
    pivots = np.empty(n)
    mu = np.zeros((N, N))
    logZ = 0.0
    for t in range(n):
        last = t == n - 1
        # pick the pivot node: order[t], or a later one whose pivot is not zero
        for s in range(t, n):
            k = order[s]
            p = r[t, k] if (last or not single_root) else NEG_INF
            if not last:
                for u in range(t, n):
                    i = order[u]
                    if i != k:
                        p = _lae(p, a[t, i, k])
            if p != NEG_INF:
                order[t], order[s] = order[s], order[t]
                break
        if p == NEG_INF:
            return NEG_INF, mu
        k = order[t]
        pivots[t] = p
        logZ += p
        a[t + 1] = a[t]
        r[t + 1] = r[t]
        for u in range(t + 1, n):
            i = order[u]
            aik = a[t, i, k]
            if aik != NEG_INF:
                for v in range(t + 1, n):
                    j = order[v]
                    if i != j and a[t, k, j] != NEG_INF:
                        a[t + 1, i, j] = _lae(a[t, i, j], aik + a[t, k, j] - p)
            if r[t, k] != NEG_INF and a[t, k, i] != NEG_INF:
                r[t + 1, i] = _lae(r[t, i], a[t, k, i] + r[t, k] - p)
    if not want_grad:
        return logZ, mu
    ga = np.zeros((n, n))
    gr = np.zeros(n)
    for t in range(n - 1, -1, -1):
        k = order[t]
        p = pivots[t]
        gp = 1.0
        for u in range(t + 1, n):
            j = order[u]
            g = gr[j]
            if g != 0.0:
                new = r[t + 1, j]
                y = a[t, k, j] + r[t, k] - p
                gr[j] = g * np.exp(r[t, j] - new)
                gy = g * np.exp(y - new)
                ga[k, j] += gy
                gr[k] += gy
                gp -= gy
            for v in range(t + 1, n):
                i = order[v]
                g = ga[i, j]
                if i == j or g == 0.0:
                    continue
                new = a[t + 1, i, j]
                x = a[t, i, k] + a[t, k, j] - p
                ga[i, j] = g * np.exp(a[t, i, j] - new)
                gx = g * np.exp(x - new)
                ga[i, k] += gx
                ga[k, j] += gx
                gp -= gx
        if t == n - 1 or not single_root:
            gr[k] += gp * np.exp(r[t, k] - p)
        if t < n - 1:
            for u in range(t + 1, n):
                i = order[u]
                ga[i, k] += gp * np.exp(a[t, i, k] - p)
    for i in range(n):
        mu[0, i + 1] = gr[i]
        for j in range(n):
            if i != j:
                mu[i + 1, j + 1] = ga[i, j]
    return logZ, mu
