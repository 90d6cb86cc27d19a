"""Second-order trees: adjacent siblings (McDonald & Pereira 2006) and grandparents
(Carreras 2007; Koo & Collins 2010, model 1).

A tree's score is

    Σ_m S[heads[m], m]  +  Σ sib[h, m, s] over its sibling parts  +  Σ grand[g, h, m] over its
    grandparent parts,

where (h, m, s) is a sibling part when m is a child of h and s is m's next sibling towards h
on the same side (s = h when m is h's closest child on that side), and (g, h, m) a grandparent
part when g -> h -> m (h > 0; the root has no head). ``sib`` and ``grand`` are arrays of shape
(n+1, n+1, n+1); entries that are parts of no tree are ignored.

Projective trees are exact: the sibling model is Eisner's chart with a sibling item,
O(n³); with grandparents every item also carries its head's head, O(n⁴). One dynamic
program per model runs in three semirings: max (MAP, read back by recomputing each item's
best split), probabilities (log Z and, by the outside pass, every part's marginal) and log
space. As in `projective`, probabilities are computed on weights shifted so that every
weight is at most 1 (every word has exactly one arc, one sibling part and one grandparent
part — the root's children have a grandparent part of score 0 here — so shifting each by
its column's maximum changes log Z by a known constant), and a sentence whose Z is not
exact there is recomputed in log space.

Non-projective second-order decoding is NP-hard; `approximate` is McDonald & Pereira's hill
climb: from the best projective tree, change the head of one word at a time, taking the
change that raises the score most, while one does and the result is a tree.
"""

from __future__ import annotations

import math

import numpy as np
from numba import literally, njit

from arborparse.trees.matrix_tree import _lae
from arborparse.trees.projective import _shifted_weights, _trusted
from arborparse.trees.scores import NO_TREE, NonFiniteScores, check_scores

NEG_INF = -np.inf
MAX, PROB, LOG = 0, 1, 2  # semirings


@njit(cache=True, nogil=True, inline="always")
def _add(a, b, mode):
    if mode == PROB:
        return a + b
    if mode == MAX:
        return max(a, b)
    return _lae(a, b)


@njit(cache=True, nogil=True, inline="always")
def _mul(a, b, mode):
    return a * b if mode == PROB else a + b


@njit(cache=True, nogil=True, inline="always")
def _zero(mode):
    return 0.0 if mode == PROB else NEG_INF


@njit(cache=True, nogil=True, inline="always")
def _one(mode):
    return 1.0 if mode == PROB else 0.0


@njit(cache=True, nogil=True, inline="always")
def _share(x, Z, mode):
    """A part's marginal from inside × outside x (in the semiring) and `_total(Z)`."""
    return x * Z if mode == PROB else np.exp(x - Z)


@njit(cache=True, nogil=True, inline="always")
def _total(Z, mode):
    """What `_share` takes: 1 / Z in probability space (a product is cheaper than a
    quotient), log Z in log space."""
    return 1.0 / Z if mode == PROB else Z


# --- the sibling model, O(n³) -------------------------------------------------------------
# Items over s < t: IR[s, t] arc s -> t, IL[s, t] arc t -> s (each with the modifier's inner
# subtree and the head's children between them), CR[s, t] / CL[s, t] complete spans headed by
# s / t, SB[s, t] two adjacent siblings s and t (s's right and t's left subtrees).
# The inside pass keeps each chart symmetric, x[s, t] = x[t, s] (row s holds the items that
# start at s, row t those that end at t), so that every loop over split points reads
# contiguous rows, as `projective` does; the outside pass writes along rows too (see
# `_sib_outside`).


@njit(cache=True, nogil=True)
def _sib_inside(A, B, single_root, mode):
    literally(mode)
    N = A.shape[0]
    zero = _zero(mode)
    CR = np.full((N, N), zero)
    CL = np.full((N, N), zero)
    IR = np.full((N, N), zero)
    IL = np.full((N, N), zero)
    SB = np.full((N, N), zero)
    for s in range(N):
        CR[s, s] = CL[s, s] = _one(mode)
    for w in range(1, N):
        for s in range(N - w):
            t = s + w
            if s > 0:
                v = zero
                for r in range(s, t):
                    v = _add(v, _mul(CR[s, r], CL[t, r + 1], mode), mode)
                SB[s, t] = SB[t, s] = v
            v = _mul(B[s, t, s], CL[t, s + 1], mode)  # t is s's closest right child
            if s > 0 or not single_root:
                for r in range(s + 1, t):
                    v = _add(v, _mul(_mul(IR[s, r], SB[t, r], mode), B[s, t, r], mode), mode)
            IR[s, t] = IR[t, s] = _mul(A[s, t], v, mode)
            if s > 0:
                v = _mul(B[t, s, t], CR[s, t - 1], mode)  # s is t's closest left child
                for r in range(s + 1, t):
                    v = _add(v, _mul(_mul(SB[s, r], IL[t, r], mode), B[t, s, r], mode), mode)
                IL[s, t] = IL[t, s] = _mul(A[t, s], v, mode)
            v = zero
            for r in range(s + 1, t + 1):
                v = _add(v, _mul(IR[s, r], CR[t, r], mode), mode)
            CR[s, t] = CR[t, s] = v
            if s > 0:
                v = zero
                for r in range(s, t):
                    v = _add(v, _mul(CL[s, r], IL[t, r], mode), mode)
                CL[s, t] = CL[t, s] = v
    return CR, CL, IR, IL, SB


@njit(cache=True, nogil=True)
def _sib_outside(A, B, single_root, mode, CR, CL, IR, IL, SB, msib):
    """Arc marginals, and the sibling marginals written into msib (zeros, or B itself: each
    entry of B is read once, just before its marginal is written). Each item passes its
    outside value on to the narrower items it is made of, once its own is complete (wider
    items first). An item (s, t) receives in [s, t] from loops along row s and in [t, s]
    from loops along row t; its outside value is the sum of the two."""
    literally(mode)
    N = A.shape[0]
    n = N - 1
    zero = _zero(mode)
    Z = _total(CR[0, n], mode)
    oCR = np.full((N, N), zero)
    oCL = np.full((N, N), zero)
    oIR = np.full((N, N), zero)  # receives along rows s only
    oIL = np.full((N, N), zero)  # receives along rows t only
    oSB = np.full((N, N), zero)
    mu = np.zeros((N, N))
    oCR[0, n] = _one(mode)
    for w in range(n, 0, -1):
        for s in range(N - w):
            t = s + w
            if s > 0:
                o = _add(oCL[s, t], oCL[t, s], mode)
                for r in range(s, t):
                    oCL[s, r] = _add(oCL[s, r], _mul(o, IL[t, r], mode), mode)
                    oIL[t, r] = _add(oIL[t, r], _mul(o, CL[s, r], mode), mode)
            o = _add(oCR[s, t], oCR[t, s], mode)
            for r in range(s + 1, t + 1):
                oIR[s, r] = _add(oIR[s, r], _mul(o, CR[t, r], mode), mode)
                oCR[t, r] = _add(oCR[t, r], _mul(o, IR[s, r], mode), mode)
            if s > 0:
                o = oIL[t, s]
                mu[t, s] = _share(_mul(o, IL[s, t], mode), Z, mode)
                oa = _mul(o, A[t, s], mode)
                x = _mul(oa, B[t, s, t], mode)
                oCR[s, t - 1] = _add(oCR[s, t - 1], x, mode)
                msib[t, s, t] = _share(_mul(x, CR[s, t - 1], mode), Z, mode)
                for r in range(s + 1, t):
                    x = _mul(oa, B[t, s, r], mode)
                    oSB[s, r] = _add(oSB[s, r], _mul(x, IL[t, r], mode), mode)
                    oIL[t, r] = _add(oIL[t, r], _mul(x, SB[s, r], mode), mode)
                    msib[t, s, r] = _share(_mul(_mul(x, SB[s, r], mode), IL[t, r], mode), Z, mode)
            o = oIR[s, t]
            mu[s, t] = _share(_mul(o, IR[s, t], mode), Z, mode)
            oa = _mul(o, A[s, t], mode)
            x = _mul(oa, B[s, t, s], mode)
            oCL[s + 1, t] = _add(oCL[s + 1, t], x, mode)
            msib[s, t, s] = _share(_mul(x, CL[t, s + 1], mode), Z, mode)
            if s > 0 or not single_root:
                for r in range(s + 1, t):
                    x = _mul(oa, B[s, t, r], mode)
                    oIR[s, r] = _add(oIR[s, r], _mul(x, SB[t, r], mode), mode)
                    oSB[t, r] = _add(oSB[t, r], _mul(x, IR[s, r], mode), mode)
                    msib[s, t, r] = _share(_mul(_mul(x, IR[s, r], mode), SB[t, r], mode), Z, mode)
            else:
                msib[s, t, s + 1:t] = 0.0  # the root's only child has no sibling
            if s > 0:
                o = _add(oSB[s, t], oSB[t, s], mode)
                for r in range(s, t):
                    oCR[s, r] = _add(oCR[s, r], _mul(o, CL[t, r + 1], mode), mode)
                    oCL[t, r + 1] = _add(oCL[t, r + 1], _mul(o, CR[s, r], mode), mode)
    return mu, msib


@njit(cache=True, nogil=True, inline="always")
def _push(stack, top, kind, g, s, t):
    stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = kind, g, s, t
    return top + 1


@njit(cache=True, nogil=True)
def _sib_best(A, B, single_root):
    """Heads of the best tree, read back from the max chart by recomputing each item's best
    split (the same sums in the same order, so the best one equals the item exactly)."""
    CR, CL, IR, IL, SB = _sib_inside(A, B, single_root, MAX)
    N = A.shape[0]
    heads = np.full(N, -1, dtype=np.int64)
    stack = np.empty((2 * N + 4, 4), dtype=np.int64)  # (kind, -, s, t): CR CL IR IL SB
    top = _push(stack, 0, 0, 0, 0, N - 1)
    while top > 0:
        top -= 1
        kind, s, t = stack[top, 0], stack[top, 2], stack[top, 3]
        if s == t:
            continue
        if kind == 0:
            for r in range(s + 1, t + 1):
                if IR[s, r] + CR[r, t] == CR[s, t]:
                    top = _push(stack, _push(stack, top, 2, 0, s, r), 0, 0, r, t)
                    break
        elif kind == 1:
            for r in range(s, t):
                if CL[s, r] + IL[r, t] == CL[s, t]:
                    top = _push(stack, _push(stack, top, 1, 0, s, r), 3, 0, r, t)
                    break
        elif kind == 2:
            heads[t] = s
            if A[s, t] + (B[s, t, s] + CL[s + 1, t]) == IR[s, t]:
                top = _push(stack, top, 1, 0, s + 1, t)
            else:
                for r in range(s + 1, t):
                    if A[s, t] + ((IR[s, r] + SB[r, t]) + B[s, t, r]) == IR[s, t]:
                        top = _push(stack, _push(stack, top, 2, 0, s, r), 4, 0, r, t)
                        break
        elif kind == 3:
            heads[s] = t
            if A[t, s] + (B[t, s, t] + CR[s, t - 1]) == IL[s, t]:
                top = _push(stack, top, 0, 0, s, t - 1)
            else:
                for r in range(s + 1, t):
                    if A[t, s] + ((SB[s, r] + IL[r, t]) + B[t, s, r]) == IL[s, t]:
                        top = _push(stack, _push(stack, top, 4, 0, s, r), 3, 0, r, t)
                        break
        else:
            for r in range(s, t):
                if CR[s, r] + CL[r + 1, t] == SB[s, t]:
                    top = _push(stack, _push(stack, top, 0, 0, s, r), 1, 0, r + 1, t)
                    break
    return heads, CR[0, N - 1]


# --- siblings and grandparents, O(n⁴) -----------------------------------------------------
# The same items, each also indexed by its head's head g: X[g, s, t] (only s < t is used:
# these charts are not symmetric; IL is kept as ILT[g, t, s] and CL also as CLT[g, t, s],
# six arrays of N³ doubles in all, 27 MB each at 150 words). The sibling item SB[h, s, t] is
# indexed by the siblings' head h. Items headed by the root use g = 0. The inside pass leaves
# at zero the items that enter a tree only through an arc of weight zero (the parser's reach
# leaves arcs out): an item whose head's head is g only through the arc g -> its head,
# SB[h, s, t] only through h -> s and h -> t, an arc item only through its arc; every product
# it would enter has that arc's zero factor.


@njit(cache=True, nogil=True, inline="always")
def _outer(k, s, t):
    """The k-th position outside s..t (the possible heads of a span's head)."""
    return k if k < s else k + t - s + 1


@njit(cache=True, nogil=True)
def _grand_inside(A, B, G, single_root, mode):
    """The inside charts CR, CL, IR, ILT, SB, with ILT[g, t, s] = IL[g, s, t]. Every loop
    over split points reads contiguous rows: a span's factors that no head's head changes
    are gathered once into a row (`row`, `below`), and the transposed charts CLT and ILT
    hold the items that would otherwise be read down a column. The spans are visited by their start
    from right to left, each start's spans by their end from left to right: every item is
    made before any span that holds it, and the items of a start, read for each of its
    spans, stay in the cache (150 random words, the max chart: 0.47 s before, 0.25 s)."""
    literally(mode)
    N = A.shape[0]
    zero = _zero(mode)
    CR = np.full((N, N, N), zero)
    CL = np.full((N, N, N), zero)
    CLT = np.full((N, N, N), zero)  # CLT[g, t, s] = CL[g, s, t]
    IR = np.full((N, N, N), zero)
    ILT = np.full((N, N, N), zero)
    SB = np.full((N, N, N), zero)
    row, below = np.empty(N), np.empty(N)
    for g in range(N):
        for s in range(N):
            CR[g, s, s] = CL[g, s, s] = CLT[g, s, s] = _one(mode)
    for s in range(N - 1, -1, -1):
        for t in range(s + 1, N):
            w = t - s
            outside = N - w - 1
            if s > 0:
                for k in range(outside):
                    h = _outer(k, s, t)
                    if A[h, s] == zero or A[h, t] == zero:
                        continue
                    v = zero
                    for r in range(s, t):
                        v = _add(v, _mul(CR[h, s, r], CLT[h, t, r + 1], mode), mode)
                    SB[h, s, t] = v
            right = A[s, t] != zero
            if right:  # IR[g, s, t] = A G (B[s, t, s] CL[s, s+1, t] + Σ_r IR[g, s, r] row[r])
                first = _mul(B[s, t, s], CL[s, s + 1, t], mode)
                for r in range(s + 1, t):
                    row[r] = _mul(SB[s, r, t], B[s, t, r], mode)
            for r in range(s + 1, t + 1):  # CR[g, s, t] = Σ_r IR[g, s, r] below[r]
                below[r] = CR[s, r, t]
            for k in range(outside if s > 0 else 1):  # heads of s (the root has none: g = 0)
                g = _outer(k, s, t) if s > 0 else 0
                if s > 0 and A[g, s] == zero:
                    continue
                if right:
                    v = first
                    if s > 0 or not single_root:
                        for r in range(s + 1, t):
                            v = _add(v, _mul(IR[g, s, r], row[r], mode), mode)
                    IR[g, s, t] = _mul(_mul(A[s, t], G[g, s, t], mode), v, mode)
                v = zero
                for r in range(s + 1, t + 1):
                    v = _add(v, _mul(IR[g, s, r], below[r], mode), mode)
                CR[g, s, t] = v
            if s > 0:
                left = A[t, s] != zero
                if left:  # IL[g, s, t] = A G (B[t, s, t] CR[t, s, t-1] + Σ_r row[r] IL[g, r, t])
                    first = _mul(B[t, s, t], CR[t, s, t - 1], mode)
                    for r in range(s + 1, t):
                        row[r] = _mul(SB[t, s, r], B[t, s, r], mode)
                for k in range(outside):  # heads of t
                    g = _outer(k, s, t)
                    if A[g, t] == zero:
                        continue
                    if left:
                        v = first
                        for r in range(s + 1, t):
                            v = _add(v, _mul(row[r], ILT[g, t, r], mode), mode)
                        ILT[g, t, s] = _mul(_mul(A[t, s], G[g, t, s], mode), v, mode)
                    v = zero
                    for r in range(s, t):
                        v = _add(v, _mul(CL[t, s, r], ILT[g, t, r], mode), mode)
                    CL[g, s, t] = CLT[g, t, s] = v
    return CR, CL, IR, ILT, SB


@njit(cache=True, nogil=True)
def _grand_outside(A, B, G, single_root, mode, CR, CL, IR, ILT, SB):
    """As `_sib_outside`, also giving the grandparent marginals. The items the inside pass
    leaves at zero (an arc of weight zero) have an outside value of zero too, as every
    product that reaches them has that arc's factor: they pass nothing on."""
    literally(mode)
    N = A.shape[0]
    n = N - 1
    zero = _zero(mode)
    Z = _total(CR[0, 0, n], mode)
    oCR = np.full((N, N, N), zero)
    oCL = np.full((N, N, N), zero)
    oIR = np.full((N, N, N), zero)
    oIL = np.full((N, N, N), zero)
    oSB = np.full((N, N, N), zero)
    mu = np.zeros((N, N))
    msib = np.zeros((N, N, N))
    mgrand = np.zeros((N, N, N))
    oCR[0, 0, n] = _one(mode)
    for w in range(n, 0, -1):
        for s in range(N - w):
            t = s + w
            outside = N - w - 1
            if s > 0:
                for k in range(outside):
                    g = _outer(k, s, t)
                    if A[g, t] == zero:
                        continue  # as the inside pass: nothing but zeros to pass on
                    o = oCL[g, s, t]
                    for r in range(s, t):
                        oCL[t, s, r] = _add(oCL[t, s, r], _mul(o, ILT[g, t, r], mode), mode)
                        oIL[g, r, t] = _add(oIL[g, r, t], _mul(o, CL[t, s, r], mode), mode)
                    if A[t, s] == zero:
                        continue
                    o = oIL[g, s, t]
                    oa = _mul(o, _mul(A[t, s], G[g, t, s], mode), mode)
                    x = _share(_mul(o, ILT[g, t, s], mode), Z, mode)
                    mu[t, s] += x
                    mgrand[g, t, s] = x
                    x = _mul(oa, B[t, s, t], mode)
                    oCR[t, s, t - 1] = _add(oCR[t, s, t - 1], x, mode)
                    msib[t, s, t] += _share(_mul(x, CR[t, s, t - 1], mode), Z, mode)
                    for r in range(s + 1, t):
                        x = _mul(oa, B[t, s, r], mode)
                        oSB[t, s, r] = _add(oSB[t, s, r], _mul(x, ILT[g, t, r], mode), mode)
                        oIL[g, r, t] = _add(oIL[g, r, t], _mul(x, SB[t, s, r], mode), mode)
                        msib[t, s, r] += _share(_mul(_mul(x, SB[t, s, r], mode), ILT[g, t, r],
                                                     mode), Z, mode)
            for k in range(outside if s > 0 else 1):
                g = _outer(k, s, t) if s > 0 else 0
                if s > 0 and A[g, s] == zero:
                    continue
                o = oCR[g, s, t]
                for r in range(s + 1, t + 1):
                    oIR[g, s, r] = _add(oIR[g, s, r], _mul(o, CR[s, r, t], mode), mode)
                    oCR[s, r, t] = _add(oCR[s, r, t], _mul(o, IR[g, s, r], mode), mode)
                if A[s, t] == zero:
                    continue
                o = oIR[g, s, t]
                oa = _mul(o, _mul(A[s, t], G[g, s, t], mode), mode)
                x = _share(_mul(o, IR[g, s, t], mode), Z, mode)
                mu[s, t] += x
                if s > 0:
                    mgrand[g, s, t] = x
                x = _mul(oa, B[s, t, s], mode)
                oCL[s, s + 1, t] = _add(oCL[s, s + 1, t], x, mode)
                msib[s, t, s] += _share(_mul(x, CL[s, s + 1, t], mode), Z, mode)
                if s > 0 or not single_root:
                    for r in range(s + 1, t):
                        x = _mul(oa, B[s, t, r], mode)
                        oIR[g, s, r] = _add(oIR[g, s, r], _mul(x, SB[s, r, t], mode), mode)
                        oSB[s, r, t] = _add(oSB[s, r, t], _mul(x, IR[g, s, r], mode), mode)
                        msib[s, t, r] += _share(_mul(_mul(x, IR[g, s, r], mode), SB[s, r, t],
                                                     mode), Z, mode)
            if s > 0:
                for k in range(outside):
                    h = _outer(k, s, t)
                    if A[h, s] == zero or A[h, t] == zero:
                        continue
                    o = oSB[h, s, t]
                    for r in range(s, t):
                        oCR[h, s, r] = _add(oCR[h, s, r], _mul(o, CL[h, r + 1, t], mode), mode)
                        oCL[h, r + 1, t] = _add(oCL[h, r + 1, t], _mul(o, CR[h, s, r], mode),
                                                mode)
    return mu, msib, mgrand


@njit(cache=True, nogil=True)
def _grand_best(A, B, G, single_root):
    """As `_sib_best`, on the chart with grandparents."""
    CR, CL, IR, ILT, SB = _grand_inside(A, B, G, single_root, MAX)
    N = A.shape[0]
    heads = np.full(N, -1, dtype=np.int64)
    stack = np.empty((2 * N + 4, 4), dtype=np.int64)  # (kind, g, s, t): CR CL IR IL SB
    top = _push(stack, 0, 0, 0, 0, N - 1)
    while top > 0:
        top -= 1
        kind, g, s, t = stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3]
        if s == t:
            continue
        if kind == 0:
            for r in range(s + 1, t + 1):
                if IR[g, s, r] + CR[s, r, t] == CR[g, s, t]:
                    top = _push(stack, _push(stack, top, 2, g, s, r), 0, s, r, t)
                    break
        elif kind == 1:
            for r in range(s, t):
                if CL[t, s, r] + ILT[g, t, r] == CL[g, s, t]:
                    top = _push(stack, _push(stack, top, 1, t, s, r), 3, g, r, t)
                    break
        elif kind == 2:
            heads[t] = s
            arc = A[s, t] + G[g, s, t]
            if arc + (B[s, t, s] + CL[s, s + 1, t]) == IR[g, s, t]:
                top = _push(stack, top, 1, s, s + 1, t)
            else:
                for r in range(s + 1, t):
                    if arc + (IR[g, s, r] + (SB[s, r, t] + B[s, t, r])) == IR[g, s, t]:
                        top = _push(stack, _push(stack, top, 2, g, s, r), 4, s, r, t)
                        break
        elif kind == 3:
            heads[s] = t
            arc = A[t, s] + G[g, t, s]
            if arc + (B[t, s, t] + CR[t, s, t - 1]) == ILT[g, t, s]:
                top = _push(stack, top, 0, t, s, t - 1)
            else:
                for r in range(s + 1, t):
                    if arc + ((SB[t, s, r] + B[t, s, r]) + ILT[g, t, r]) == ILT[g, t, s]:
                        top = _push(stack, _push(stack, top, 4, t, s, r), 3, g, r, t)
                        break
        else:
            for r in range(s, t):
                if CR[g, s, r] + CL[g, r + 1, t] == SB[g, s, t]:
                    top = _push(stack, _push(stack, top, 0, g, s, r), 1, g, r + 1, t)
                    break
    return heads, CR[0, 0, N - 1]


# --- the weights of the probability semiring, and the parts of a tree --------------------


# exp(x - c) for x - c <= 0 (-inf included), within one unit in the last place of np.exp,
# in loops that vectorise (np.exp in a loop is a library call per number, about three times
# slower here): Cody and Waite's reduction x - c = k ln 2 + r with |r| <= ln 2 / 2, exp(r) by
# its Taylor polynomial of degree 13 (the remainder is below 1e-17), and 2^k from a table
# that holds the subnormal powers too (below them the result is 0).
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # ln 2 to 32 bits: k * _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10  # the rest of ln 2
_TAYLOR = tuple(1.0 / math.factorial(i) for i in range(13, -1, -1))
_POW2 = np.ldexp(1.0, np.arange(-1100, 1))  # 2^k for k = -1100..0


@njit(cache=True, nogil=True, fastmath={"contract"})
def _exp_shifted(x, count, c, k):
    """x[:count] = exp(x[:count] - c), where x - c <= 0 (above 0 it gives 1) and no x is NaN;
    k: scratch of count numbers."""
    for i in range(count):
        v = min(max(x[i] - c, -760.0), 0.0)
        ki = np.floor(v * _LOG2E + 0.5)
        r = (v - ki * _LN2_HI) - ki * _LN2_LO
        p = 0.0
        for term in _TAYLOR:
            p = p * r + term
        x[i] = p
        k[i] = ki
    for i in range(count):
        x[i] *= _POW2[int(k[i]) + 1100]


@njit(cache=True, nogil=True)
def _part_weights(X, grand):
    """Weights exp(X - c[m]) of the sibling parts X[h, m, s] (grandparent parts X[g, h, m]
    when ``grand``) with c[m] the largest finite score among m's possible parts (0 if none),
    and Σ c[m]. Entries that are parts of no tree get weight 0. X is C-contiguous."""
    N = X.shape[0]
    scores = X.reshape(-1)
    W = np.zeros(N * N * N)
    where = np.empty(N * N, dtype=np.int64)  # m's possible parts, as positions in X
    values = np.empty(N * N)
    scratch = np.empty(N * N)
    total = 0.0
    for m in range(1, N):
        count = 0
        for h in range(N):
            if h == m:
                continue
            if grand:
                for g in range(N):
                    if (g != h and g != m) if h > 0 else g == 0:
                        where[count] = (g * N + h) * N + m
                        count += 1
            else:
                lo, hi = (h, m) if h < m else (m + 1, h + 1)
                for s in range(lo, hi):
                    where[count] = (h * N + m) * N + s
                    count += 1
        best = NEG_INF
        for i in range(count):
            values[i] = scores[where[i]]
            best = max(best, values[i])
        c = best if best > NEG_INF else 0.0
        total += c
        _exp_shifted(values, count, c, scratch)
        for i in range(count):
            W[where[i]] = values[i]
    return W.reshape((N, N, N)), total


def _root_grand(grand):
    """grand with its root slot: a child m of the root has the grandparent part (0, 0, m) of
    score 0 (so that every word has exactly one grandparent part)."""
    grand = grand.copy()
    grand[0, 0, :] = 0.0
    return grand


@njit(cache=True, nogil=True)
def _parts(heads):
    N = heads.shape[0]
    sib = np.empty((N - 1, 3), dtype=np.int64)
    last = np.arange(N)  # the latest child of each head seen so far, walking outwards
    for m in range(1, N):  # right children, left to right
        h = heads[m]
        if h < m:
            sib[m - 1, 0], sib[m - 1, 1], sib[m - 1, 2] = h, m, last[h]
            last[h] = m
    last = np.arange(N)
    for m in range(N - 1, 0, -1):  # left children, right to left
        h = heads[m]
        if h > m:
            sib[m - 1, 0], sib[m - 1, 1], sib[m - 1, 2] = h, m, last[h]
            last[h] = m
    count = 0
    grand = np.empty((N - 1, 3), dtype=np.int64)
    for m in range(1, N):
        h = heads[m]
        if h > 0:
            grand[count, 0], grand[count, 1], grand[count, 2] = heads[h], h, m
            count += 1
    return sib, grand[:count]


@njit(cache=True, nogil=True)
def _tree_score(A, B, G, heads, grand, last):
    """A tree's score; ``last`` is a work array of n+1 integers."""
    N = heads.shape[0]
    total = 0.0
    for m in range(1, N):
        h = heads[m]
        total += A[h, m]
        if grand and h > 0:
            total += G[heads[h], h, m]
    for side in range(2):  # right children left to right, then left children right to left
        for h in range(N):
            last[h] = h
        for i in range(1, N):
            m = i if side == 0 else N - i
            h = heads[m]
            if (h < m) == (side == 0):
                total += B[h, m, last[h]]
                last[h] = m
    return total


@njit(cache=True, nogil=True)
def _chains(heads, near, far):
    """Each head's children in their sibling chains, for every word m on each side (0: m
    right of h, 1: left), m itself never counted: ``near[side, h, m]``, the child of h
    between h and m nearest m (h where none), and ``far[side, h, m]``, the child of h
    beyond m nearest m (-1 where none)."""
    N = heads.shape[0]
    for h in range(N):
        p, q = h, -1
        for m in range(h + 1, N):
            near[0, h, m] = p
            if heads[m] == h:
                p = m
        for m in range(N - 1, h, -1):
            far[0, h, m] = q
            if heads[m] == h:
                q = m
        p, q = h, -1
        for m in range(h - 1, 0, -1):
            near[1, h, m] = p
            if heads[m] == h:
                p = m
        for m in range(1, h):
            far[1, h, m] = q
            if heads[m] == h:
                q = m


@njit(cache=True, nogil=True)
def _move_gain(A, B, G, heads, grand, near, far, cptr, children, m, h):
    """How much the tree's score changes when m moves from its head to h: its arc, the
    sibling parts around m in the chain it leaves and in the one it joins, and with
    `grand` the grandparent parts of m and of its children."""
    old = heads[m]
    side = 0 if m > old else 1
    p, q = near[side, old, m], far[side, old, m]
    gain = A[h, m] - A[old, m] - B[old, m, p]
    if q >= 0:
        gain += B[old, q, p] - B[old, q, m]
    side = 0 if m > h else 1
    p, q = near[side, h, m], far[side, h, m]
    gain += B[h, m, p]
    if q >= 0:
        gain += B[h, q, m] - B[h, q, p]
    if grand:
        if old > 0:
            gain -= G[heads[old], old, m]
        if h > 0:
            gain += G[heads[h], h, m]
        for k in range(cptr[m], cptr[m + 1]):
            gain += G[h, m, children[k]] - G[old, m, children[k]]
    return gain


@njit(cache=True, nogil=True)
def _largest(X):
    """The largest magnitude of X's finite entries (0 where none)."""
    flat = X.reshape(-1)
    top = 0.0
    for i in range(flat.size):
        if np.abs(flat[i]) < np.inf:
            top = max(top, np.abs(flat[i]))
    return top


@njit(cache=True, nogil=True)
def _climb(A, B, G, heads, grand, single_root):
    """McDonald & Pereira's hill climb: the best single change of head while it helps.
    Each change's gain is computed from the parts it touches (`_move_gain`, O(1) with
    siblings), and the changes within rounding of the best are scored whole, in order,
    so that the tree is the one a whole score of every change would choose: rounding
    of sums of 3N parts, each no larger than the largest finite score, stays far below
    `slack`."""
    N = heads.shape[0]
    rounding = 1e-12 * N * max(_largest(A), _largest(B), _largest(G) if grand else 0.0)
    heads = heads.copy()
    last = np.empty(N, dtype=np.int64)
    current = _tree_score(A, B, G, heads, grand, last)
    below = np.zeros((N, N), dtype=np.bool_)  # below[a, b]: b is a descendant of a (or a)
    near = np.zeros((2, N, N), dtype=np.int64)
    far = np.zeros((2, N, N), dtype=np.int64)
    cptr = np.zeros(N + 1, dtype=np.int64)
    children = np.empty(N, dtype=np.int64)
    value = np.empty((N, N))
    while True:
        below[:, :] = False
        for m in range(N):
            x = m
            while x >= 0:
                below[x, m] = True
                x = heads[x]
        _chains(heads, near, far)
        cptr[:] = 0
        for m in range(1, N):
            cptr[heads[m] + 1] += 1
        for x in range(N):
            cptr[x + 1] += cptr[x]
        fill = cptr[:N].copy()
        for m in range(1, N):
            children[fill[heads[m]]] = m
            fill[heads[m]] += 1
        top = current
        value[:, :] = NEG_INF
        for m in range(1, N):
            old = heads[m]
            for h in range(N):
                if h == old or below[m, h] or A[h, m] == NEG_INF:
                    continue
                if single_root and (h == 0 or old == 0):
                    continue  # a move would leave the root with no child or with two
                value[m, h] = current + _move_gain(A, B, G, heads, grand, near, far, cptr,
                                                   children, m, h)
                top = max(top, value[m, h])
        slack = 1e-7 * (1.0 + abs(top)) + rounding  # far above the gains' rounding
        best, arg_m, arg_h = current, -1, -1
        for m in range(1, N):
            old = heads[m]
            for h in range(N):
                if value[m, h] < top - slack:
                    continue
                heads[m] = h
                whole = _tree_score(A, B, G, heads, grand, last)
                heads[m] = old
                if whole > best:
                    best, arg_m, arg_h = whole, m, h
        if arg_m < 0:
            return heads
        heads[arg_m] = arg_h
        current = best


# --- the public functions ----------------------------------------------------------------


def _check(S, sib, grand):
    S = check_scores(S, labeled_ok=False)
    N = S.shape[0]
    arrays = [S]
    for name, X in (("sib", sib), ("grand", grand)):
        if X is None and name == "grand":
            arrays.append(None)
            continue
        X = np.ascontiguousarray(X, dtype=np.float64)
        if X.shape != (N, N, N):
            raise ValueError(f"{name} scores must have shape {(N, N, N)} for scores of shape "
                             f"{S.shape}, got {X.shape}")
        if not X.max() < np.inf:  # NaN or +inf (the maximum of an array with NaN is NaN)
            raise NonFiniteScores(f"{name} scores must not contain NaN or +inf")
        arrays.append(X)
    return arrays


def eisner(S, sib, grand=None, single_root: bool = True) -> np.ndarray:
    """The best projective tree under second-order scores. O(n³), with ``grand`` O(n⁴).

    Parameters
    ----------
    S : array, shape (n+1, n+1)
        Arc scores, as in `arborparse.trees.eisner`; -inf forbids an arc.
    sib : array, shape (n+1, n+1, n+1)
        ``sib[h, m, s]``: m is a child of h whose next sibling towards h is s (s = h for the
        closest child on its side).
    grand : array, shape (n+1, n+1, n+1), optional
        ``grand[g, h, m]``: g -> h -> m, h > 0.
    single_root : bool

    Returns
    -------
    heads : ndarray of int, shape (n+1,), ``heads[0] = -1``
    """
    return _projective_best(*_check(S, sib, grand), single_root)


def _projective_best(S, sib, grand, single_root) -> np.ndarray:
    """`eisner` on checked arrays."""
    if grand is None:
        heads, best = _sib_best(S, sib, single_root)
    else:
        heads, best = _grand_best(S, sib, _root_grand(grand), single_root)
    if best == NEG_INF:
        raise NonFiniteScores(NO_TREE)
    return heads


def approximate(S, sib, grand=None, single_root: bool = True) -> np.ndarray:
    """A good non-projective tree: McDonald & Pereira's (2006) approximation.

    From the best projective tree (`eisner`), change the head of one word at a time, taking
    the change that raises the second-order score most without making a cycle (and keeping
    one root child when ``single_root``), until no change helps. Exact second-order
    non-projective decoding is NP-hard. Arguments and result as in `eisner`.
    """
    S, sib, grand = _check(S, sib, grand)
    heads = _projective_best(S, sib, grand, single_root)
    G = np.zeros((1, 1, 1)) if grand is None else grand  # read for heads h > 0 only
    return _climb(S, sib, G, heads, grand is not None, single_root)


@njit(cache=True, nogil=True)
def _clamped(p):
    """p with every entry above 1 (sums of probabilities can round just above it) set to 1,
    in place; whether every entry was finite."""
    flat = p.reshape(-1)
    finite = True
    for i in range(flat.size):
        x = flat[i]
        finite &= x < np.inf  # False for NaN too
        flat[i] = min(x, 1.0)
    return finite


@njit(cache=True, nogil=True)
def _sib_route(A, B, single_root, marginals, mode, offset):
    """log Z (+ offset) and, if asked, the arc and sibling marginals in one semiring, or None
    where probabilities are not exact."""
    literally(mode)
    N = A.shape[0]
    CR, CL, IR, IL, SB = _sib_inside(A, B, single_root, mode)
    Z = CR[0, N - 1]
    if mode == PROB and not _trusted(Z, N, 3):
        return None
    logZ = (np.log(Z) if mode == PROB else Z) + offset
    if not marginals:
        return logZ, (np.zeros((0, 0)), np.zeros((0, 0, 0)))
    # the sibling marginals overwrite the weights: see `_sib_outside`
    msib = B if mode == PROB else np.zeros_like(B)
    mu, msib = _sib_outside(A, B, single_root, mode, CR, CL, IR, IL, SB, msib)
    finite = _clamped(mu) & _clamped(msib)
    return (logZ, (mu, msib)) if finite or mode == LOG else None


@njit(cache=True, nogil=True)
def _grand_route(A, B, G, single_root, marginals, mode, offset):
    """`_sib_route` with grandparents."""
    literally(mode)
    N = A.shape[0]
    CR, CL, IR, ILT, SB = _grand_inside(A, B, G, single_root, mode)
    Z = CR[0, 0, N - 1]
    if mode == PROB and not _trusted(Z, N, 4):
        return None
    logZ = (np.log(Z) if mode == PROB else Z) + offset
    if not marginals:
        return logZ, (np.zeros((0, 0)), np.zeros((0, 0, 0)), np.zeros((0, 0, 0)))
    mu, msib, mgrand = _grand_outside(A, B, G, single_root, mode, CR, CL, IR, ILT, SB)
    finite = _clamped(mu) & _clamped(msib) & _clamped(mgrand)
    return (logZ, (mu, msib, mgrand)) if finite or mode == LOG else None


@njit(cache=True, nogil=True)
def _sib_inside_outside(S, sib, single_root, marginals, modes):
    """`_sib_route` in each semiring of ``modes`` until one is exact; probabilities on
    weights shifted to at most 1 (see the module's docstring)."""
    for mode in modes:
        if mode == PROB:
            A, arc_shift = _shifted_weights(S)
            B, sib_shift = _part_weights(sib, False)
            result = _sib_route(A, B, single_root, marginals, PROB, arc_shift + sib_shift)
        else:
            result = _sib_route(S, sib, single_root, marginals, LOG, 0.0)
        if result is not None:
            return result
    return None


@njit(cache=True, nogil=True)
def _grand_inside_outside(S, sib, grand, single_root, marginals, modes):
    """`_sib_inside_outside` with grandparents."""
    for mode in modes:
        if mode == PROB:
            A, arc_shift = _shifted_weights(S)
            B, sib_shift = _part_weights(sib, False)
            G, grand_shift = _part_weights(grand, True)
            result = _grand_route(A, B, G, single_root, marginals, PROB,
                                  arc_shift + sib_shift + grand_shift)
        else:
            result = _grand_route(S, sib, grand, single_root, marginals, LOG, 0.0)
        if result is not None:
            return result
    return None


def _inside_outside(S, sib, grand, single_root, marginals, modes=(PROB, LOG)):
    """log Z and, if asked, the list of marginals, in probability space when that is exact
    there, else in log space. ``modes`` restricts the semirings tried (a test sees each
    one); None when none of them is exact (log space always is)."""
    modes = np.array(modes, dtype=np.int64)
    sib = np.ascontiguousarray(sib)  # `_part_weights` reads the parts' scores as one row
    grand = None if grand is None else np.ascontiguousarray(grand)
    if grand is None:
        result = _sib_inside_outside(S, sib, single_root, marginals, modes)
    else:
        result = _grand_inside_outside(S, sib, grand, single_root, marginals, modes)
    if result is None:
        return None
    logZ, parts = result
    return (logZ, list(parts)) if marginals else logZ


def log_partition(S, sib, grand=None, single_root: bool = True) -> float:
    """log Z = log Σ_y exp(score(y)) over projective trees, with second-order scores.

    Arguments as in `eisner`; returns -inf when no tree has a finite score.
    """
    S, sib, grand = _check(S, sib, grand)
    if grand is not None:
        grand = _root_grand(grand)
    return float(_inside_outside(S, sib, grand, single_root, False))


def log_partition_and_marginals(S, sib, grand=None, single_root: bool = True):
    """log Z and the marginal probability of every part, over projective trees.

    Returns
    -------
    logZ : float
    arcs : ndarray, shape (n+1, n+1), P(h -> m); each column m >= 1 sums to 1
    siblings : ndarray, shape (n+1, n+1, n+1), P((h, m, s) is a sibling part)
    grandparents : ndarray, shape (n+1, n+1, n+1), P(g -> h -> m), or None without ``grand``

    The marginals are the gradient of log Z with respect to S, sib and grand. Raises
    ValueError when no tree has a finite score.
    """
    S, sib, grand = _check(S, sib, grand)
    if grand is not None:
        grand = _root_grand(grand)
    logZ, parts = _inside_outside(S, sib, grand, single_root, True)
    if not np.isfinite(logZ):
        raise NonFiniteScores(NO_TREE)
    return (float(logZ), *parts, None) if grand is None else (float(logZ), *parts)


def _check_heads(heads, N=None) -> np.ndarray:
    """heads as an int64 array of a head for each of words 1..n (heads[0] = -1), of length
    N when given; ValueError otherwise. (Cycles are not looked for.)"""
    heads = np.asarray(heads)
    if heads.ndim != 1 or len(heads) < 2 or not np.issubdtype(heads.dtype, np.integer):
        raise ValueError(f"heads must be integers, one per word after heads[0] = -1, got "
                         f"shape {heads.shape} of {heads.dtype}")
    n = len(heads) - 1
    if N is not None and len(heads) != N:
        raise ValueError(f"heads has {len(heads)} entries for scores of {N} positions")
    words = heads[1:]
    if heads[0] != -1 or (words < 0).any() or (words > n).any() or \
            (words == np.arange(1, n + 1)).any():
        raise ValueError("heads must hold -1 at 0 and, for each word m, a head in 0..n other "
                         "than m")
    return heads.astype(np.int64)


def tree_score(S, sib, grand, heads) -> float:
    """A tree's second-order score: its arcs, sibling parts and grandparent parts."""
    S, sib, grand = _check(S, sib, grand)
    heads = _check_heads(heads, S.shape[0])
    G = np.zeros((1, 1, 1)) if grand is None else grand
    return float(_tree_score(S, sib, G, heads, grand is not None,
                             np.empty(len(heads), dtype=np.int64)))


def parts(heads):
    """A tree's second-order parts.

    Returns
    -------
    siblings : ndarray of int, shape (n, 3), rows (h, m, s), one per word m
    grandparents : ndarray of int, shape (k, 3), rows (g, h, m), one per word whose head is
        not the root
    """
    return _parts(_check_heads(heads))
