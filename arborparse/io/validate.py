"""Checks on gold trees used for training or evaluation."""

from __future__ import annotations

import numpy as np

from arborparse.errors import TreebankFormatError
from arborparse.io.conllu import Sentence


def find_cycle(heads: np.ndarray) -> list[int] | None:
    """The words of a cycle in ``heads`` (``heads[0] = -1``), or None if it is a tree."""
    n = len(heads) - 1
    state = np.zeros(n + 1, dtype=np.int8)  # 0 unseen, 1 on current path, 2 reaches root
    state[0] = 2
    for start in range(1, n + 1):
        path = []
        m = start
        while state[m] == 0:
            state[m] = 1
            path.append(m)
            m = heads[m]
        if state[m] == 1:
            return path[path.index(m):]
        state[path] = 2
    return None


def check_tree(sentence: Sentence, single_root: bool = True) -> None:
    """Raise `TreebankFormatError` unless the sentence holds a well-formed tree.

    Every word needs a head, the heads must form a tree rooted at 0, and with
    ``single_root=True`` exactly one word attaches to the root.
    """
    heads = sentence.heads
    for m in range(1, len(heads)):
        if heads[m] < 0:
            raise TreebankFormatError(sentence.path, sentence.word_line(m),
                                      f"word {m} has no HEAD (a tree is needed here)")
    cycle = find_cycle(heads)
    if cycle is not None:
        words = " -> ".join(str(m) for m in cycle + [cycle[0]])
        raise TreebankFormatError(sentence.path, sentence.word_line(min(cycle)),
                                  f"the heads form a cycle ({words})")
    roots = np.flatnonzero(heads == 0)
    if single_root and len(roots) != 1:
        raise TreebankFormatError(
            sentence.path, sentence.word_line(int(roots[1])) if len(roots) > 1 else sentence.line,
            f"{len(roots)} words attach to the root (words {', '.join(map(str, roots))}); "
            "single-root trees need exactly one (use multi-root mode to allow several)")
