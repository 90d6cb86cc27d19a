"""Trivial parsers that give every evaluation a floor."""

from __future__ import annotations

import numpy as np

from arborparse.io.conllu import Sentence


def left_neighbour(sentence: Sentence) -> Sentence:
    """Attach every word to the word on its left and the first word to the root.

    Labels: ``root`` for the first word, ``dep`` for the others.
    """
    n = len(sentence)
    heads = np.arange(-1, n, dtype=np.int64)
    heads[0] = -1
    return sentence.with_tree(heads, ["root"] + ["dep"] * (n - 1))


def right_neighbour(sentence: Sentence) -> Sentence:
    """Attach every word to the word on its right and the last word to the root (the floor
    of a head-final language, as Korean's or Japanese's).

    Labels: ``root`` for the last word, ``dep`` for the others.
    """
    n = len(sentence)
    heads = np.arange(1, n + 2, dtype=np.int64)
    heads[0], heads[n] = -1, 0
    return sentence.with_tree(heads, ["dep"] * (n - 1) + ["root"])


BASELINES = {"left": left_neighbour, "right": right_neighbour}
