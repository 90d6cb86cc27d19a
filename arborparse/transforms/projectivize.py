"""Projectivizing gold trees for projective training (Koo et al. 2007, footnote 4).

The closest projective tree: Eisner's algorithm with score +1 on the gold arcs and -1 on
all others keeps as many gold arcs as any projective tree can. Each word keeps its own
DEPREL.
"""

from __future__ import annotations

import numpy as np

from arborparse.io.conllu import Sentence
from arborparse.trees import eisner
from arborparse.trees.structure import is_projective


def projectivize(sentence: Sentence, single_root: bool = True) -> Sentence:
    """The sentence with the projective tree that keeps the most of its gold arcs.

    Projective sentences come back unchanged. O(n³).
    """
    if is_projective(sentence.heads):
        return sentence
    n = len(sentence)
    S = -np.ones((n + 1, n + 1))
    S[sentence.heads[1:], np.arange(1, n + 1)] = 1.0
    return sentence.with_tree(eisner(S, single_root=single_root), sentence.deprels)
