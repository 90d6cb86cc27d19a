"""Pseudo-projective parsing (Nivre & Nilsson 2005), as MaltParser implements it.

`lift` makes a tree projective: while an arc h -> d (h not the root) is non-projective,
the shortest such arc (ties: leftmost d) is lifted, head(d) := head(h). The labels record
what the lifts did, in one of three encodings (d: the word's label; s: the label of its
original head's own arc, the "syntactic head"):

- ``head``: a lifted word's label becomes ``d|s``;
- ``path``: a lifted word's ``d|``; every word lifted over (on the path) ``d%``; both ``d|%``;
- ``head+path``: lifted ``d|s``, path ``d%``, both ``d|s%``.

`lower` undoes the lifts in a parser's output: words are visited top-down from the root
(pre-order, children left to right, one retry pass) and a lifted word x attached to g moves
to the first node found by a breadth-first search of g's descendants (not entering x's
subtree, children nearest to x first) that has label s (``head``); that is %-marked with
no %-marked children, searching along %-marked words only (``path``); or both, falling back
to the first %-marked node labelled s (``head+path``). When nothing is found x stays on g.
All labels come back without their marks.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from arborparse.errors import ArborparseError
from arborparse.io.conllu import Sentence
from arborparse.trees.structure import nonprojective_arcs

ENCODINGS = ("head", "path", "head+path")


def _check(encoding: str) -> None:
    if encoding not in ENCODINGS:
        raise ValueError(f"unknown encoding {encoding!r}; choose one of {ENCODINGS}")


def lift_tree(heads: np.ndarray, deprels: list[str], encoding: str = "head"):
    """(projective heads, encoded labels) of a tree; heads[0] = -1, deprels of words 1..n."""
    _check(encoding)
    for label in deprels:
        if "|" in label or "%" in label:
            raise ArborparseError(f"label {label!r} holds '|' or '%', which mark lifts")
    heads = np.array(heads, dtype=np.int64)
    n = len(heads) - 1
    lifted = np.zeros(n + 1, dtype=bool)
    on_path = np.zeros(n + 1, dtype=bool)
    syntactic = [""] * (n + 1)
    while True:
        words = np.flatnonzero(nonprojective_arcs(heads)) + 1
        if len(words) == 0:
            break
        d = int(words[np.argmin(np.abs(heads[words] - words))])  # first = leftmost
        h = int(heads[d])
        if not lifted[d]:
            lifted[d] = True
            syntactic[d] = deprels[h - 1]
        on_path[h] = True
        heads[d] = heads[h]
    labels = []
    for m in range(1, n + 1):
        label = deprels[m - 1]
        if lifted[m]:
            label += "|" + (syntactic[m] if encoding != "path" else "")
        if on_path[m] and encoding != "head":
            label += "%"
        labels.append(label)
    return heads, labels


def _decode_labels(deprels: list[str]):
    """Plain labels, lifted flags, syntactic-head labels and path marks, index 1..n."""
    n = len(deprels)
    plain, lifted, target, marked = [""], np.zeros(n + 1, bool), [""] * (n + 1), \
        np.zeros(n + 1, bool)
    for m, label in enumerate(deprels, 1):
        if label.endswith("%"):
            marked[m] = True
            label = label[:-1]
        if "|" in label:
            label, target[m] = label.split("|", 1)
            lifted[m] = True
        plain.append(label)
    return plain, lifted, target, marked


def lower_tree(heads: np.ndarray, deprels: list[str], encoding: str = "head"):
    """(heads, plain labels) with the lifts encoded in the labels undone; see the module."""
    _check(encoding)
    heads = np.array(heads, dtype=np.int64)
    n = len(heads) - 1
    plain, lifted, target, marked = _decode_labels(deprels)

    def children(g, skip):
        return [c for c in range(1, n + 1) if heads[c] == g and c != skip]

    def search(g, x):
        queue = deque(sorted(children(g, x), key=lambda c: abs(c - x)))
        if encoding != "head":
            queue = deque(c for c in queue if marked[c])
        fallback = None
        while queue:
            node = queue.popleft()
            below = sorted(children(node, x), key=lambda c: abs(c - x))
            if encoding == "head":
                if plain[node] == target[x]:
                    return node
            else:
                below = [c for c in below if marked[c]]
                if encoding == "path" and not below:
                    return node
                if encoding == "head+path" and plain[node] == target[x]:
                    if not below:
                        return node
                    fallback = fallback or node
            queue.extend(below)
        return fallback

    def visit_all() -> bool:
        ok = True
        stack = [0]
        while stack:
            node = stack.pop()
            if lifted[node]:
                found = search(int(heads[node]), node)
                if found is None:
                    ok = False
                else:
                    heads[node] = found
                    lifted[node] = False
            stack.extend(reversed(children(node, -1)))
        return ok

    if not visit_all():
        visit_all()
    return heads, plain[1:]


def lift(sentence: Sentence, encoding: str = "head") -> Sentence:
    """The sentence made projective by lifting, the lifts encoded in its labels."""
    return sentence.with_tree(*lift_tree(sentence.heads, sentence.deprels, encoding))


def lower(sentence: Sentence, encoding: str = "head") -> Sentence:
    """A lifted (parsed) sentence with its encoded lifts undone and plain labels."""
    return sentence.with_tree(*lower_tree(sentence.heads, sentence.deprels, encoding))
