"""The best trees of a chunk of sentences in one compiled call.

`LinearParser`'s default parse (the MAP tree of a model without hidden clusters, scored in
one thread) runs, for each sentence, the kernels that `LinearModel.scores`, `decode`,
`LinearParser._joint` and the labeler run one by one: the label tables, the arcs left out
(`arborparse.linear.reach`), each arc's best label, the arc scores, at order 2 the part
scores, the best tree and its labels. `best_trees` runs them for every sentence of a chunk
from one call, the same trees and labels without the Python between them (English-EWT's
test set tagged and parsed in one process: 1.50 CPU s one sentence at a time, 1.20 a chunk
at a time; at order 2 with grandparents 3.5 and 2.7).

numba renews a kernel's cache only when the kernel's own file changes, not when a kernel
it calls from another file does (`templates`, `labeler`, `reach`, `parts`,
`arborparse.trees`): after
changing one of those in a checkout, delete the caches (``find arborparse -name
'*.nb[ci]' -delete``) or `best_trees` keeps running the kernels as they were. (This
docstring changed with the suffix features of the templates, its signature with the root
label, and this again with Eisner's chart trying the split points of allowed arcs alone
and with the grandparent chart reading rows, so that a checkout pulling them compiles
`best_trees` anew.)
"""

from __future__ import annotations

import numpy as np
from numba import njit

from arborparse.linear.labeler import _label
from arborparse.linear.parts import entry_indices, entry_values, expand, part_entries
from arborparse.linear.reach import _cut
from arborparse.linear.templates import (_no_exps, label_rows, label_tables, own_between,
                                         score_arc_rows, tree_label_scores)
from arborparse.linear.tokens import UPOS, TokenTable
from arborparse.trees.decode import _best_tree
from arborparse.trees.scores import allowed_best
from arborparse.trees.second_order import _climb, _grand_best, _sib_best


def concatenated(tables: list[TokenTable]) -> tuple[np.ndarray, ...]:
    """(attrs, attrs_ptr, feats_ptr, feats, feats_at) of the sentences' token tables, one
    after the other: sentence b's attrs are ``attrs[attrs_ptr[b]:attrs_ptr[b + 1]]``, its
    FEATS pointers the ``attrs_ptr[b + 1] - attrs_ptr[b] + 1`` entries of feats_ptr from
    ``attrs_ptr[b] + b`` on, its FEATS ``feats[feats_at[b]:feats_at[b + 1]]``."""
    sizes = [len(t.attrs) for t in tables]
    attrs_ptr = np.zeros(len(tables) + 1, dtype=np.int64)
    attrs_ptr[1:] = np.cumsum(sizes)
    feats_at = np.zeros(len(tables) + 1, dtype=np.int64)
    feats_at[1:] = np.cumsum([len(t.feats) for t in tables])
    return (np.concatenate([t.attrs for t in tables]), attrs_ptr,
            np.concatenate([t.feats_ptr for t in tables]),
            np.concatenate([t.feats for t in tables]), feats_at)


@njit(cache=True, nogil=True)
def best_trees(attrs, attrs_ptr, feats_ptr, feats, feats_at, buf, w, keys, label_keys, labels,
               squeeze, tag_keys, before, after, reach_before, reach_after, longer_than,
               projective, single_root, sibling_words, grand_words, labeler, joint_weight,
               root, heads, arc_labels):
    """The best tree of each sentence of a chunk (`concatenated`) and its labels, written
    into heads and arc_labels (each a sentence's n + 1 entries, from ``attrs_ptr[b]`` on;
    -1 at the root). The arcs left out are those of `arborparse.linear.reach.out_of_reach`
    (`cut_arguments`: tag_keys, before, after, reach_before, reach_after, and
    longer_than); a sentence of up to `sibling_words` words (-1: an order-1 model) is
    parsed with the sibling parts, and of up to `grand_words` (-1: a model without them)
    with the grandparent parts too (`LinearModel._parts_of`), by their projective chart
    and, unless `projective`, McDonald & Pereira's climb (`second_order.approximate`);
    with `labeler` (its weights; none: an empty array), the labels are its
    choice with `joint_weight` (`Labeler.labels`), else each arc's best label; the label
    `root` (-1: none) where and only where the head is 0 (`allowed_best`). buf:
    scratch of `arc_capacity` entries for the longest sentence. Returns the first
    sentence without a tree of finite score, or -1 (its trees and those after it are not
    written)."""
    no_skip = np.zeros((0, 0), dtype=np.bool_)  # `templates.NO_SKIP` (a global is read-only)
    no_total = np.zeros((0, 0))
    no_exps = _no_exps()
    for b in range(attrs_ptr.shape[0] - 1):
        lo, hi = attrs_ptr[b], attrs_ptr[b + 1]
        N = hi - lo
        x = attrs[lo:hi]
        ptr = feats_ptr[lo + b:hi + b + 1]
        fx = feats[feats_at[b]:feats_at[b + 1]]
        skip = no_skip
        if N - 2 > longer_than:  # n - 1, as `out_of_reach` has it
            cut, found = _cut(np.ascontiguousarray(x[1:, UPOS]), tag_keys, before, after,
                              reach_before, reach_after)
            if found:
                skip = cut
        tables, _ = label_tables(x, ptr, fx, w, keys, label_keys, labels, 1.0, False)
        best = np.zeros((N, N), dtype=np.int64)
        score = np.full((N, N), -np.inf)
        label_rows(tables, 1.0, 0, N, best, score, no_total, skip, no_exps)
        S = np.full((1, N, N), -np.inf)
        score_arc_rows(x, ptr, fx, w, keys, 1, buf, squeeze, 0, N, S, skip,
                       own_between(x, 1))
        total = S[0] + score
        if N - 1 <= sibling_words:
            tree, ok = _second_order_tree(x, w, total, skip, N - 1 <= grand_words,
                                          projective, single_root)
        else:
            tree, ok = _best_tree(total, projective, single_root)
        if not ok:
            return b
        heads[lo:hi] = tree
        if labeler.shape[0]:
            joint = tree_label_scores(tables, tree)
            own = np.empty(joint.shape)
            chosen = np.full(N, -1, dtype=np.int64)
            _label(x, ptr, fx, tree, labeler, joint, joint_weight, chosen, own, root)
            arc_labels[lo:hi] = chosen
        else:
            arc_labels[lo] = -1
            joint = no_total
            for m in range(1, N):
                label = best[tree[m], m]
                if root >= 0 and (tree[m] == 0) != (label == root):
                    if joint.shape[0] == 0:
                        joint = tree_label_scores(tables, tree)
                    label = allowed_best(joint[m], tree[m], root)
                arc_labels[lo + m] = label
    return -1


@njit(cache=True, nogil=True)
def _second_order_tree(x, w, total, skip, grandparents, projective, single_root):
    """The best tree under the arc scores `total` and the sentence's part scores (as
    `LinearModel.part_scores` makes them, `grandparents` or not, the parts of the arcs in
    `skip` left out), as `second_order.eisner` (`projective`) or `approximate` finds it:
    (heads, whether a tree has a finite score: False too where a score is NaN or +inf,
    which `second_order.eisner` refuses)."""
    sib, grand, keys = part_entries(x, grandparents, skip)
    indices, ptr = entry_indices(x, keys, w.shape[0])
    values = entry_values(w, indices, ptr)
    if not (_below_inf(total) and _below_inf(values)):  # a part's score is two values' sum
        return np.full(total.shape[0], -1, dtype=np.int64), False
    B = expand(sib, values)
    G = expand(grand, values) if grandparents else np.zeros((1, 1, 1))
    if grandparents:
        G[0, 0, :] = 0.0  # the root's slot (`second_order._root_grand`)
        tree, best = _grand_best(total, B, G, single_root)
    else:
        tree, best = _sib_best(total, B, single_root)
    if best == -np.inf:
        return tree, False
    if not projective:
        tree = _climb(total, B, G, tree, grandparents, single_root)
    return tree, True


@njit(cache=True, nogil=True)
def _below_inf(X):
    """Whether no score of X is NaN or +inf."""
    for v in X.ravel():
        if not v < np.inf:
            return False
    return True
