"""Jackknifing: tags for the training set like those a parser will meet.

A parser trained on gold tags learns to trust them; on predicted tags it meets errors it
never saw. The standard practice: split the training set into k folds and tag each fold
with a tagger (and lemmatizer) trained on the other k - 1, so that every training sentence
carries predicted tags from a model that never saw it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from tqdm import tqdm

from arborparse.errors import ArborparseError, counted
from arborparse.io.conllu import Sentence


def folds_of(n: int, k: int) -> list[list[int]]:
    """The sentence indices of each of k folds: interleaved, so that every fold mixes the
    whole training set."""
    return [list(range(f, n, k)) for f in range(k)]


def jackknife(train: list[Sentence], k: int, annotate: Callable, progress: bool = True
              ) -> list[Sentence]:
    """The training sentences, each fold annotated by ``annotate(others, fold)``: a function
    that trains on the sentences `others` and returns the sentences `fold` tagged (and
    lemmatized). Order is kept; with fewer sentences than folds, one fold per sentence."""
    if k < 2 or len(train) < 2:
        raise ArborparseError(f"jackknifing needs at least 2 folds and 2 training sentences "
                              f"(got {counted(k, 'fold')}, {counted(len(train), 'sentence')})")
    k = min(k, len(train))  # a fold per sentence at most
    out: list[Sentence | None] = [None] * len(train)
    folds = folds_of(len(train), k)
    for f, indices in enumerate(tqdm(folds, desc="jackknifing", unit="fold", file=sys.stderr,
                                     disable=None if progress else True, leave=False)):
        inside = set(indices)
        others = [s for i, s in enumerate(train) if i not in inside]
        for i, s in zip(indices, annotate(others, [train[i] for i in indices])):
            out[i] = s
    return out
