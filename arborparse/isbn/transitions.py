"""The arc-eager transition system of the ISBN parser (Titov & Henderson 2007; spec §2, §10).

A configuration is a stack S (words only; the root is never on it), a front index j (the
queue is words j..n) and the arcs built so far. Decisions, with their masks Φ (s = top of S):

- ``LA`` r: j -> s labelled r, pops S; allowed when S is non-empty and s has no head;
- ``RA`` r: s -> j labelled r, leaves S and j unchanged; the next decision must be Shift;
- ``RED``: pops S; allowed when S is non-empty (even if s has no head: MaltParser's
  allow_reduce, IDP parsing mode 2);
- ``SHIFT``: pushes j and moves the front to j + 1 (which the generative model generates);
  shifting w_n ends the derivation.

Root dependents are never attached explicitly: words left without a head at the end get
head 0 and the treebank's root label. `oracle` gives the gold derivation of a projective
tree (IDP's rules: left-arc, right-arc, shift once the front's left part is complete, reduce
once the top is complete), `replay` rebuilds the tree from a derivation. Deviation: a word
whose gold head is the root counts as complete once its dependents are built (its head arc
is never built), so that trees where arcs cross over root dependents — multi-rooted trees
and any tree the transitions can build — still have a derivation.
"""

from __future__ import annotations

import numpy as np

from arborparse.errors import ArborparseError

LA, RA, RED, SHIFT = range(4)
ACTIONS = ("LA", "RA", "RED", "SHIFT")


class Config:
    """A parser configuration over n words: the stack, the front, and for words 1..n their
    head (-1 while none), label and outermost dependents so far (0: none)."""

    __slots__ = ("n", "stack", "front", "heads", "labels", "leftmost", "rightmost",
                 "forced_shift")

    def __init__(self, n: int):
        self.n = n
        self.stack: list[int] = []
        self.front = 1
        self.heads = [-1] * (n + 1)
        self.labels: list = [None] * (n + 1)
        self.leftmost = [0] * (n + 1)
        self.rightmost = [0] * (n + 1)
        self.forced_shift = False

    def copy(self) -> Config:
        other = Config.__new__(Config)
        other.n, other.front, other.forced_shift = self.n, self.front, self.forced_shift
        other.stack, other.heads, other.labels = list(self.stack), list(self.heads), \
            list(self.labels)
        other.leftmost, other.rightmost = list(self.leftmost), list(self.rightmost)
        return other

    @property
    def done(self) -> bool:
        return self.front > self.n

    @property
    def top(self) -> int | None:
        return self.stack[-1] if self.stack else None

    def allowed(self) -> np.ndarray:
        """Φ: which of LA, RA, RED, SHIFT may come next (a boolean array of 4)."""
        if self.done:
            return np.zeros(4, dtype=bool)
        if self.forced_shift:
            return np.array([False, False, False, True])
        s = self.top
        return np.array([s is not None and self.heads[s] < 0, s is not None, s is not None,
                         True])

    def headless(self) -> int:
        """How many words have no head (yet)."""
        return sum(h < 0 for h in self.heads[1:])

    def _attach(self, head: int, dependent: int, label) -> None:
        self.heads[dependent], self.labels[dependent] = head, label
        if self.leftmost[head] == 0 or dependent < self.leftmost[head]:
            self.leftmost[head] = dependent
        if dependent > self.rightmost[head]:
            self.rightmost[head] = dependent

    def apply(self, action: int, label=None) -> None:
        """Carry out an allowed decision (the label of LA and RA)."""
        if not self.allowed()[action]:
            raise ArborparseError(f"{ACTIONS[action]} is not allowed here")
        j = self.front
        if action == LA:
            self._attach(j, self.stack.pop(), label)
        elif action == RA:
            self._attach(self.stack[-1], j, label)
            self.forced_shift = True
        elif action == RED:
            self.stack.pop()
        else:
            self.stack.append(j)
            self.front += 1
            self.forced_shift = False

    def tree(self, root_label) -> tuple[np.ndarray, list]:
        """(heads, labels of words 1..n): words without a head attach to the root with
        `root_label`."""
        heads = np.array(self.heads, dtype=np.int64)
        labels = list(self.labels)
        for m in range(1, self.n + 1):
            if heads[m] < 0:
                heads[m], labels[m] = 0, root_label
        heads[0] = -1
        return heads, labels[1:]


def oracle(heads: np.ndarray, labels) -> list[tuple[int, object]]:
    """The gold derivation of a projective tree: [(action, label or None), ...].

    Raises ArborparseError when the tree is not projective (no rule applies).
    """
    n = len(heads) - 1
    config = Config(n)
    left_deps = [0] * (n + 1)  # gold left dependents of each word
    deps = [0] * (n + 1)
    for m in range(1, n + 1):
        if heads[m] > 0:
            deps[heads[m]] += 1
            left_deps[heads[m]] += m < heads[m]
    built_left = [0] * (n + 1)
    built = [0] * (n + 1)
    derivation = []

    def step(action, label=None):
        derivation.append((action, label))
        if action == LA:
            built_left[config.front] += 1
            built[config.front] += 1
        elif action == RA:
            built[config.top] += 1
        config.apply(action, label)

    while not config.done:
        s, j = config.top, config.front
        if config.forced_shift:
            step(SHIFT)
        elif s is not None and heads[s] == j:
            step(LA, labels[s - 1])
        elif s is not None and heads[j] == s:
            step(RA, labels[j - 1])
        elif built_left[j] == left_deps[j] and not (0 < heads[j] < j and config.heads[j] < 0):
            step(SHIFT)
        elif s is not None and built[s] == deps[s] and (heads[s] == 0 or config.heads[s] >= 0):
            step(RED)
        else:
            raise ArborparseError("the tree is not projective: no gold derivation")
    return derivation


def replay(n: int, derivation, root_label) -> tuple[np.ndarray, list]:
    """The tree a derivation builds (headless words attached to the root)."""
    config = Config(n)
    for action, label in derivation:
        config.apply(action, label)
    if not config.done:
        raise ArborparseError("the derivation ends before the last word is shifted")
    return config.tree(root_label)
