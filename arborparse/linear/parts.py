"""The second-order feature templates: sibling parts (h, m, s) and grandparent parts
(g, h, m), in the convention of `arborparse.trees.second_order` (s is m's next sibling
towards h on the same side, s == h for h's closest child there).

Sibling templates (McDonald & Pereira 2006; MSTParser's ``DependencyPipe2O``), each in two
views, (FORM, XPOS) and (LEMMA, UPOS), plain and conjoined with the direction of the arc
h -> m:

- the POS triple (head, sibling, modifier);
- the sibling-modifier pairs: (sibling POS, modifier POS), (sibling word, modifier word),
  (sibling word, modifier POS), (sibling POS, modifier word);
- conjoined with direction and the distance between sibling and modifier (bucketed as
  the arc templates') only: the POS pair, and that distance alone marked first child or
  not.

With s == h (the first child on its side) the sibling's word and POS are the padding
symbol STR, and the distance is the arc's: the "first child" case is its own feature.

Grandparent templates (Carreras 2007; Koo & Collins 2010), in both views, conjoined with
the directions of g -> h and h -> m: the POS triple (g, h, m); (g POS, m POS), (g word,
m POS), (g POS, m word), (g word, m word). (Their plain twins, without the directions,
measured worse on Gothic.)

A part's features are those of two *entries*: a triple entry, keyed by the tag classes of
its three words (a word's class: its (UPOS, XPOS) pair in the sentence), and a pair
entry, keyed by two positions. Many parts share an entry, so a sentence's O(n³) part
scores cost O(n²) weight lookups (plus one per distinct triple) and O(n³) additions:
`part_entries` keys every part's two entries, `entry_indices` lists each entry's weight
indices, `expand` and `reduce` go from entry values to part scores and back. The features
are hashed with the first-order templates' hash into the same weight vector.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from arborparse.linear.templates import (_STR, _emit, _final, _mix, _start, direction_distance,
                                         prefetch)
from arborparse.linear.tokens import FORM, LEMMA, UPOS, XPOS

SIB_TRIPLE, SIB_PAIR, GRAND_TRIPLE, GRAND_PAIR = range(4)  # the kinds of entries
ENTRY_CAPACITY = 2 * (4 * 2 + 1) + 1  # the most features an entry has (a sibling pair)


@njit(inline="always", cache=True)
def _classes(attrs):
    """Each word's tag class (0..C-1: its (UPOS, XPOS) pair) and a word of each class."""
    joint = (attrs[:, UPOS] << 32) | attrs[:, XPOS]
    distinct = np.unique(joint)
    cls = np.searchsorted(distinct, joint)
    rep = np.empty(distinct.shape[0], dtype=np.int64)
    rep[cls] = np.arange(attrs.shape[0])
    return cls, rep


@njit(inline="always", cache=True)
def _attribute(attrs, i, a):
    """attrs[i, a], or STR for i < 0 (the missing sibling of a first child)."""
    return _STR if i < 0 else np.uint64(attrs[i, a])


@njit(inline="always", cache=True)
def _key(keys, row, kind, a, b, c, d):
    keys[row, 0] = kind
    keys[row, 1] = a
    keys[row, 2] = b
    keys[row, 3] = c
    keys[row, 4] = d


@njit(inline="always", cache=True)
def _sibling_keys(cls, C, h, m, s, keys, row):
    """Write the keys (kind, a, b, c, d) of the entries of the sibling part (h, m, s) into
    keys[row] and keys[row + 1]: the triple (class of h, of s or C for a first child, of
    m, direction) and the pair (s or h, m, first child)."""
    first = s == h
    _key(keys, row, SIB_TRIPLE, cls[h], C if first else cls[s], cls[m], h < m)
    _key(keys, row + 1, SIB_PAIR, s, m, first, 0)


@njit(inline="always", cache=True)
def _grand_keys(cls, g, h, m, keys, row):
    """The keys of the entries of the grandparent part (g, h, m) (see `_sibling_keys`): the
    triple of classes and the pair (g, m), both with the two directions."""
    dirs = 2 * (g < h) + (h < m)
    _key(keys, row, GRAND_TRIPLE, cls[g], cls[h], cls[m], dirs)
    _key(keys, row + 1, GRAND_PAIR, g, m, dirs, 0)


@njit(inline="always", cache=True)
def _directed(out, k, h, d, plain):
    """Write the feature h conjoined with d >= 1 (a direction) and, with `plain`, h alone
    (as MSTParser's sibling features, in both forms); return the new k."""
    if plain:
        return _emit(out, k, h, d)
    out[k] = _final(_mix(h, np.uint64(d)))
    return k + 1


@njit(cache=True, nogil=True)
def entry_features(attrs, key, out):
    """Write the feature hashes of the entry `key` (a row of `part_entries`' keys, in
    positions, not classes) into out; return how many."""
    kind, a, b, c, d = key[0], key[1], key[2], key[3], key[4]
    plain = kind == SIB_TRIPLE or kind == SIB_PAIR
    k = 0
    if kind == SIB_TRIPLE or kind == GRAND_TRIPLE:  # a, b, c: words (b < 0: STR)
        for view in range(2):
            P = XPOS if view == 0 else UPOS
            h = _start(200 + 10 * kind + view)
            h = _mix(_mix(_mix(h, _attribute(attrs, a, P)), _attribute(attrs, b, P)),
                     np.uint64(attrs[c, P]))
            k = _directed(out, k, h, d + 1, plain)
        return k
    # a sibling pair (a = s or h, b = m, c = first child): the sibling, the modifier, the
    # direction and the distance between them; a first child's sibling is STR, at the
    # head's distance. A grandparent pair (a = g, b = m, c = directions)
    first = kind == SIB_PAIR and c == 1
    x = -1 if first else a
    dirs = (a < b if kind == SIB_PAIR else c) + 1
    dd = np.uint64(direction_distance(a, b)) if kind == SIB_PAIR else np.uint64(0)
    for view in range(2):
        W = FORM if view == 0 else LEMMA
        P = XPOS if view == 0 else UPOS
        xw, xp = _attribute(attrs, x, W), _attribute(attrs, x, P)
        mw, mp = np.uint64(attrs[b, W]), np.uint64(attrs[b, P])
        t = 200 + 10 * kind + 5 * view
        pairs = ((xp, mp), (xw, mw), (xw, mp), (xp, mw))
        for j in range(4):
            u, v = pairs[j]
            k = _directed(out, k, _mix(_mix(_start(t + j), u), v), dirs, plain)
        if kind == SIB_PAIR:
            out[k] = _final(_mix(_mix(_mix(_start(t + 4), xp), mp), dd))
            k += 1
    if kind == SIB_PAIR:
        out[k] = _final(_mix(_mix(_start(250), dd), np.uint64(first)))
        k += 1
    return k


@njit(cache=True, nogil=True)
def _positions(keys, rep, C):
    """The keys with classes replaced by a word of the class (-1 for C, the STR class)."""
    out = keys.copy()
    for e in range(keys.shape[0]):
        if keys[e, 0] == SIB_TRIPLE or keys[e, 0] == GRAND_TRIPLE:
            for j in range(1, 4):
                out[e, j] = -1 if keys[e, j] == C else rep[keys[e, j]]
    return out


@njit(cache=True, nogil=True)
def _grown(keys):
    out = np.empty((2 * keys.shape[0], keys.shape[1]), dtype=keys.dtype)
    out[:keys.shape[0]] = keys
    return out


@njit(inline="always", cache=True)
def _entry(t, triples, pairs, keys, E):
    """The id of the entry whose key (in classes) is t, the next one (E) if it is new:
    (id, keys, the new E). triples[kind // 2] and pairs[kind // 2] map keys to ids."""
    triple = t[0] == SIB_TRIPLE or t[0] == GRAND_TRIPLE
    which = t[0] // 2
    e = triples[which, t[1], t[2], t[3], t[4]] if triple else pairs[which, t[1], t[2], t[3]]
    if e >= 0:
        return e, keys, E
    if E == keys.shape[0]:
        keys = _grown(keys)
    keys[E] = t
    if triple:
        triples[which, t[1], t[2], t[3], t[4]] = E
    else:
        pairs[which, t[1], t[2], t[3]] = E
    return E, keys, E + 1


@njit(cache=True, nogil=True)
def part_entries(attrs, grandparents, skip):
    """The entries of every part of a sentence: (sib, grand, keys), the parts with an arc
    set in `skip` ((N, N) booleans: the arcs h -> m left out of every tree, the parser's
    reach; (0, 0) for none) left out (-1), as no tree has them.

    sib : (N, N, N, 2) int32, the two entries of the sibling part (h, m, s), -1 where
        (h, m, s) is no part of any tree (s neither h nor strictly between h and m)
    grand : (N, N, N, 2) int32 for the grandparent part (g, h, m) (-1 where none: h = 0,
        g = h, m in {0, g, h}); shape (0, 0, 0, 2) without `grandparents`
    keys : (E, 5) int64, the entries (kind, a, b, c, d), words as positions (for
        `entry_indices`)
    """
    N = attrs.shape[0]
    skips = skip.shape[0] > 0
    cls, rep = _classes(attrs)
    C = rep.shape[0]
    kinds = 2 if grandparents else 1
    triples = np.full((kinds, C, C + 1, C, 4), -1, dtype=np.int32)
    pairs = np.full((kinds, N, N, 4), -1, dtype=np.int32)
    t = np.empty((2, 5), dtype=np.int64)
    keys = np.empty((4 * N * N, 5), dtype=np.int64)
    E = 0
    sib = np.full((N, N, N, 2), -1, dtype=np.int32)
    for h in range(N):
        for m in range(1, N):
            if m == h or (skips and skip[h, m]):
                continue
            for s in range(h, m, 1 if h < m else -1):
                if skips and s != h and skip[h, s]:
                    continue
                # the ids known already (as `_sibling_keys` keys them), else new ones
                first = int(s == h)
                e = triples[0, cls[h], C if first else cls[s], cls[m], int(h < m)]
                p = pairs[0, s, m, first]
                if e < 0 or p < 0:
                    _sibling_keys(cls, C, h, m, s, t, 0)
                    e, keys, E = _entry(t[0], triples, pairs, keys, E)
                    p, keys, E = _entry(t[1], triples, pairs, keys, E)
                sib[h, m, s, 0] = e
                sib[h, m, s, 1] = p
    G = N if grandparents else 0
    grand = np.full((G, G, G, 2), -1, dtype=np.int32)
    for g in range(G):
        for h in range(1, N):
            if h == g or (skips and skip[g, h]):
                continue
            for m in range(1, N):
                if m == h or m == g or (skips and skip[h, m]):
                    continue
                dirs = 2 * (g < h) + (h < m)  # as `_grand_keys`
                e = triples[1, cls[g], cls[h], cls[m], dirs]
                p = pairs[1, g, m, dirs]
                if e < 0 or p < 0:
                    _grand_keys(cls, g, h, m, t, 0)
                    e, keys, E = _entry(t[0], triples, pairs, keys, E)
                    p, keys, E = _entry(t[1], triples, pairs, keys, E)
                grand[g, h, m, 0] = e
                grand[g, h, m, 1] = p
    return sib, grand, _positions(keys[:E], rep, C)


@njit(cache=True, nogil=True)
def tree_entries(attrs, sib_parts, grand_parts):
    """The keys (as `part_entries`' keys, one per occurrence) of the entries of the given
    parts: sibling parts rows (h, m, s), grandparent parts rows (g, h, m)."""
    cls, rep = _classes(attrs)
    C = rep.shape[0]
    keys = np.empty((2 * (sib_parts.shape[0] + grand_parts.shape[0]), 5), dtype=np.int64)
    for i in range(sib_parts.shape[0]):
        _sibling_keys(cls, C, sib_parts[i, 0], sib_parts[i, 1], sib_parts[i, 2], keys, 2 * i)
    row = 2 * sib_parts.shape[0]
    for i in range(grand_parts.shape[0]):
        _grand_keys(cls, grand_parts[i, 0], grand_parts[i, 1], grand_parts[i, 2], keys,
                    row + 2 * i)
    return _positions(keys, rep, C)


@njit(cache=True, nogil=True)
def entry_indices(attrs, keys, size):
    """The hashed weight indices (of a vector of `size`, a power of two) of the features
    of each entry: (indices, ptr), entry e owning ``indices[ptr[e]:ptr[e+1]]``."""
    out = np.empty(keys.shape[0] * ENTRY_CAPACITY, dtype=np.int64)
    ptr = np.zeros(keys.shape[0] + 1, dtype=np.int64)
    buf = np.empty(ENTRY_CAPACITY, dtype=np.uint64)
    mask = np.uint64(size - 1)
    for e in range(keys.shape[0]):
        count = entry_features(attrs, keys[e], buf)
        for j in range(count):
            out[ptr[e] + j] = np.int64(buf[j] & mask)
        ptr[e + 1] = ptr[e] + count
    return out[:ptr[-1]], ptr


@njit(cache=True, nogil=True)
def entry_values(w, indices, ptr):
    """The sum of the weights of each entry's features, (E,). The weights of a block of
    entries are prefetched before they are read, so that their cache misses overlap."""
    values = np.empty(ptr.shape[0] - 1)
    for start in range(0, values.shape[0], _BLOCK):
        stop = min(start + _BLOCK, values.shape[0])
        for k in range(ptr[start], ptr[stop]):
            prefetch(w, indices[k])
        for e in range(start, stop):
            total = 0.0
            for k in range(ptr[e], ptr[e + 1]):
                total += w[indices[k]]
            values[e] = total
    return values


_BLOCK = 64  # entries prefetched at once (about a thousand weights)


@njit(cache=True, nogil=True)
def scatter(counts, indices, ptr, out):
    """out[i] += counts[e] for every feature i of every entry e."""
    for e in range(counts.shape[0]):
        c = counts[e]
        if c != 0.0:
            for k in range(ptr[e], ptr[e + 1]):
                out[indices[k]] += c


@njit(cache=True, nogil=True)
def expand(entries, values):
    """The part scores: values[entries[..., 0]] + values[entries[..., 1]], 0 where there is
    no part (entries -1); shape entries.shape[:3]."""
    A, B, C = entries.shape[0], entries.shape[1], entries.shape[2]
    out = np.zeros((A, B, C))
    for a in range(A):
        for b in range(B):
            for c in range(C):
                e = entries[a, b, c, 0]
                if e >= 0:
                    out[a, b, c] = values[e] + values[entries[a, b, c, 1]]
    return out


@njit(cache=True, nogil=True)
def reduce(entries, D, counts):
    """counts[e] += Σ D[part] over the parts using entry e (the adjoint of `expand`)."""
    A, B, C = entries.shape[0], entries.shape[1], entries.shape[2]
    for a in range(A):
        for b in range(B):
            for c in range(C):
                e = entries[a, b, c, 0]
                if e >= 0:
                    counts[e] += D[a, b, c]
                    counts[entries[a, b, c, 1]] += D[a, b, c]
