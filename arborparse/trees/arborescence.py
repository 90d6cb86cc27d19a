"""Maximum spanning arborescence: Chu-Liu-Edmonds in Tarjan's dense O(n²) form.

Each node (an original word or a contracted cycle) keeps a dense row ``inw[c, u]``:
the best reduced score of an arc from original node u into c. Picking a node's best
incoming arc is O(n); contracting a cycle C builds the new row from its members' rows
in O(n |C|); every node is contracted at most once, so the whole search is O(n²).

The single-root constraint is exact (Gabow & Tarjan 1984; Zmigrod, Vieira & Cotterell
2020, "Please Mind the Root"): once the greedy graph is fully contracted, while the root
has several children, the root arc whose replacement costs least (its score minus the
best other arc into that node) is swapped for that other arc; a swap that closes a cycle
is contracted, and the contracted node is entered from the root again (the swapped root
arc stays in its row). Each swap removes a root child or a node, which keeps the total
O(n²).
"""

from __future__ import annotations

import numpy as np
from numba import njit

NEG_INF = -np.inf


@njit(cache=True, nogil=True)
def _find(uf, x):
    root = x
    while uf[root] != root:
        root = uf[root]
    while uf[x] != root:
        nxt = uf[x]
        uf[x] = root
        x = nxt
    return root


@njit(cache=True, nogil=True)
def _choose(c, inw, intgt, in_src, in_tgt, in_score, first_source):
    """Pick node c's best incoming arc from sources >= first_source (1 skips the root);
    False if every such arc into c is forbidden (-inf)."""
    best = NEG_INF
    arg = -1
    for u in range(first_source, inw.shape[1]):
        if inw[c, u] > best:
            best = inw[c, u]
            arg = u
    if arg < 0:
        return False
    in_src[c] = arg
    in_tgt[c] = intgt[c, arg]
    in_score[c] = best
    return True


@njit(cache=True, nogil=True)
def _contract(members, count, c, inw, intgt, in_score, uf, cyc_parent, first_child,
              next_sibling):
    """Contract the cycle members[:count] into the new node c."""
    N = inw.shape[1]
    for k in range(count):
        v = members[k]
        uf[v] = c
        cyc_parent[v] = c
        next_sibling[v] = first_child[c]
        first_child[c] = v
    inside = np.empty(N, dtype=np.bool_)
    for u in range(N):
        inside[u] = _find(uf, u) == c
        inw[c, u] = NEG_INF
    for k in range(count):
        v = members[k]
        for u in range(N):
            if not inside[u]:
                val = inw[v, u] - in_score[v]
                if val > inw[c, u]:
                    inw[c, u] = val
                    intgt[c, u] = intgt[v, u]


@njit(cache=True, nogil=True)
def _mst(S, single_root):
    """Heads of the best arborescence of S (heads[0] = -1) and whether one exists."""
    N = S.shape[0]
    M = 2 * N
    heads = np.full(N, -1, dtype=np.int64)
    inw = np.full((M, N), NEG_INF)
    intgt = np.zeros((M, N), dtype=np.int64)
    for m in range(1, N):
        for u in range(N):
            if u != m:
                inw[m, u] = S[u, m]
            intgt[m, u] = m
    uf = np.arange(M)
    cyc_parent = np.full(M, -1)
    first_child = np.full(M, -1)
    next_sibling = np.full(M, -1)
    in_src = np.full(M, -1)
    in_tgt = np.full(M, -1)
    in_score = np.full(M, NEG_INF)
    done = np.zeros(M, dtype=np.bool_)
    on_path = np.zeros(M, dtype=np.bool_)
    path = np.empty(M, dtype=np.int64)
    members = np.empty(M, dtype=np.int64)
    done[0] = True
    nodes = N

    # Phase 1: grow paths along best incoming arcs, contracting cycles as they close.
    for start in range(1, N):
        a = _find(uf, start)
        if done[a]:
            continue
        depth = 0
        while True:
            if not _choose(a, inw, intgt, in_src, in_tgt, in_score, 0):
                return heads, False
            b = _find(uf, in_src[a])
            if done[b]:
                done[a] = True
                for k in range(depth):
                    done[path[k]] = True
                    on_path[path[k]] = False
                break
            if on_path[b]:
                count = 0
                members[count] = a
                count += 1
                while True:
                    depth -= 1
                    v = path[depth]
                    on_path[v] = False
                    members[count] = v
                    count += 1
                    if v == b:
                        break
                c = nodes
                nodes += 1
                _contract(members, count, c, inw, intgt, in_score, uf, cyc_parent,
                          first_child, next_sibling)
                a = c
            else:
                on_path[a] = True
                path[depth] = a
                depth += 1
                a = b

    # Phase 2: while the root has several children, swap the root arc whose replacement
    # by the best other arc into its node costs least. The root arc stays in the node's
    # row: if the swap closes a cycle, the contracted node is entered from the root again.
    while single_root:
        children = 0
        best_cost = np.inf
        x_best = -1
        for x in range(1, nodes):
            if cyc_parent[x] == -1 and in_src[x] == 0:
                children += 1
                alt = NEG_INF
                for u in range(1, N):
                    if inw[x, u] > alt:
                        alt = inw[x, u]
                cost = in_score[x] - alt
                if x_best < 0 or cost < best_cost:
                    best_cost = cost
                    x_best = x
        if children <= 1:
            break
        if best_cost == np.inf:
            return heads, False
        a = x_best
        _choose(a, inw, intgt, in_src, in_tgt, in_score, 1)
        while True:
            w = _find(uf, in_src[a])
            while w != 0 and w != a:
                w = _find(uf, in_src[w])
            if w == 0:
                break
            count = 0
            members[count] = a
            count += 1
            w = _find(uf, in_src[a])
            while w != a:
                members[count] = w
                count += 1
                w = _find(uf, in_src[w])
            c = nodes
            nodes += 1
            _contract(members, count, c, inw, intgt, in_score, uf, cyc_parent,
                      first_child, next_sibling)
            a = c
            if not _choose(a, inw, intgt, in_src, in_tgt, in_score, 0):
                return heads, False

    # Expansion: top-down, each cycle keeps every member's arc but the one entered.
    uses_own = np.zeros(M, dtype=np.bool_)
    enter = np.full(M, -1)
    for x in range(nodes - 1, 0, -1):
        if cyc_parent[x] == -1:
            uses_own[x] = True
            enter[x] = in_tgt[x]
        if x >= N:
            t = enter[x]
            w = t
            while cyc_parent[w] != x:
                w = cyc_parent[w]
            v = first_child[x]
            while v != -1:
                if v == w:
                    enter[v] = t
                else:
                    uses_own[v] = True
                    enter[v] = in_tgt[v]
                v = next_sibling[v]
    for x in range(1, nodes):
        if uses_own[x]:
            heads[in_tgt[x]] = in_src[x]
    return heads, True
