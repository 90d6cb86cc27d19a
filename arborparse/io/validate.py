"""Checks on gold trees used for training or evaluation."""

from __future__ import annotations

import numpy as np

from arborparse.errors import TreebankFormatError
from arborparse.io.conllu import Sentence
from arborparse.trees.structure import find_cycle


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
