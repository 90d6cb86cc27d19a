"""Non-projective trees: partition function and marginals by the Matrix-Tree Theorem.

Koo, Globerson, Carreras & Collins (2007), §3. With A[h, m] = exp(S[h, m]):

- multi-root: Z = det(L + diag(r)), L the Laplacian over words, r_m = A[0, m];
- single-root: Z = det(L̂), L̂ the Laplacian of the words with its first row replaced by r.

The marginals are the §3.2 formulas over the inverse of the same matrix.

Exact routes, all O(n³):

- LAPACK LU of the matrix, after shifting column m of S by its maximum c_m (every
  modifier has exactly one head: log Z moves by c_m, the marginals not at all). Used
  when the reciprocal condition number shows the factorization is accurate and the
  marginals land on the simplex. The compiled kernels `build_matrices` and `marginals_from_inverse`
  work on batches and also serve the batched PyTorch back end on CPU.
- Otherwise (and for short sentences, where it is faster), a subtraction-free elimination
  on column-scaled weights (`eliminate_scaled`: blocked, most of its work two matrix
  products per panel), accurate for any magnitudes of scores unless a pivot falls below
  e^-600 of its column's scale; then the same elimination in log space (`eliminate`),
  exact for any magnitudes but with a log-sum-exp in its inner loop.
"""

from __future__ import annotations

import functools
import threading

import numpy as np
from numba import njit

NEG_INF = -np.inf


@njit(cache=True, nogil=True)
def _column_shifts(S, lengths):
    """c[b, m]: the largest score of an arc into word m (0 where there is none, and at 0)."""
    B, N1, _ = S.shape
    c = np.zeros((B, N1))
    for b in range(B):
        L = lengths[b]
        c[b, 1:L + 1] = NEG_INF
        for h in range(L + 1):
            for m in range(1, L + 1):
                if h != m and S[b, h, m] > c[b, m]:
                    c[b, m] = S[b, h, m]
        for m in range(1, L + 1):
            if c[b, m] == NEG_INF:
                c[b, m] = 0.0
    return c


@njit(cache=True, nogil=True)
def _fill_matrices(M, roots, lengths, single_root):
    """Turn the arc weights M[b, h-1, m-1] into the Matrix-Tree matrix, in place."""
    B, n, _ = M.shape
    total = np.empty(n)
    for b in range(B):
        L = lengths[b]
        total[:] = 0.0
        for i in range(L):
            for j in range(L):
                if i != j:
                    total[j] += M[b, i, j]
                    M[b, i, j] = -M[b, i, j]
        for j in range(L):
            M[b, j, j] = total[j] if single_root else total[j] + roots[b, j]
        if single_root:
            M[b, 0, :L] = roots[b, :L]
        for i in range(L, n):  # padding: an identity block
            M[b, i, :] = 0.0
            M[b, :, i] = 0.0
            M[b, i, i] = 1.0


def build_matrices(S: np.ndarray, lengths: np.ndarray, single_root: bool):
    """The column-shifted Matrix-Tree matrix of each sentence of a batch.

    S : (B, N+1, N+1) float64 scores; lengths : (B,) words per sentence.

    Returns
    -------
    M : (B, N, N) the matrices, with an identity block on padding
    roots : (B, N) the shifted root weights exp(S[b, 0, m] - c[b, m]), c[b, m] the largest
        score of an arc into m
    first : (B, N) the shifted weights of the arcs from word 1 (single-root trees replace
        them by the root weights in M)
    shift : (B,) Σ_m c[b, m], so that log Z[b] = log det M[b] + shift[b]
    """
    c = _column_shifts(S, lengths)
    M = np.subtract(S[:, 1:, 1:], c[:, None, 1:])
    roots = np.subtract(S[:, 0, 1:], c[:, 1:])
    with np.errstate(over="ignore"):  # the ignored diagonal may overflow
        np.exp(M, out=M)  # numpy's vectorized exp is several times faster than a loop's
        np.exp(roots, out=roots)
    first = M[:, 0].copy()
    _fill_matrices(M, roots, lengths, single_root)
    return M, roots, first, c.sum(axis=1)


@njit(cache=True, nogil=True)
def _put(mu, b, h, m, p, total, tol):
    """Store a marginal clipped to [0, 1]; False if it is off by more than tol."""
    total[m - 1] += p
    mu[b, h, m] = min(max(p, 0.0), 1.0)
    return p > -tol and p < 1.0 + tol


@njit(cache=True, nogil=True)
def marginals_from_inverse(M, roots, first, lengths, single_root, MinvT, mu, tol):
    """Koo et al. §3.2: the arc marginals of each sentence from the inverse of its matrix.

    M, roots, first : the output of `build_matrices`; MinvT : (B, N, N) the transposed
    inverses (MinvT[b, i, j] = inverse of M[b], entry j, i). Writes mu (B, N+1, N+1) and
    returns a (B,) boolean: the marginals are on the simplex to within tol (a check of the
    factorization's accuracy).
    """
    B, n, _ = M.shape
    ok = np.ones(B, dtype=np.bool_)
    own = np.empty(n)
    total = np.empty(n)
    for b in range(B):
        L = lengths[b]
        mu[b] = 0.0
        good = True
        for j in range(L):
            own[j] = MinvT[b, j, j]
            total[j] = 0.0
        if single_root:
            own[0] = 0.0
        for m in range(1, L + 1):
            p = roots[b, m - 1] * (MinvT[b, 0, m - 1] if single_root else own[m - 1])
            good &= _put(mu, b, 0, m, p, total, tol)
        for h in range(1, L + 1):
            i = h - 1
            if single_root and i == 0:  # the first word's row holds the root weights
                for m in range(2, L + 1):
                    good &= _put(mu, b, 1, m, first[b, m - 1] * own[m - 1], total, tol)
                continue
            for m in range(1, L + 1):
                if m != h:  # the arc weight is -M[b, i, m - 1]
                    p = M[b, i, m - 1] * (MinvT[b, i, m - 1] - own[m - 1])
                    good &= _put(mu, b, h, m, p, total, tol)
        for j in range(L):
            good &= abs(total[j] - 1.0) <= tol
        ok[b] = good
    return ok


@njit(cache=True, nogil=True)
def log_determinants(LU, piv, shift, ok):
    """log det of each factored matrix plus shift, and which sentences need the exact route.

    LU : (B, N, N) LU factors; piv : (B, N) LAPACK pivots (1-based row swaps); ok : (B,)
    the marginal check of `marginals_from_inverse` (all True when there are no marginals).
    A sentence needs the exact route when its check failed or its determinant is not
    finite and positive.
    """
    B, n = piv.shape
    logdet = shift.copy()
    bad = ~ok
    for b in range(B):
        negative = False
        for i in range(n):
            d = LU[b, i, i]
            logdet[b] += np.log(abs(d))
            negative ^= (d < 0) ^ (piv[b, i] != i + 1)
        bad[b] |= negative or not np.isfinite(logdet[b])
    return logdet, bad


@njit(cache=True, nogil=True)
def invert_small(M, lengths):
    """Transposed inverses and log determinants of a batch of small matrices, by LU with
    partial pivoting in one compiled loop: for matrices of a dozen rows the per-matrix
    overhead of a LAPACK call costs more than the arithmetic.

    Returns (MinvT (B, N, N) with MinvT[b, i, j] = inverse of M[b], entry j, i; log |det|
    (B,); a (B,) boolean, True where the determinant is not positive)."""
    B, n, _ = M.shape
    MinvT = np.zeros((B, n, n))
    logdet = np.zeros(B)
    bad = np.zeros(B, dtype=np.bool_)
    A = np.empty((n, n))
    X = np.empty((n, n))
    perm = np.empty(n, dtype=np.int64)
    for b in range(B):
        L = lengths[b]
        A[:, :] = M[b]
        for i in range(n):
            perm[i] = i
        negative = False
        for k in range(n):
            p = k
            for i in range(k + 1, n):
                if abs(A[i, k]) > abs(A[p, k]):
                    p = i
            if A[p, k] == 0.0:
                bad[b] = True
                break
            if p != k:
                for j in range(n):
                    A[k, j], A[p, j] = A[p, j], A[k, j]
                perm[k], perm[p] = perm[p], perm[k]
                negative = not negative
            pivot = A[k, k]
            negative ^= pivot < 0.0
            logdet[b] += np.log(abs(pivot))
            inv = 1.0 / pivot
            for i in range(k + 1, n):
                f = A[i, k] * inv
                A[i, k] = f
                for j in range(k + 1, n):
                    A[i, j] -= f * A[k, j]
        if bad[b]:
            continue
        bad[b] = negative
        # the inverse X solves L U X = P: all right-hand sides at once, row by row, so the
        # innermost loops run along contiguous rows without a dependency chain
        X[:, :] = 0.0
        for i in range(n):
            if perm[i] < L:
                X[i, perm[i]] = 1.0
        for i in range(n):
            for j in range(i):
                a = A[i, j]
                for c in range(L):
                    X[i, c] -= a * X[j, c]
        for i in range(n - 1, -1, -1):
            for j in range(i + 1, n):
                a = A[i, j]
                for c in range(L):
                    X[i, c] -= a * X[j, c]
            inv = 1.0 / A[i, i]
            for c in range(L):
                X[i, c] *= inv
        for c in range(L):
            for i in range(n):
                MinvT[b, c, i] = X[i, c]
    return MinvT, logdet, bad


# Up to this many words the scaled elimination is faster than LAPACK (whose route pays for
# the one-thread limit, the condition number and the solve on each call: at 30 words, a
# syntax view's window, 216 against 345 µs; the two cross near 40); above it, the LU is
# used whenever it is well conditioned (error about eps / rcond).
SMALL = 40
MIN_RCOND = 1e-6
TOL = 1e-8


_ONE_THREAD = threading.Lock()  # the limit is process-wide: one caller sets and restores it


@functools.lru_cache(maxsize=1)
def _blas():
    """The BLAS libraries loaded (numpy's and scipy's), found once, scipy's LAPACK imported
    first (here: MAP parsing never needs it)."""
    import scipy.linalg.lapack  # noqa: F401
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _lu_route(S: np.ndarray, single_root: bool, want_marginals: bool):
    """(log Z, marginals or None) by LAPACK, or None when the factorization is inaccurate.
    LAPACK runs on one thread: on matrices of a sentence's size more threads only wait
    for each other (a paragraph's windows took twice the CPU time, and more wall time)."""
    with _ONE_THREAD, _blas().limit(limits=1, user_api="blas"):
        return _lu_factored(S, single_root, want_marginals)


def _lu_factored(S: np.ndarray, single_root: bool, want_marginals: bool):
    from scipy.linalg.lapack import dgecon, dgetrf, dgetrs

    N = S.shape[0]
    n = N - 1
    S3 = np.ascontiguousarray(S, dtype=np.float64)[None]
    lengths = np.array([n])
    M, roots, first, shift = build_matrices(S3, lengths, single_root)
    lu, piv, info = dgetrf(M[0], overwrite_a=False)
    if info != 0:
        return None
    rcond, _ = dgecon(lu, np.abs(M[0]).sum(axis=0).max(), norm="1")
    logZ, bad = log_determinants(lu[None], piv[None] + 1, shift, np.ones(1, dtype=np.bool_))
    if rcond < MIN_RCOND or bad[0]:
        return None
    logZ = float(logZ[0])
    if not want_marginals:
        return logZ, None
    MinvT, _ = dgetrs(lu, piv, np.eye(n), trans=1)
    mu = np.empty((1, N, N))
    if not marginals_from_inverse(M, roots, first, lengths, single_root, MinvT[None], mu,
                                  TOL)[0]:
        return None
    return logZ, mu[0]


def clean(S: np.ndarray) -> np.ndarray:
    """S as float64 with the diagonal and column 0 set to -inf (no such arcs)."""
    W = S.astype(np.float64, copy=True)
    W[np.arange(len(W)), np.arange(len(W))] = NEG_INF
    W[:, 0] = NEG_INF
    return W


def exact(S: np.ndarray, single_root: bool, want_marginals: bool):
    """(log Z, marginals or None) by the scaled elimination, or the log-space one where
    a pivot is too small for scaled weights."""
    W = clean(S)
    found = eliminate_scaled(W, single_root, want_marginals)
    if found is None:
        logZ, mu = eliminate(W, single_root, want_marginals)
        return float(logZ), (mu if want_marginals else None)
    return found


def log_partition(S: np.ndarray, single_root: bool = True) -> float:
    """log Z over non-projective trees of the (n+1, n+1) score array S. O(n³)."""
    found = None if len(S) - 1 <= SMALL else _lu_route(S, single_root, False)
    return (found or exact(S, single_root, False))[0]


def marginals(S: np.ndarray, single_root: bool = True) -> tuple[float, np.ndarray]:
    """log Z and the arc marginals mu[h, m] (shape (n+1, n+1)) over non-projective trees. O(n³)."""
    found = None if len(S) - 1 <= SMALL else _lu_route(S, single_root, True)
    return found or exact(S, single_root, True)


@njit(cache=True, nogil=True)
def _lae(a, b):
    """log(exp(a) + exp(b)) without overflow."""
    if a == NEG_INF:
        return b
    if b == NEG_INF:
        return a
    if a > b:
        return a + np.log1p(np.exp(b - a))
    return b + np.log1p(np.exp(a - b))


@njit(cache=True, nogil=True)
def _log_sub(new, x):
    """log(exp(new) - exp(x)) for x <= new (an update undone); -inf where rounding made
    x reach new (the undone value is then negligible next to it)."""
    if x == NEG_INF:
        return new
    d = x - new
    if d >= 0.0:
        return NEG_INF
    return new + np.log1p(-np.exp(d))


@njit(cache=True, nogil=True)
def eliminate(logW, single_root, want_grad):
    """Subtraction-free elimination in log space: log Z and (optionally) its gradient.

    The matrix of the Matrix-Tree Theorem is a Laplacian plus root weights; eliminating
    word k keeps that form (Grassmann-Taksar-Heyman): the arcs i -> j become
    A[i, j] + A[i, k] A[k, j] / p_k, the root weights r_j + A[k, j] r_k / p_k, and the pivot
    p_k is a sum of the remaining weights into k (plus r_k for multi-root trees). Every
    quantity is a sum of positive terms, so log Z is exact to rounding for any score
    magnitudes. Single-root trees take the first-order term in the root weights: pivots
    leave r out and the last pivot is the last root weight. O(n³) time, O(n²) memory.

    The gradient (the arc marginals) is the reverse-mode derivative of the same steps. The
    elimination runs in place, so a word's row and column keep the values they had when it
    was eliminated; the reverse pass undoes each step's updates to recover the values
    before it (log(exp(new) - exp(x))) instead of storing every step's matrix. Where that
    subtraction loses digits, the value it recovers only weighs in the gradient by the
    share exp(old - new) it had in the sum, which is then as small as the lost digits: the
    marginals stay exact to rounding in absolute terms (tests: brute force, scores of
    magnitude 1e4).
    """
    N = logW.shape[0]
    n = N - 1
    a = np.empty((n, n))
    r = np.empty(n)
    for i in range(n):
        r[i] = logW[0, i + 1]
        for j in range(n):
            a[i, j] = logW[i + 1, j + 1] if i != j else NEG_INF
    order = np.arange(n)
    pivots = np.empty(n)
    mu = np.zeros((N, N))
    logZ = 0.0
    for t in range(n):
        last = t == n - 1
        # pick the pivot node: order[t], or a later one whose pivot is not zero
        for s in range(t, n):
            k = order[s]
            p = r[k] if (last or not single_root) else NEG_INF
            if not last:
                for u in range(t, n):
                    i = order[u]
                    if i != k:
                        p = _lae(p, a[i, k])
            if p != NEG_INF:
                order[t], order[s] = order[s], order[t]
                break
        if p == NEG_INF:
            return NEG_INF, mu
        k = order[t]
        pivots[t] = p
        logZ += p
        for u in range(t + 1, n):
            i = order[u]
            aik = a[i, k]
            if aik != NEG_INF:
                for v in range(t + 1, n):
                    j = order[v]
                    if i != j and a[k, j] != NEG_INF:
                        a[i, j] = _lae(a[i, j], aik + a[k, j] - p)
            if r[k] != NEG_INF and a[k, i] != NEG_INF:
                r[i] = _lae(r[i], a[k, i] + r[k] - p)
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
            akj = a[k, j]
            if r[k] != NEG_INF and akj != NEG_INF:
                new = r[j]
                y = akj + r[k] - p
                old = _log_sub(new, y)
                g = gr[j]
                if g != 0.0:
                    gr[j] = g * np.exp(old - new)
                    gy = g * np.exp(y - new)
                    ga[k, j] += gy
                    gr[k] += gy
                    gp -= gy
                r[j] = old
            if akj == NEG_INF:
                continue
            for v in range(t + 1, n):
                i = order[v]
                aik = a[i, k]
                if i == j or aik == NEG_INF:
                    continue
                new = a[i, j]
                x = aik + akj - p
                old = _log_sub(new, x)
                g = ga[i, j]
                if g != 0.0:
                    ga[i, j] = g * np.exp(old - new)
                    gx = g * np.exp(x - new)
                    ga[i, k] += gx
                    ga[k, j] += gx
                    gp -= gx
                a[i, j] = old
        if t == n - 1 or not single_root:
            gr[k] += gp * np.exp(r[k] - p)
        if t < n - 1:
            for u in range(t + 1, n):
                i = order[u]
                ga[i, k] += gp * np.exp(a[i, k] - p)
    for i in range(n):  # clipped: the pivot gradients' sums can round below 0
        mu[0, i + 1] = min(max(gr[i], 0.0), 1.0)
        for j in range(n):
            if i != j:
                mu[i + 1, j + 1] = min(max(ga[i, j], 0.0), 1.0)
    return logZ, mu


# Panels of this many words are eliminated word by word; the rest of the matrix is updated
# once per panel by a matrix product.
PANEL = 64
# A pivot below e^LOG_TINY, in units of its column's largest arc weight from a word, would
# let the mass lost to underflow (at most ~n³ · 1e-308 of a column) weigh in.
LOG_TINY = -600.0


@njit(cache=True, nogil=True)
def _scaled_weights(logW):
    """a[i, j] = exp(logW[i+1, j+1] - c_j), each column scaled by its largest arc from a
    word (0 on the diagonal and where there is no arc), the root weights
    r_j = logW[0, j+1] - c_j in log space, and the shifts c."""
    n = logW.shape[0] - 1
    a = np.zeros((n, n))
    r = np.empty(n)
    shift = np.zeros(n)
    for j in range(n):
        c = NEG_INF
        for i in range(n):
            if i != j and logW[i + 1, j + 1] > c:
                c = logW[i + 1, j + 1]
        if c == NEG_INF:
            c = 0.0
        shift[j] = c
        r[j] = logW[0, j + 1] - c
        for i in range(n):
            if i != j and logW[i + 1, j + 1] != NEG_INF:
                a[i, j] = np.exp(logW[i + 1, j + 1] - c)
    return a, r, shift


@njit(cache=True, nogil=True)
def _panel(a, r, logp, k, e, single_root):
    """Eliminate words k..e-1 (one panel): each one's pivot, the updates of the arcs that
    leave or enter the panel's later words, and of the root weights. False if a pivot is
    below e^LOG_TINY. The updates among words after the panel are left to `eliminate_scaled`."""
    n = a.shape[0]
    for t in range(k, e):
        if single_root and t == n - 1:
            p = r[t]
        else:
            total = 0.0
            for i in range(t + 1, n):
                total += a[i, t]
            p = np.log(total) if total > 0.0 else NEG_INF
            if not single_root:
                p = _lae(p, r[t])
        if p < LOG_TINY:
            return False
        logp[t] = p
        ip = np.exp(-p)
        for i in range(t + 1, n):
            f = a[i, t] * ip
            if f == 0.0:
                continue
            last = n if i < e else e  # rows after the panel: its columns only
            for j in range(t + 1, last):
                if j != i:
                    a[i, j] += f * a[t, j]
        if r[t] != NEG_INF:
            for u in range(t + 1, n):
                if a[t, u] > 0.0:
                    r[u] = _lae(r[u], np.log(a[t, u]) + r[t] - p)
    return True


@njit(cache=True, nogil=True)
def _panel_adjoint(a, r, logp, G, gr, gp, k, e, single_root):
    """The reverse of `_panel`, words e-1 down to k: G (the derivative of log Z with respect
    to each arc weight) and gr (with respect to each log root weight) gain what the panel's
    updates and pivots pass back; gp[t] is the derivative with respect to log p_t."""
    n = a.shape[0]
    for t in range(e - 1, k - 1, -1):
        p = logp[t]
        ip = np.exp(-p)
        if r[t] != NEG_INF:
            for u in range(t + 1, n):
                if a[t, u] > 0.0:
                    new = r[u]
                    y = np.log(a[t, u]) + r[t] - p
                    old = _log_sub(new, y)
                    g = gr[u]
                    if g != 0.0:
                        gr[u] = g * np.exp(old - new)
                        gy = g * np.exp(y - new)
                        G[t, u] += gy / a[t, u]
                        gr[t] += gy
                        gp[t] -= gy
                    r[u] = old
        for i in range(t + 1, n):
            f = a[i, t] * ip
            if f == 0.0:
                continue
            last = n if i < e else e
            gf = 0.0
            for j in range(t + 1, last):
                if j != i:
                    gf += G[i, j] * a[t, j]
                    G[t, j] += f * G[i, j]
            G[i, t] += gf * ip
            gp[t] -= gf * f
        if single_root and t == n - 1:
            gr[t] += gp[t]
        else:
            if not single_root:
                gr[t] += gp[t] * np.exp(r[t] - p)
            for i in range(t + 1, n):
                G[i, t] += gp[t] * ip


@njit(cache=True, nogil=True)
def _shares(logW, shift, G, gr):
    """The marginals: each arc weight times the derivative of log Z with respect to it."""
    N = logW.shape[0]
    n = N - 1
    mu = np.zeros((N, N))
    for j in range(n):
        c = shift[j]
        mu[0, j + 1] = min(max(gr[j], 0.0), 1.0)
        for i in range(n):
            if i != j and logW[i + 1, j + 1] != NEG_INF:
                share = np.exp(logW[i + 1, j + 1] - c) * G[i, j]
                mu[i + 1, j + 1] = min(max(share, 0.0), 1.0)
    return mu


def eliminate_scaled(logW: np.ndarray, single_root: bool, want_grad: bool):
    """The elimination of `eliminate` on arc weights instead of their logarithms, blocked
    so that most of its work is two matrix products per panel: (log Z, marginals or None),
    or None when a pivot is too small for the scaled weights (then use `eliminate`).

    Each column of weights is scaled by its largest arc from a word (exact: log Z moves
    by the shift, the marginals not at all); root weights stay in log space. The pivots
    are sums of positive weights, as in `eliminate`; underflow loses at most ~n³ · 1e-308
    of a column's mass, negligible next to any pivot above e^LOG_TINY. The marginals are
    the reverse-mode derivative of the same steps, computed with respect to the weights
    (which every update leaves unchanged) and multiplied by them at the end.
    O(n³) time, O(n²) memory.
    """
    a, r, shift = _scaled_weights(logW)
    n = a.shape[0]
    logp = np.empty(n)
    for k in range(0, n, PANEL):
        e = min(k + PANEL, n)
        if not _panel(a, r, logp, k, e, single_root):
            return None
        if e < n:
            F = a[e:, k:e] * np.exp(-logp[k:e])
            rest = a[e:, e:]
            diagonal = rest.diagonal().copy()
            rest += F @ a[k:e, e:]
            np.fill_diagonal(rest, diagonal)  # no arc from a word to itself
    logZ = float(shift.sum() + logp.sum())
    if not want_grad:
        return logZ, None
    G = np.zeros((n, n))
    gr = np.zeros(n)
    gp = np.ones(n)
    for k in reversed(range(0, n, PANEL)):
        e = min(k + PANEL, n)
        if e < n:
            ip = np.exp(-logp[k:e])
            F = a[e:, k:e] * ip
            U = a[k:e, e:]
            Grest = G[e:, e:]
            gF = Grest @ U.T
            G[k:e, e:] += F.T @ Grest
            G[e:, k:e] += gF * ip
            gp[k:e] -= (gF * F).sum(axis=0)
        _panel_adjoint(a, r, logp, G, gr, gp, k, e, single_root)
    return logZ, _shares(logW, shift, G, gr)
