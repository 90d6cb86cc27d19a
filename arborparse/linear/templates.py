"""The first-order feature templates, compiled: arc features f(x, h, m) and label features.

Arc templates (McDonald, Crammer & Pereira 2005; MSTParser's DependencyPipe.addCoreFeatures),
each emitted twice, plain and conjoined with direction and bucketed distance
(1, 2, 3, 4, 5, 6-10, >10):

- the 13 head/child combinations of word and POS (6 unigram, 7 bigram) in two views:
  (FORM, XPOS) and (LEMMA, UPOS);
- the 7 bigram combinations with 5-character prefixes, when the head or child form is
  longer than 5 characters;
- in-between POS (head POS, POS of each word between, child POS), for UPOS and XPOS;
- surrounding POS of the left and right word of the arc (their neighbours, padded with
  STR and END, and MID where the two words are adjacent): 4 four-grams and 4 trigram
  back-offs, for UPOS and XPOS;
- FEATS pairs: every (head feature, child feature) pair, with direction;
- suffixes (the form's last 3 characters in lower case, where case, person and tense
  endings are read without a tagger's FEATS): each word's suffix with its UPOS, as head and
  as child, and three pairs: the head's UPOS with the child's suffix and UPOS, the head's
  suffix and UPOS with the child's UPOS, and both suffixes and UPOS (not with `squeeze`);
  read where the token table has the SUFFIX column (models saved before them have none:
  `LinearModel.suffixes`).

`arc_features` and `label_features` list the hashes of one arc; `labeled_arc_indices` the
weight indices of labeled arcs (for updates); `score_arcs` and `score_labels` score every
arc of a sentence at once.

Label templates, factored as in MSTParser: s(h, m, l) adds features of the head token with
the label (role "head"), of the child token (role "child"), each with direction and the
token's FORM, LEMMA, UPOS, XPOS, POS context and FEATS, plus label × (head UPOS, child
UPOS, direction) and label × direction × distance.

Arc features can be conjoined with a hidden cluster z (`cluster_index`; Smith & Smith
2007, §5): `score_arcs` scores every arc in each cluster.

A feature is a 64-bit hash; `index` maps an arc feature to a weight: the low bits for a
hashed weight vector (a power-of-two size), or its position in a sorted array of known
features (an exact dictionary), -1 when unknown. Label features are hashed without their
label and `label_index` gives the labels of one feature consecutive weights.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from arborparse.linear.tokens import FORM, LEMMA, LONG, PREFIX, SUFFIX, UPOS, XPOS

ARC_TEMPLATES = 128  # template ids below this are arc templates; label templates above
FEATURES = "suffixes"  # the arc templates' set, as trainers' checkpoints record it (before
# the suffix features, none was recorded: such a checkpoint's weights are not resumed)
_PRIME = np.uint64(0x100000001B3)
_STR = np.uint64(0x5354520000000001)
_END = np.uint64(0x454E440000000002)
_MID = np.uint64(0x4D49440000000003)


@intrinsic
def prefetch(typingctx, array, i):
    """Ask the CPU to bring array[i] into its caches (LLVM's prefetch: read, keep)."""
    def codegen(context, builder, signature, args):
        kind = signature.args[0]
        item = cgutils.get_item_pointer(context, builder, kind,
                                        context.make_array(kind)(context, builder, args[0]),
                                        [args[1]])
        i32 = ir.IntType(32)
        call = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [item.type, i32, i32, i32]),
            "llvm.prefetch.p0")
        builder.call(call, [item, i32(0), i32(3), i32(1)])
        return context.get_dummy_value()
    return types.void(array, i), codegen


@njit(inline="always", cache=True)
def _mix(h, x):
    return (h ^ np.uint64(x)) * _PRIME


@njit(inline="always", cache=True)
def _final(h):
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h


@njit(inline="always", cache=True)
def _start(template):
    return np.uint64(template + 1) * np.uint64(0x9E3779B97F4A7C15)


@njit(inline="always", cache=True)
def _emit(out, k, h, dd):
    """Write the plain feature and its direction-distance conjunction."""
    out[k] = _final(_mix(h, 0))
    out[k + 1] = _final(_mix(h, dd))
    return k + 2


@njit(inline="always", cache=True)
def direction_distance(h, m):
    """1..7 for arcs to the right, 9..15 to the left (distance buckets 1-5, 6-10, >10)."""
    d = abs(h - m)
    bucket = d if d <= 5 else (6 if d <= 10 else 7)
    return bucket if h < m else 8 + bucket


@njit(inline="always", cache=True)
def _pos(attrs, i, attr, n):
    if i < 0:
        return _STR
    if i > n:
        return _END
    return np.uint64(attrs[i, attr])


@njit(inline="always", cache=True)
def _between(view, hp, bp, cp):
    """The in-between POS feature (before its direction-distance conjunction)."""
    return _mix(_mix(_mix(_start(50 + 20 * view), hp), bp), cp)


@njit(inline="always", cache=True)
def _unigrams(attrs, i, role, dd, out, k):
    """Write the features of word i's own word and POS as the head (role 0) or the child
    (role 1) of an arc of direction-distance dd into out from k; return the new k. They
    depend on the arc only through dd, so `score_arcs` sums them once per (word, role,
    dd)."""
    for view in range(2):
        W = FORM if view == 0 else LEMMA
        P = XPOS if view == 0 else UPOS
        word = np.uint64(attrs[i, W])
        pos = np.uint64(attrs[i, P])
        t = 20 * view + 3 * role
        k = _emit(out, k, _mix(_mix(_start(t + 0), word), pos), dd)
        k = _emit(out, k, _mix(_start(t + 1), word), dd)
        k = _emit(out, k, _mix(_start(t + 2), pos), dd)
    if attrs.shape[1] > SUFFIX:
        suffix = _mix(_mix(_start(90 + role), np.uint64(attrs[i, SUFFIX])),
                      np.uint64(attrs[i, UPOS]))
        k = _emit(out, k, suffix, dd)
    return k


@njit(cache=True, nogil=True)
def arc_features(attrs, feats_ptr, feats, h, m, out, squeeze=False, between=True,
                 unigrams=True):
    """Write the feature hashes of the arc h -> m into out; return how many.

    out must hold at least ``arc_capacity(n, max FEATS per word)`` entries. `squeeze` drops
    the templates that pair the head's and the child's word (form, lemma, prefix or
    suffix) and the POS four-grams (Smith & Smith 2007, §5.2). ``between=False`` leaves out the
    in-between POS features (`score_arcs` counts them by tag instead), ``unigrams=False``
    those of the head and the child alone (`_unigrams`).
    """
    n = attrs.shape[0] - 1
    dd = direction_distance(h, m)
    k = 0
    if unigrams:
        k = _unigrams(attrs, h, 0, dd, out, k)
        k = _unigrams(attrs, m, 1, dd, out, k)
    for view in range(2):
        W = FORM if view == 0 else LEMMA
        P = XPOS if view == 0 else UPOS
        hw = np.uint64(attrs[h, W])
        hp = np.uint64(attrs[h, P])
        cw = np.uint64(attrs[m, W])
        cp = np.uint64(attrs[m, P])
        t = 20 * view
        # the templates pairing both words (6, 8, 10, 11) go with squeeze
        if not squeeze:
            k = _emit(out, k, _mix(_mix(_mix(_mix(_start(t + 6), hw), hp), cw), cp), dd)
        k = _emit(out, k, _mix(_mix(_mix(_start(t + 7), hp), cw), cp), dd)
        if not squeeze:
            k = _emit(out, k, _mix(_mix(_mix(_start(t + 8), hw), cw), cp), dd)
        k = _emit(out, k, _mix(_mix(_mix(_start(t + 9), hw), hp), cp), dd)
        if not squeeze:
            k = _emit(out, k, _mix(_mix(_mix(_start(t + 10), hw), hp), cw), dd)
            k = _emit(out, k, _mix(_mix(_start(t + 11), hw), cw), dd)
        k = _emit(out, k, _mix(_mix(_start(t + 12), hp), cp), dd)
    if attrs[h, LONG] or attrs[m, LONG]:
        hw = np.uint64(attrs[h, PREFIX])
        hp = np.uint64(attrs[h, XPOS])
        cw = np.uint64(attrs[m, PREFIX])
        cp = np.uint64(attrs[m, XPOS])
        if not squeeze:
            k = _emit(out, k, _mix(_mix(_mix(_mix(_start(40), hw), hp), cw), cp), dd)
        k = _emit(out, k, _mix(_mix(_mix(_start(41), hp), cw), cp), dd)
        if not squeeze:
            k = _emit(out, k, _mix(_mix(_mix(_start(42), hw), cw), cp), dd)
        k = _emit(out, k, _mix(_mix(_mix(_start(43), hw), hp), cp), dd)
        if not squeeze:
            k = _emit(out, k, _mix(_mix(_mix(_start(44), hw), hp), cw), dd)
            k = _emit(out, k, _mix(_mix(_start(45), hw), cw), dd)
        k = _emit(out, k, _mix(_mix(_start(46), hw), cp), dd)
    if attrs.shape[1] > SUFFIX:
        hs, hu = np.uint64(attrs[h, SUFFIX]), np.uint64(attrs[h, UPOS])
        cs, cu = np.uint64(attrs[m, SUFFIX]), np.uint64(attrs[m, UPOS])
        k = _emit(out, k, _mix(_mix(_mix(_start(92), hu), cs), cu), dd)
        k = _emit(out, k, _mix(_mix(_mix(_start(93), hs), hu), cu), dd)
        if not squeeze:  # it pairs the two words
            k = _emit(out, k, _mix(_mix(_mix(_mix(_start(94), hs), hu), cs), cu), dd)
    left = min(h, m)
    right = max(h, m)
    for view in range(2):
        P = UPOS if view == 0 else XPOS
        t = 50 + 20 * view
        hp = np.uint64(attrs[h, P])
        cp = np.uint64(attrs[m, P])
        if between:
            for b in range(left + 1, right):
                k = _emit(out, k, _between(view, hp, np.uint64(attrs[b, P]), cp), dd)
        lp = np.uint64(attrs[left, P])
        rp = np.uint64(attrs[right, P])
        adjacent = left + 1 == right
        l_next = _MID if adjacent else _pos(attrs, left + 1, P, n)
        r_prev = _MID if adjacent else _pos(attrs, right - 1, P, n)
        l_prev = _pos(attrs, left - 1, P, n)
        r_next = _pos(attrs, right + 1, P, n)
        if not squeeze:  # the four-grams
            k = _emit(out, k, _mix(_mix(_mix(_mix(_start(t + 1), lp), l_next), r_prev), rp),
                      dd)
            k = _emit(out, k, _mix(_mix(_mix(_mix(_start(t + 2), l_prev), lp), r_prev), rp),
                      dd)
            k = _emit(out, k, _mix(_mix(_mix(_mix(_start(t + 3), lp), l_next), rp), r_next),
                      dd)
            k = _emit(out, k, _mix(_mix(_mix(_mix(_start(t + 4), l_prev), lp), rp), r_next),
                      dd)
        k = _emit(out, k, _mix(_mix(_mix(_start(t + 5), lp), l_next), rp), dd)
        k = _emit(out, k, _mix(_mix(_mix(_start(t + 6), lp), r_prev), rp), dd)
        k = _emit(out, k, _mix(_mix(_mix(_start(t + 7), l_prev), lp), rp), dd)
        k = _emit(out, k, _mix(_mix(_mix(_start(t + 8), lp), rp), r_next), dd)
    direction = np.uint64(1 if h < m else 2)
    for a in range(feats_ptr[h], feats_ptr[h + 1]):
        fa = _mix(_mix(_start(100), direction), np.uint64(feats[a]))
        for b in range(feats_ptr[m], feats_ptr[m + 1]):
            out[k] = _final(_mix(fa, np.uint64(feats[b])))
            k += 1
    return k


def arc_capacity(n: int, max_feats: int) -> int:
    """Enough room for the features of any arc of an n-word sentence."""
    return 2 * (13 * 2 + 2 + 7 + 3 + 8 * 2) + 2 * 2 * max(n, 1) + max_feats * max_feats + 16


@njit(inline="always", cache=True)
def index(h, keys, size):
    """The weight index of arc feature hash h: hashed (keys empty, size a power of two) or
    its position in the sorted array keys (-1 when unknown)."""
    if keys.shape[0] == 0:
        return np.int64(h & np.uint64(size - 1))
    pos = np.searchsorted(keys, h)
    if pos < keys.shape[0] and keys[pos] == h:
        return np.int64(pos)
    return np.int64(-1)


@njit(inline="always", cache=True)
def label_index(h, label, labels, keys, label_keys, size):
    """The weight index of label feature h (a label-free hash) with `label`: the labels of
    one feature own consecutive weights, so scoring all labels reads one cache line.
    Hashed: (h + label) mod size; dictionary: after the arc features' weights, block
    `labels` wide per known label feature (-1 when unknown)."""
    if keys.shape[0] == 0:
        return np.int64((h + np.uint64(label)) & np.uint64(size - 1))
    pos = np.searchsorted(label_keys, h)
    if pos < label_keys.shape[0] and label_keys[pos] == h:
        return np.int64(keys.shape[0] + pos * labels + label)
    return np.int64(-1)


@njit(inline="always", cache=True)
def cluster_index(h, z, clusters, keys, size):
    """The weight index of arc feature h conjoined with cluster z of `clusters` (Smith &
    Smith 2007, §5; hashed weights only when clusters > 1): the clusters of one feature
    own consecutive weights, so scoring all clusters reads one or a few cache lines. With
    one cluster this is `index`: the plain model."""
    if clusters == 1:
        return index(h, keys, size)
    return np.int64((h % np.uint64(size // clusters)) * np.uint64(clusters) + np.uint64(z))


@njit(cache=True, nogil=True)
def _tag_counts(attrs):
    """Per view (UPOS, XPOS; the in-between templates' order): the distinct tags, padded
    (2, U); how many (2,); each word's tag as an index into them (2, N); and prefix counts
    (2, N+1, U): count[v, i, u] = how many of the words 0..i-1 have tag u."""
    N = attrs.shape[0]
    U = 1
    for P in (UPOS, XPOS):
        U = max(U, np.unique(attrs[:, P]).shape[0])
    tags = np.zeros((2, U), dtype=np.int64)
    sizes = np.zeros(2, dtype=np.int64)
    position = np.zeros((2, N), dtype=np.int64)
    count = np.zeros((2, N + 1, U), dtype=np.int64)
    for view in range(2):
        P = UPOS if view == 0 else XPOS
        distinct = np.unique(attrs[:, P])
        sizes[view] = distinct.shape[0]
        tags[view, :distinct.shape[0]] = distinct
        position[view] = np.searchsorted(distinct, attrs[:, P])
        for i in range(N):
            count[view, i + 1] = count[view, i]
            count[view, i + 1, position[view, i]] += 1
    return tags, sizes, position, count


@njit(cache=True, nogil=True)
def _between_indices(attrs, h, m, dd, tags, sizes, position, count, by_tag, known, walk,
                     w, keys, clusters, idx, k, base):
    """The in-between POS features of h -> m: walking the words between when they are
    no more than the distinct tags (`walk` >= 0: than `walk`), their weight indices (in
    cluster 0) written into idx from k; else, by tag with the prefix counts, count times
    weight added to base[z] from by_tag[view, tag_h, tag_m, dd] (each tag's weights between that
    pair of tags at that direction-distance, looked up once, where known is set: long
    sentences' arcs are mostly counted by tag and share those few pairs). The same sum as
    over `arc_features`'s list, O(min(|h - m|, tags)) per arc instead of O(|h - m|).
    Returns the new k."""
    left = min(h, m)
    right = max(h, m)
    size = w.shape[0]
    for view in range(2):
        P = UPOS if view == 0 else XPOS
        hp = np.uint64(attrs[h, P])
        cp = np.uint64(attrs[m, P])
        if right - left - 1 <= (sizes[view] if walk < 0 else walk):
            for j in range(right - left - 1):
                feature = _between(view, hp, np.uint64(attrs[left + 1 + j, P]), cp)
                for f in (_final(_mix(feature, 0)), _final(_mix(feature, dd))):
                    i = cluster_index(f, 0, clusters, keys, size)
                    if i >= 0:
                        prefetch(w, i)
                        idx[k] = i
                        k += 1
            continue
        a, b = position[view, h], position[view, m]
        table = by_tag[view, a, b, dd]
        if not known[view, a, b, dd]:
            table[:] = 0.0
            for j in range(sizes[view]):
                feature = _between(view, hp, np.uint64(tags[view, j]), cp)
                for f in (_final(_mix(feature, 0)), _final(_mix(feature, dd))):
                    i = cluster_index(f, 0, clusters, keys, size)
                    if i >= 0:
                        for z in range(clusters):
                            table[j, z] += w[i + z]
            known[view, a, b, dd] = True
        for z in range(clusters):  # each cluster's sum in a scalar, tags in order
            one = base[z]
            for j in range(sizes[view]):  # no test for a count of 0: 0 × a (finite) weight adds 0
                one += float(count[view, right, j] - count[view, left + 1, j]) * table[j, z]
            base[z] = one
    return k


@njit(inline="always", cache=True)
def _add_weights(buf, count, w, keys, clusters, total):
    """total[z] += the weights of the features buf[:count] in cluster z."""
    size = w.shape[0]
    if clusters == 1:  # a scalar sum: the loads overlap, 4x faster
        one = 0.0
        for k in range(count):
            i = index(buf[k], keys, size)
            if i >= 0:
                one += w[i]
        total[0] += one
    else:
        for k in range(count):
            i = cluster_index(buf[k], 0, clusters, keys, size)
            for z in range(clusters):
                total[z] += w[i + z]


@njit(cache=True, nogil=True)
def _arc_indices(attrs, feats_ptr, feats, h, m, buf, squeeze, w, keys, clusters, idx, k):
    """The weight indices (cluster 0) of the arc h -> m's features, those of the words
    between and of either word alone left out, written into idx from k, their weights
    prefetched; returns the new k."""
    size = w.shape[0]
    for j in range(arc_features(attrs, feats_ptr, feats, h, m, buf, squeeze, False, False)):
        i = cluster_index(buf[j], 0, clusters, keys, size)
        if i >= 0:
            prefetch(w, i)
            idx[k] = i
            k += 1
    return k


@njit(cache=True, nogil=True)
def _own_unigrams(attrs, h, m, dd, buf, w, keys, clusters, own, done):
    """own[i, role, dd] = the weights of `_unigrams` of the head h (role 0) and the child m
    (role 1) of an arc of direction-distance dd, summed where `done` is not yet set."""
    for i, role in ((h, 0), (m, 1)):
        if not done[i, role, dd]:
            _add_weights(buf, _unigrams(attrs, i, role, dd, buf, 0), w, keys, clusters,
                         own[i, role, dd])
            done[i, role, dd] = True


@njit(inline="always", cache=True)
def _gather(w, idx, arcs, base, pending, h, S):
    """S[z, h, m] for the pending arcs of head h: arc a (to m = arcs[a, 0]) owns the
    weight indices idx[arcs[a, 1]:arcs[a, 3]] (from arcs[a, 2] on, the in-between POS
    features walked); its score in cluster z is base[a, z] + the sum of its features'
    weights. One tight loop of independent loads over many arcs, so
    that their cache misses overlap."""
    for a in range(pending):
        for z in range(base.shape[1]):
            one = 0.0
            for k in range(arcs[a, 1], arcs[a, 2]):
                one += w[idx[k] + z]
            total = base[a, z] + one
            for k in range(arcs[a, 2], arcs[a, 3]):
                total += w[idx[k] + z]
            S[z, h, arcs[a, 0]] = total


_GATHER = 4096  # weight indices gathered at once: many arcs' misses in flight, in cache


@njit(cache=True, nogil=True)
def score_arcs(attrs, feats_ptr, feats, w, keys, clusters, buf, squeeze=False):
    """S[z, h, m] = w · f(x, h, m, z) for every arc and each of `clusters` clusters (1:
    the plain scores w · f(x, h, m)); shape (clusters, n+1, n+1), -inf on the diagonal
    and in column 0. buf: scratch of `arc_capacity` entries. O(n² (features + tags)):
    the in-between POS features are counted per tag (`_between_indices`), and the features
    of the head or the child alone summed once per word, role and direction-distance. The
    weight indices of a head's arcs are listed first and their weights read together
    (`_gather`). `score_arc_rows` fills some heads' rows (threads share the work)."""
    N = attrs.shape[0]
    S = np.full((clusters, N, N), -np.inf)
    score_arc_rows(attrs, feats_ptr, feats, w, keys, clusters, buf, squeeze, 0, N, S,
                   NO_SKIP, own_between(attrs, clusters))
    return S


NO_SKIP = np.zeros((0, 0), dtype=np.bool_)  # `score_arc_rows`' and `label_rows`' skip: none
SHARED_MB = 32  # `between_tables`: the largest tables by tag a paragraph's windows share
WALK = 0  # with tables shared, the words between are walked only where there are none


@njit(cache=True, nogil=True)
def own_between(attrs, clusters):
    """`score_arc_rows`' in-between tables of a sentence (`_tag_counts`, the weights by tag
    of `_between_indices`, empty, and where none is filled yet; walking the words
    between where they are no more than the tags)."""
    tags, sizes, position, count = _tag_counts(attrs)
    U = tags.shape[1]
    return (tags, sizes, position, count, np.empty((2, U, U, 16, U, clusters)),
            np.zeros((2, U, U, 16), dtype=np.bool_), -1)


def between_tables(attrs, clusters: int):
    """`own_between` of a sentence, to share among its windows (`cut_between`; the words
    between counted by tag wherever there are any), or None where its tables by tag
    would take more than `SHARED_MB` megabytes (more than 50 distinct tags in a view at
    one cluster: each window then keeps its own, as a sentence does)."""
    U = max(1, *(np.unique(attrs[:, P]).shape[0] for P in (UPOS, XPOS)))  # as `_tag_counts`
    if 2 * U ** 3 * 16 * clusters * 8 > SHARED_MB << 20:  # `own_between`'s by tag, in bytes
        return None
    return own_between(attrs, clusters)[:6] + (WALK,)


def cut_between(between, a: int, N: int):
    """`between_tables` of a sentence (or None) made those of its window of the words
    a..a+N-2 (0-based; N with the root): each word's tag and the prefix counts read at
    its place in the sentence, the tables by tag shared (they depend on the tags
    alone)."""
    if between is None:
        return None
    tags, sizes, position, count, by_tag, known, walk = between
    place = np.concatenate([[0], np.arange(a + 1, a + N)])
    return (tags, sizes, np.ascontiguousarray(position[:, place]),
            np.ascontiguousarray(count[:, np.concatenate([place, [a + N]])]), by_tag, known,
            walk)


@njit(cache=True, nogil=True)
def score_arc_rows(attrs, feats_ptr, feats, w, keys, clusters, buf, squeeze, lo, hi, S,
                   skip, between):
    """`score_arcs`' S[z, h, m] for the heads lo <= h < hi, written into S (full of -inf),
    with its own caches: calls on disjoint rows may run at once (the GIL is released), each
    with its own buf, and give the same scores as one call. The arcs where `skip` (an
    (n+1, n+1) boolean array, or `NO_SKIP`) is set are left as they are. `between`: the
    in-between tables, the sentence's own (`own_between`; one per call) or shared by a
    sentence's windows (`cut_between`; filled as they are needed).

    The parts of an arc's work (`_own_unigrams`, `_arc_indices`, `_between_indices`) are
    compiled functions of their own, not inlined: inlined into this loop, LLVM made the
    whole of it take 45 % longer (all arcs of Gothic-PROIEL's 1,017 test windows of 30
    words: 2.28 s inlined, 1.57 s as they are, the same scores)."""
    N = attrs.shape[0]
    skips = skip.shape[0] > 0
    tags, sizes, position, count, by_tag, known, walk = between
    own = np.zeros((N, 2, 16, clusters))  # (word, role, dd): its unigram features' weights
    done = np.zeros((N, 2, 16), dtype=np.bool_)
    idx = np.empty(_GATHER + buf.shape[0], dtype=np.int64)
    arcs = np.empty((N, 4), dtype=np.int64)  # pending arcs: m, where their indices start
    base = np.empty((N, clusters))  # and the weights summed without them (`_between_indices`)
    for h in range(lo, hi):
        pending = k = 0
        for m in range(1, N):
            if h == m or (skips and skip[h, m]):
                continue
            dd = direction_distance(h, m)
            _own_unigrams(attrs, h, m, dd, buf, w, keys, clusters, own, done)
            arcs[pending, 0] = m
            arcs[pending, 1] = k
            base[pending] = own[h, 0, dd] + own[m, 1, dd]
            k = _arc_indices(attrs, feats_ptr, feats, h, m, buf, squeeze, w, keys, clusters,
                             idx, k)
            arcs[pending, 2] = k
            k = _between_indices(attrs, h, m, dd, tags, sizes, position, count, by_tag, known,
                                 walk, w, keys, clusters, idx, k, base[pending])
            arcs[pending, 3] = k
            pending += 1
            if k >= _GATHER:
                _gather(w, idx, arcs, base, pending, h, S)
                pending = k = 0
        _gather(w, idx, arcs, base, pending, h, S)


@njit(cache=True, nogil=True)
def token_label_features(attrs, feats_ptr, feats, i, role, direction, out):
    """Label-free hashes of the label features of token i as head (role 0) or child
    (role 1) of an arc pointing in `direction` (0 left, 1 right); return the count."""
    n = attrs.shape[0] - 1
    base = _mix(_mix(_start(ARC_TEMPLATES), np.uint64(role)), np.uint64(direction))
    k = 0
    out[k] = _final(base)
    k += 1
    for a in range(4):
        out[k] = _final(_mix(_mix(base, np.uint64(a + 1)), np.uint64(attrs[i, a])))
        k += 1
    u = np.uint64(attrs[i, UPOS])
    prev = _pos(attrs, i - 1, UPOS, n)
    nxt = _pos(attrs, i + 1, UPOS, n)
    out[k] = _final(_mix(_mix(_mix(base, np.uint64(10)), prev), u))
    out[k + 1] = _final(_mix(_mix(_mix(base, np.uint64(11)), u), nxt))
    out[k + 2] = _final(_mix(_mix(_mix(_mix(base, np.uint64(12)), prev), u), nxt))
    k += 3
    for a in range(feats_ptr[i], feats_ptr[i + 1]):
        out[k] = _final(_mix(_mix(base, np.uint64(13)), np.uint64(feats[a])))
        k += 1
    return k


@njit(inline="always", cache=True)
def _pos_pair_feature(hu, mu, direction):
    return _final(_mix(_mix(_mix(_start(ARC_TEMPLATES + 1), np.uint64(direction)), hu), mu))


@njit(inline="always", cache=True)
def _distance_feature(dd):
    return _final(_mix(_start(ARC_TEMPLATES + 2), np.uint64(dd)))


@njit(cache=True, nogil=True)
def label_features(attrs, feats_ptr, feats, h, m, out):
    """The label-free hashes of the label features of the arc h -> m; return the count."""
    direction = 1 if h < m else 0
    k = token_label_features(attrs, feats_ptr, feats, h, 0, direction, out)
    k += token_label_features(attrs, feats_ptr, feats, m, 1, direction, out[k:])
    out[k] = _pos_pair_feature(np.uint64(attrs[h, UPOS]), np.uint64(attrs[m, UPOS]), direction)
    out[k + 1] = _distance_feature(direction_distance(h, m))
    return k + 2


@njit(inline="always", cache=True)
def _add_labels(w, h, labels, keys, label_keys, out):
    """out[l] += the weight of label feature h with label l, for every label."""
    for label in range(labels):
        i = label_index(h, label, labels, keys, label_keys, w.shape[0])
        if i >= 0:
            out[label] += w[i]


@njit(inline="always", cache=True)
def _prefetch_labels(w, h, labels, keys, label_keys):
    """Prefetch the weights of label feature h with every label (one or a few cache
    lines: they are consecutive)."""
    for label in range(0, labels + 15, 16):  # the first, every 16th and the last label
        i = label_index(h, min(label, labels - 1), labels, keys, label_keys, w.shape[0])
        if i >= 0:
            prefetch(w, i)


@njit(cache=True, nogil=True)
def token_label_rows(attrs, feats_ptr, feats, w, keys, label_keys, labels, tokens, token):
    """`label_tables`' token[i, role, dir] for each token i of `tokens` (the other rows
    are left as they are): the features of the entries listed (and their weights
    prefetched) before their weights are read."""
    T = tokens.shape[0]
    widest = 0
    for i in tokens:
        widest = max(widest, feats_ptr[i + 1] - feats_ptr[i])
    hashes = np.empty(4 * T * (8 + widest), dtype=np.uint64)  # 8 + FEATS per entry
    ptr = np.zeros(4 * T + 1, dtype=np.int64)
    for e in range(4 * T):  # e = (the e // 4-th token, role, direction)
        ptr[e + 1] = ptr[e] + token_label_features(attrs, feats_ptr, feats, tokens[e // 4],
                                                   (e // 2) % 2, e % 2, hashes[ptr[e]:])
        for k in range(ptr[e], ptr[e + 1]):
            _prefetch_labels(w, hashes[k], labels, keys, label_keys)
    for e in range(4 * T):
        row = token[tokens[e // 4], (e // 2) % 2, e % 2]
        row[:] = 0.0
        for k in range(ptr[e], ptr[e + 1]):
            _add_labels(w, hashes[k], labels, keys, label_keys, row)


@njit(cache=True, nogil=True)
def label_tables(attrs, feats_ptr, feats, w, keys, label_keys, labels, scale=1.0, exps=False):
    """The parts of s(h, m, l) = head(h, l, dir) + child(m, l, dir)
    + pair(UPOS_h, UPOS_m, l, dir) + distance(l, dir, dist), each looked up once per
    distinct argument: token [i, role, dir, l] (`token_label_rows`), pair [tag_h, tag_m,
    dir, l], tag [i] (the index of word i's UPOS in pair), distance [dd, l]. Each table's
    features are listed (and their weights prefetched) before their weights are read.
    Returns (the tables, with `exps` their exponentials at `scale` (`label_exps`), else
    `NO_EXPS`)."""
    N = attrs.shape[0]
    L = labels
    token = np.empty((N, 2, 2, L))
    token_label_rows(attrs, feats_ptr, feats, w, keys, label_keys, L, np.arange(N), token)
    tags = np.unique(attrs[:, UPOS])
    tag = np.searchsorted(tags, attrs[:, UPOS])
    U = tags.shape[0]
    pair = np.zeros((U, U, 2, L))
    pairs = np.empty((U, U, 2), dtype=np.uint64)
    for a in range(U):
        for b in range(U):
            for direction in range(2):
                pairs[a, b, direction] = _pos_pair_feature(np.uint64(tags[a]),
                                                           np.uint64(tags[b]), direction)
                _prefetch_labels(w, pairs[a, b, direction], L, keys, label_keys)
    for a in range(U):
        for b in range(U):
            for direction in range(2):
                _add_labels(w, pairs[a, b, direction], L, keys, label_keys,
                            pair[a, b, direction])
    distance = np.zeros((16, L))
    for dd in range(16):
        _add_labels(w, _distance_feature(dd), L, keys, label_keys, distance[dd])
    tables = (token, pair, tag, distance)
    return tables, (label_exps(tables, scale) if exps else _no_exps())


PRODUCTS = 24  # from this many words on, the label log-sum-exp is taken from products


@njit(cache=True, nogil=True)
def _exps(table, scale):
    """(exp(scale × row − its shift), the shift: scale × the row's largest) of each
    last-axis row of a table."""
    shape = table.shape[:-1]
    flat = table.reshape(-1, table.shape[-1])
    E = np.empty_like(flat)
    M = np.empty(flat.shape[0])
    for r in range(flat.shape[0]):
        M[r] = (scale * flat[r]).max()
        for label in range(flat.shape[1]):
            E[r, label] = np.exp(scale * flat[r, label] - M[r])
    return E.reshape(table.shape), M.reshape(shape)


@njit(cache=True, nogil=True)
def label_exps(tables, scale):
    """The rows of `label_tables`' token, pair and distance tables exponentiated under
    scale × s (`_exps`): `label_rows` sums exp(scale × s(h, m, l)) over the labels as
    products of four of them, instead of one exponential per arc and label."""
    token, pair, _, distance = tables
    Et, Mt = _exps(token, scale)
    Ep, Mp = _exps(pair, scale)
    Ed, Md = _exps(distance, scale)
    return Et, Mt, Ep, Mp, Ed, Md


@njit(cache=True, nogil=True)
def window_label_rows(token, tag, Et, Mt, a, attrs, feats_ptr, feats, w, keys, label_keys,
                      scale):
    """The token rows and tags of `label_tables`, and with `Et` not empty their
    exponentials (`label_exps`), of a window: the words a.. of a sentence whose tables
    these are, encoded as a sentence of its own (`attrs`, ...). Its inner words' rows are
    the sentence's (each reads the same words around it); those of its root and of its
    first and last word, which read its edges, are looked up."""
    N = attrs.shape[0]
    labels = token.shape[3]
    rows = np.empty((N, 2, 2, labels))
    rows[2:N - 1] = token[a + 2:a + N - 1]
    edges = np.unique(np.array([0, 1, N - 1]))
    token_label_rows(attrs, feats_ptr, feats, w, keys, label_keys, labels, edges, rows)
    tags = np.empty(N, dtype=tag.dtype)
    tags[0] = tag[0]
    tags[1:] = tag[a + 1:a + N]
    if Et.shape[0] == 0:
        return rows, tags, Et, Mt
    Ew, Mw = np.empty_like(rows), np.empty((N, 2, 2))
    Ew[2:N - 1], Mw[2:N - 1] = Et[a + 2:a + N - 1], Mt[a + 2:a + N - 1]
    for i in edges:
        Ew[i], Mw[i] = _exps(rows[i], scale)
    return rows, tags, Ew, Mw


@njit(cache=True, nogil=True)
def _no_exps():
    """`NO_EXPS` made in compiled code (a global array there is read-only, and a kernel
    given both kinds would be compiled, and loaded, twice)."""
    return (np.zeros((0, 2, 2, 0)), np.zeros((0, 2, 2)), np.zeros((0, 0, 2, 0)),
            np.zeros((0, 0, 2)), np.zeros((0, 0)), np.zeros(0))


NO_EXPS = _no_exps.py_func()  # `label_rows`: no products (made by NumPy: no kernel to load)


@njit(inline="always", cache=True)
def _arc_label_scores(token, pair, tag, distance, h, m, out):
    """out[l] = s(h, m, l) for every label: four rows of the tables added (they vectorize)."""
    direction = 1 if h < m else 0
    head = token[h, 0, direction]
    child = token[m, 1, direction]
    both = pair[tag[h], tag[m], direction]
    far = distance[direction_distance(h, m)]
    for label in range(out.shape[0]):
        out[label] = head[label] + child[label] + both[label] + far[label]


@njit(inline="always", cache=True)
def _label_sum(exps, tag, h, m):
    """log Σ_l exp(scale × s(h, m, l)) from `label_exps`' tables: the sum of products of
    the rows' exponentials, plus their shifts (-inf where the products underflow)."""
    Et, Mt, Ep, Mp, Ed, Md = exps
    direction = 1 if h < m else 0
    dd = direction_distance(h, m)
    head = Et[h, 0, direction]
    child = Et[m, 1, direction]
    both = Ep[tag[h], tag[m], direction]
    far = Ed[dd]
    acc = 0.0
    for label in range(far.shape[0]):
        acc += head[label] * child[label] * both[label] * far[label]
    if not acc >= 1e-280:  # far below the shifts (or NaN): the caller sums exponentials
        return -np.inf
    return (Mt[h, 0, direction] + Mt[m, 1, direction] + Mp[tag[h], tag[m], direction]
            + Md[dd] + np.log(acc))


@njit(cache=True, nogil=True)
def score_labels(attrs, feats_ptr, feats, w, keys, label_keys, labels, scale=1.0,
                 with_sum=False):
    """Under the scores scale × s(h, m, l): the best label of every arc, its score and,
    `with_sum`, log Σ_l exp of the scores (else an empty array), each (n+1, n+1), -inf
    where there is no arc. O(n L) weight lookups plus O(n² L) additions, without the
    (n+1, n+1, L) array."""
    N = attrs.shape[0]
    tables, exps = label_tables(attrs, feats_ptr, feats, w, keys, label_keys, labels, scale,
                                with_sum and N - 1 >= PRODUCTS)
    best = np.zeros((N, N), dtype=np.int64)
    score = np.full((N, N), -np.inf)
    total = np.full((N, N) if with_sum else (0, 0), -np.inf)
    label_rows(tables, scale, 0, N, best, score, total, NO_SKIP, exps)
    return best, score, total


@njit(cache=True, nogil=True)
def label_rows(tables, scale, lo, hi, best, score, total, skip, exps):
    """`score_labels`' best label, its score and (where total is not empty) the
    log-sum-exp of the arcs of heads lo <= h < hi, from the tables of `label_tables`
    (the log-sum-exp from `label_exps`' products where `exps` is not `NO_EXPS`, else
    from an exponential per label): calls on disjoint rows may run at once. The arcs
    where `skip` (as in `score_arc_rows`) is set are left as they are."""
    token, pair, tag, distance = tables
    N = best.shape[0]
    labels = distance.shape[1]
    with_sum = total.shape[0] > 0
    products = exps[0].shape[0] > 0
    skips = skip.shape[0] > 0
    values = np.empty(labels)
    for h in range(lo, hi):
        for m in range(1, N):
            if h == m or (skips and skip[h, m]):
                continue
            _arc_label_scores(token, pair, tag, distance, h, m, values)
            top = 0
            for label in range(1, labels):
                if values[label] > values[top]:
                    top = label
            best[h, m] = top
            score[h, m] = scale * values[top]
            if with_sum:
                found = _label_sum(exps, tag, h, m) if products else -np.inf
                if found == -np.inf:
                    acc = 0.0
                    for label in range(labels):
                        acc += np.exp(scale * (values[label] - values[top]))
                    found = score[h, m] + np.log(acc)
                total[h, m] = found


@njit(cache=True, nogil=True)
def label_scores(attrs, feats_ptr, feats, w, keys, label_keys, labels):
    """s(h, m, l) for every arc and label: shape (n+1, n+1, L), -inf where there is no arc."""
    (token, pair, tag, distance), _ = label_tables(attrs, feats_ptr, feats, w, keys,
                                                   label_keys, labels)
    N = attrs.shape[0]
    out = np.full((N, N, labels), -np.inf)
    for h in range(N):
        for m in range(1, N):
            if h != m:
                _arc_label_scores(token, pair, tag, distance, h, m, out[h, m])
    return out


@njit(cache=True, nogil=True)
def tree_label_scores(tables, heads):
    """s(heads[m], m, l) for every word m and label l of the tree `heads`, from the tables
    of `label_tables`: shape (n+1, L), row 0 zero."""
    token, pair, tag, distance = tables
    out = np.zeros((heads.shape[0], distance.shape[1]))
    for m in range(1, heads.shape[0]):
        _arc_label_scores(token, pair, tag, distance, heads[m], m, out[m])
    return out


@njit(cache=True, nogil=True)
def labeled_arc_hashes(attrs, feats_ptr, feats, heads, words, buf, squeeze=False):
    """The arc feature hashes and the label-free label feature hashes of the arcs
    heads[i] -> words[i], concatenated (for building an exact feature dictionary)."""
    arcs = np.empty(words.shape[0] * buf.shape[0], dtype=np.uint64)
    labels = np.empty(words.shape[0] * buf.shape[0], dtype=np.uint64)
    a = b = 0
    for i in range(words.shape[0]):
        count = arc_features(attrs, feats_ptr, feats, heads[i], words[i], buf, squeeze)
        arcs[a:a + count] = buf[:count]
        a += count
        count = label_features(attrs, feats_ptr, feats, heads[i], words[i], buf)
        labels[b:b + count] = buf[:count]
        b += count
    return arcs[:a], labels[:b]


@njit(cache=True, nogil=True)
def labeled_arc_indices(attrs, feats_ptr, feats, heads, words, arc_labels, keys, label_keys,
                        labels, size, buf, squeeze=False):
    """The weight indices of the features of the labeled arcs heads[i] -> words[i] with
    arc_labels[i]: (indices, ptr), arc i owning ``indices[ptr[i]:ptr[i+1]]``; features
    unknown to a dictionary are dropped."""
    out = np.empty(words.shape[0] * 2 * buf.shape[0], dtype=np.int64)
    ptr = np.zeros(words.shape[0] + 1, dtype=np.int64)
    k = 0
    for i in range(words.shape[0]):
        count = arc_features(attrs, feats_ptr, feats, heads[i], words[i], buf, squeeze)
        for j in range(count):
            idx = index(buf[j], keys, size)
            if idx >= 0:
                out[k] = idx
                k += 1
        count = label_features(attrs, feats_ptr, feats, heads[i], words[i], buf)
        for j in range(count):
            idx = label_index(buf[j], arc_labels[i], labels, keys, label_keys, size)
            if idx >= 0:
                out[k] = idx
                k += 1
        ptr[i + 1] = k
    return out[:k], ptr


@njit(cache=True, nogil=True)
def add_arc_expectations(attrs, feats_ptr, feats, D, keys, size, buf, out, squeeze=False):
    """out[i] += Σ_{z,h,m} D[z, h, m] [feature i fires on the arc h -> m in cluster z]
    (D: (clusters, n+1, n+1), e.g. marginals minus the gold tree's indicator: the
    gradient of the log-likelihood)."""
    N = attrs.shape[0]
    clusters = D.shape[0]
    for h in range(N):
        for m in range(1, N):
            if h == m:
                continue
            if clusters == 1:  # the plain model, kept scalar (as in `score_arcs`)
                c = D[0, h, m]
                if c == 0.0:
                    continue
                count = arc_features(attrs, feats_ptr, feats, h, m, buf, squeeze)
                for k in range(count):
                    i = index(buf[k], keys, size)
                    if i >= 0:
                        out[i] += c
                continue
            count = arc_features(attrs, feats_ptr, feats, h, m, buf, squeeze)
            for k in range(count):
                i = cluster_index(buf[k], 0, clusters, keys, size)
                for z in range(clusters):
                    out[i + z] += D[z, h, m]


@njit(cache=True, nogil=True)
def add_label_expectations(attrs, feats_ptr, feats, D, keys, label_keys, labels, size, buf,
                           out):
    """out[i] += Σ_{h,m,l} D[h, m, l] [label feature i fires on h -> m with l] (D: (n+1,
    n+1, L)). The factored label templates let D be summed per token, UPOS pair and
    distance first: O(n² L) additions, then O(n L) weight updates."""
    N = attrs.shape[0]
    L = labels
    token = np.zeros((N, 2, 2, L))
    tags = np.unique(attrs[:, UPOS])
    tag = np.searchsorted(tags, attrs[:, UPOS])
    U = tags.shape[0]
    pair = np.zeros((U, U, 2, L))
    distance = np.zeros((16, L))
    for h in range(N):
        for m in range(1, N):
            if h == m:
                continue
            direction = 1 if h < m else 0
            dd = direction_distance(h, m)
            for label in range(L):
                c = D[h, m, label]
                token[h, 0, direction, label] += c
                token[m, 1, direction, label] += c
                pair[tag[h], tag[m], direction, label] += c
                distance[dd, label] += c
    for i in range(N):
        for role in range(2):
            for direction in range(2):
                count = token_label_features(attrs, feats_ptr, feats, i, role, direction, buf)
                for k in range(count):
                    _scatter_labels(buf[k], token[i, role, direction], labels, keys,
                                    label_keys, size, out)
    for a in range(U):
        for b in range(U):
            for direction in range(2):
                _scatter_labels(_pos_pair_feature(np.uint64(tags[a]), np.uint64(tags[b]),
                                                  direction), pair[a, b, direction], labels,
                                keys, label_keys, size, out)
    for dd in range(16):
        _scatter_labels(_distance_feature(dd), distance[dd], labels, keys, label_keys, size,
                        out)


@njit(inline="always", cache=True)
def _scatter_labels(h, values, labels, keys, label_keys, size, out):
    for label in range(labels):
        if values[label] != 0.0:
            i = label_index(h, label, labels, keys, label_keys, size)
            if i >= 0:
                out[i] += values[label]
