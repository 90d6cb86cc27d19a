"""Projective trees: Eisner's O(n³) dynamic program, in the max and the log-sum-exp semiring.

Chart items over spans s < t (index 0 is the root):

- ``IR[s, t]``: incomplete, arc s -> t;  ``IL[s, t]``: incomplete, arc t -> s
- ``CR[s, t]``: complete, headed by s, covering s..t;  ``CL[s, t]``: complete, headed by t

Multi-root trees are ``CR[0, n]``. Single-root trees attach exactly one word r to the root:
``S[0, r] + CL[1, r] + CR[r, n]``, combined over r. Marginals are the gradient of log Z,
computed by a backward pass over the same chart.

log Z and the marginals are first computed in probability space, where every combination is
a product and every sum a plain sum (no exponential per split point): each column m is
shifted by its largest score c[m], which changes log Z by Σ c[m] and the marginals not at
all, since every word has exactly one head. An item's value is then at most the number of
its derivations, and one whose value underflows adds at most a rounding error's worth to
Z. When Z itself is too small for that bound (scores that differ by hundreds), too large
(hundreds of words), or not finite, the sentence is recomputed in log space, where every
split point costs an exponential but nothing can underflow; a sentence of 700 positions or
more, whose Z no double could hold within the bound, goes to log space at once.

An item built on a forbidden arc (-inf, a weight of 0) adds nothing, so every pass tries
only the split points of allowed arcs (`_bounds`): a sentence whose arcs are cut to a reach
R (a linear model's, `arborparse.linear.reach`) takes O(n² R) time instead of O(n³).
"""

from __future__ import annotations

import numpy as np
from numba import njit

NEG_INF = -np.inf
LARGEST = np.finfo(np.float64).max


@njit(cache=True, nogil=True)
def _bounds(S):
    """(right, left): right[h] the farthest word h may head to its right, left[h] to its
    left (h itself where none), an arc allowed where its score is above -inf: the bounds of
    the split loops (see the module's docstring)."""
    N = S.shape[0]
    right = np.arange(N)
    left = np.arange(N)
    for h in range(N):
        for m in range(1, N):
            if S[h, m] > NEG_INF:
                if m > h and m > right[h]:
                    right[h] = m
                if m < h and m < left[h]:
                    left[h] = m
    return right, left


@njit(cache=True, nogil=True)
def _either_allowed(right, left, s, t):
    """Whether the arc s -> t or t -> s (s < t) may be allowed, by `_bounds`: the split
    points of IR[s, t] and IL[s, t] are tried only then."""
    return t <= right[s] or (s > 0 and left[t] <= s)


@njit(cache=True, nogil=True)
def _eisner(S, single_root):
    """Heads of the best projective tree; heads[0] = -1. -inf scores forbid arcs (and the
    split points of their items are not tried: O(n² R) time with a reach R)."""
    N = S.shape[0]
    n = N - 1
    CR = np.full((N, N), NEG_INF)
    CL = np.full((N, N), NEG_INF)
    IR = np.full((N, N), NEG_INF)
    IL = np.full((N, N), NEG_INF)
    bI = np.zeros((N, N), dtype=np.int64)
    bCR = np.zeros((N, N), dtype=np.int64)
    bCL = np.zeros((N, N), dtype=np.int64)
    right, left = _bounds(S)
    for s in range(N):
        CR[s, s] = 0.0
        CL[s, s] = 0.0
    for w in range(1, N):
        for s in range(0, N - w):
            t = s + w
            if _either_allowed(right, left, s, t):
                best = NEG_INF
                arg = s
                for r in range(s, t):
                    v = CR[s, r] + CL[r + 1, t]
                    if v > best:
                        best = v
                        arg = r
                bI[s, t] = arg
                IR[s, t] = best + S[s, t]
                if s > 0:
                    IL[s, t] = best + S[t, s]
            best = NEG_INF
            arg = t
            for r in range(s + 1, min(t, right[s]) + 1):  # IR[s, r] is -inf past right[s]
                v = IR[s, r] + CR[r, t]
                if v > best:
                    best = v
                    arg = r
            CR[s, t] = best
            bCR[s, t] = arg
            best = NEG_INF
            arg = s
            for r in range(max(s, left[t]), t):  # IL[r, t] is -inf before left[t]
                v = CL[s, r] + IL[r, t]
                if v > best:
                    best = v
                    arg = r
            CL[s, t] = best
            bCL[s, t] = arg
    heads = np.full(N, -1, dtype=np.int64)
    # stack of (kind, s, t): 0 CR, 1 CL, 2 IR, 3 IL
    stack = np.empty((4 * N + 4, 3), dtype=np.int64)
    top = 0
    if single_root:
        best = NEG_INF
        root = 1
        for r in range(1, N):
            v = S[0, r] + CL[1, r] + CR[r, n]
            if v > best:
                best = v
                root = r
        if best == NEG_INF:
            return heads, False
        heads[root] = 0
        stack[0, 0], stack[0, 1], stack[0, 2] = 1, 1, root
        stack[1, 0], stack[1, 1], stack[1, 2] = 0, root, n
        top = 2
    else:
        if CR[0, n] == NEG_INF:
            return heads, False
        stack[0, 0], stack[0, 1], stack[0, 2] = 0, 0, n
        top = 1
    while top > 0:
        top -= 1
        kind, s, t = stack[top, 0], stack[top, 1], stack[top, 2]
        if s >= t:
            continue
        if kind == 0:
            r = bCR[s, t]
            stack[top, 0], stack[top, 1], stack[top, 2] = 2, s, r
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = 0, r, t
            top += 2
        elif kind == 1:
            r = bCL[s, t]
            stack[top, 0], stack[top, 1], stack[top, 2] = 1, s, r
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = 3, r, t
            top += 2
        else:
            if kind == 2:
                heads[t] = s
            else:
                heads[s] = t
            r = bI[s, t]
            stack[top, 0], stack[top, 1], stack[top, 2] = 0, s, r
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = 1, r + 1, t
            top += 2
    return heads, True


@njit(cache=True, nogil=True)
def _logsumexp(buf, k):
    m = NEG_INF
    for i in range(k):
        if buf[i] > m:
            m = buf[i]
    if m == NEG_INF:
        return NEG_INF
    total = 0.0
    for i in range(k):
        total += np.exp(buf[i] - m)
    return m + np.log(total)


@njit(cache=True, nogil=True)
def _inside(S, single_root):
    """The inside charts and log Z.

    Returns CR, CRT, CL, CLT, IR, ILT, SPLIT, right, left, logZ, where xT[t, s] = x[s, t]
    (every split loop then reads memory contiguously), SPLIT[s, t] is the log-sum over split
    points shared by IR[s, t] and IL[s, t], and right, left are `_bounds(S)`.
    """
    N = S.shape[0]
    n = N - 1
    CR = np.full((N, N), NEG_INF)
    CRT = np.full((N, N), NEG_INF)
    CL = np.full((N, N), NEG_INF)
    CLT = np.full((N, N), NEG_INF)
    IR = np.full((N, N), NEG_INF)
    ILT = np.full((N, N), NEG_INF)
    SPLIT = np.full((N, N), NEG_INF)
    buf = np.empty(N + 1)
    right, left = _bounds(S)  # split points of forbidden arcs' items add nothing
    for s in range(N):
        CR[s, s] = CRT[s, s] = CL[s, s] = CLT[s, s] = 0.0
    for w in range(1, N):
        for s in range(0, N - w):
            t = s + w
            if _either_allowed(right, left, s, t):
                k = 0
                for r in range(s, t):
                    buf[k] = CR[s, r] + CLT[t, r + 1]
                    k += 1
                split = SPLIT[s, t] = _logsumexp(buf, k)
                IR[s, t] = split + S[s, t]
                if s > 0:
                    ILT[t, s] = split + S[t, s]
            k = 0
            for r in range(s + 1, min(t, right[s]) + 1):
                buf[k] = IR[s, r] + CRT[t, r]
                k += 1
            CR[s, t] = CRT[t, s] = _logsumexp(buf, k)
            k = 0
            for r in range(max(s, left[t]), t):
                buf[k] = CL[s, r] + ILT[t, r]
                k += 1
            CL[s, t] = CLT[t, s] = _logsumexp(buf, k)
    if single_root:
        k = 0
        for r in range(1, N):
            buf[k] = S[0, r] + CL[1, r] + CR[r, n]
            k += 1
        logZ = _logsumexp(buf, k)
    else:
        logZ = CR[0, n]
    return CR, CRT, CL, CLT, IR, ILT, SPLIT, right, left, logZ


@njit(cache=True, nogil=True)
def _marginals_log(S, single_root):
    """log Z and the arc marginals mu[h, m] = d log Z / d S[h, m], in log space.

    Gradients of items are kept in a row array (accumulated along rows) and a transposed
    array (accumulated along columns); an item's gradient is their sum.
    """
    N = S.shape[0]
    n = N - 1
    CR, CRT, CL, CLT, IR, ILT, SPLIT, right, left, logZ = _inside(S, single_root)
    mu = np.zeros((N, N))
    if logZ == NEG_INF:
        return logZ, mu
    gCRr = np.zeros((N, N))
    gCRc = np.zeros((N, N))
    gCLr = np.zeros((N, N))
    gCLc = np.zeros((N, N))
    gIRr = np.zeros((N, N))
    gILc = np.zeros((N, N))
    if single_root:
        for r in range(1, N):
            p = np.exp(S[0, r] + CL[1, r] + CR[r, n] - logZ)
            mu[0, r] = p
            gCLr[1, r] += p
            gCRc[n, r] += p
    else:
        gCRr[0, n] = 1.0
    for w in range(n, 0, -1):
        for s in range(0, N - w):
            t = s + w
            g = gCRr[s, t] + gCRc[t, s]
            if g > 0.0:
                top = CR[s, t]
                for r in range(s + 1, min(t, right[s]) + 1):
                    p = g * np.exp(IR[s, r] + CRT[t, r] - top)
                    gIRr[s, r] += p
                    gCRc[t, r] += p
            g = gCLr[s, t] + gCLc[t, s]
            if g > 0.0:
                top = CL[s, t]
                for r in range(max(s, left[t]), t):
                    p = g * np.exp(CL[s, r] + ILT[t, r] - top)
                    gCLr[s, r] += p
                    gILc[t, r] += p
            gr = gIRr[s, t]
            gl = gILc[t, s]
            if s > 0:
                mu[s, t] = gr
                mu[t, s] = gl
            elif not single_root:
                mu[s, t] = gr
            g = gr + gl
            if g > 0.0:
                top = SPLIT[s, t]
                for r in range(s, t):
                    p = g * np.exp(CR[s, r] + CLT[t, r + 1] - top)
                    gCRr[s, r] += p
                    gCLc[t, r + 1] += p
    return logZ, np.minimum(mu, 1.0)  # sums of probabilities can round just above 1


@njit(cache=True, nogil=True)
def _shifted_weights(S):
    """W[h, m] = exp(S[h, m] - c[m]) with c[m] the largest score of column m (0 where the
    column is all -inf), and Σ c[m]. Column 0 and the diagonal of W are 0."""
    N = S.shape[0]
    W = np.zeros((N, N))
    total = 0.0
    for m in range(1, N):
        c = NEG_INF
        for h in range(N):
            if h != m and S[h, m] > c:
                c = S[h, m]
        if c == NEG_INF:
            c = 0.0
        total += c
        for h in range(N):
            if h != m:
                W[h, m] = np.exp(S[h, m] - c)
    return W, total


@njit(cache=True, nogil=True)
def _inside_linear(W, single_root):
    """The inside charts of weights W in probability space, and Z.

    Returns CR, CL, IR, IL, Z. Each chart is symmetric, x[s, t] = x[t, s] = the item over
    s..t: row s from s on holds the items starting at s, row t up to t those ending at t,
    so every sum over split points is a dot product of two contiguous row segments.
    """
    N = W.shape[0]
    n = N - 1
    CR = np.zeros((N, N))
    CL = np.zeros((N, N))
    IR = np.zeros((N, N))
    IL = np.zeros((N, N))
    right, left = _bounds(np.where(W > 0.0, 0.0, NEG_INF))  # the arcs of weight 0 add 0
    for s in range(N):
        CR[s, s] = CL[s, s] = 1.0
    for w in range(1, N):
        for s in range(0, N - w):
            t = s + w
            if _either_allowed(right, left, s, t):
                split = 0.0
                for r in range(s, t):
                    split += CR[s, r] * CL[t, r + 1]
                IR[s, t] = IR[t, s] = split * W[s, t]
                IL[s, t] = IL[t, s] = split * W[t, s]  # W[t, 0] = 0: no arc into the root
            total = 0.0
            for r in range(s + 1, min(t, right[s]) + 1):
                total += IR[s, r] * CR[t, r]
            CR[s, t] = CR[t, s] = total
            total = 0.0
            for r in range(max(s, left[t]), t):
                total += CL[s, r] * IL[t, r]
            CL[s, t] = CL[t, s] = total
    if single_root:
        Z = 0.0
        for r in range(1, N):
            Z += W[0, r] * CL[1, r] * CR[r, n]
    else:
        Z = CR[0, n]
    return CR, CL, IR, IL, Z


@njit(cache=True, nogil=True)
def _trusted(Z, N, products=3):
    """Whether a probability-space Z of N = n+1 positions is exact to rounding.

    Every item's value (and every outside value) is at most the number of trees, below 7^N;
    each of the ~N^products products (3 for Eisner's chart) that underflow loses at most
    2.2e-308 times such a value. Z must exceed that total by 16 orders of magnitude, and be
    finite.
    """
    return np.log(Z) >= -708.0 + N * np.log(7.0) + products * np.log(N) + 37.0 and Z < np.inf


@njit(cache=True, nogil=True)
def _may_trust(N):
    """Whether any Z of N = n+1 positions could be `_trusted` (not past about 700 words:
    those go to log space at once, without a probability-space pass first)."""
    return _trusted(LARGEST, N)


@njit(cache=True, nogil=True)
def _log_partition(S, single_root):
    """log Z over projective trees: in probability space where that is exact, else in log
    space (see the module's docstring)."""
    if not _may_trust(S.shape[0]):
        return _inside(S, single_root)[-1]
    W, shift = _shifted_weights(S)
    Z = _inside_linear(W, single_root)[-1]
    if _trusted(Z, S.shape[0]):
        return np.log(Z) + shift
    return _inside(S, single_root)[-1]


@njit(cache=True, nogil=True)
def _marginals(S, single_root):
    """log Z and the arc marginals mu[h, m] = d log Z / d S[h, m].

    The inside and outside passes in probability space, where that is exact; else
    `_marginals_log`. The outside pass gathers each item's outside value (dZ / d item)
    from the wider items that use it, into symmetric charts like the inside ones (oS: the
    sum over split points shared by IR[s, t] and IL[s, t]), so that every sum is again a
    dot product of contiguous rows; an arc's marginal is its incomplete item's inside
    times outside, over Z.
    """
    N = S.shape[0]
    n = N - 1
    if not _may_trust(N):
        return _marginals_log(S, single_root)
    W, shift = _shifted_weights(S)
    CR, CL, IR, IL, Z = _inside_linear(W, single_root)
    if not _trusted(Z, N):
        return _marginals_log(S, single_root)
    inv = 1.0 / Z
    mu = np.zeros((N, N))
    oCR = np.zeros((N, N))
    oCL = np.zeros((N, N))
    oS = np.zeros((N, N))
    if single_root:
        for r in range(1, N):
            mu[0, r] = W[0, r] * CL[1, r] * CR[r, n] * inv
            oCL[1, r] += W[0, r] * CR[r, n]
            oCR[r, n] += W[0, r] * CL[1, r]
    else:
        oCR[0, n] = 1.0
    for w in range(n, 0, -1):
        for x in range(0, N - w):
            y = x + w
            total = oCR[x, y]  # uses of CR[x, y]: left of a split, right of a CR
            for t in range(y + 1, N):
                total += oS[x, t] * CL[y + 1, t]
            for s in range(0, x):
                total += oCR[y, s] * IR[x, s]
            oCR[x, y] = oCR[y, x] = total
            total = oCL[x, y]  # uses of CL[x, y]: right of a split, left of a CL
            for s in range(0, x):
                total += oS[y, s] * CR[x - 1, s]
            for t in range(y + 1, N):
                total += oCL[x, t] * IL[y, t]
            oCL[x, y] = oCL[y, x] = total
            right = 0.0  # IR[x, y], left part of CR[x, t]
            for t in range(y, N):
                right += oCR[x, t] * CR[y, t]
            left = 0.0  # IL[x, y], right part of CL[s, y]
            if x > 0:
                for s in range(0, x + 1):
                    left += oCL[y, s] * CL[x, s]
            oS[x, y] = oS[y, x] = right * W[x, y] + left * W[y, x]
            if x > 0 or not single_root:
                mu[x, y] = right * IR[x, y] * inv
            mu[y, x] = left * IL[x, y] * inv
    for h in range(N):
        for m in range(N):
            if not np.isfinite(mu[h, m]):  # an outside value overflowed: hundreds of words
                return _marginals_log(S, single_root)
            mu[h, m] = min(mu[h, m], 1.0)  # sums of probabilities can round just above 1
    return np.log(Z) + shift, mu


@njit(cache=True, nogil=True)
def _marginals_batch(S, lengths, single_root, logZ, mu):
    """`_marginals` of each sentence b of a padded batch S (B, N+1, N+1) of lengths n_b,
    into logZ (B,) and mu (B, N+1, N+1) (zero beyond each sentence)."""
    for b in range(S.shape[0]):
        n = lengths[b]
        logZ[b], mu[b, :n + 1, :n + 1] = _marginals(np.ascontiguousarray(S[b, :n + 1, :n + 1]),
                                                     single_root)
