"""`Multiword`: which tokens are several words (``don't`` = ``do`` + ``n't``, Turkish
``yakasındaki`` = ``yakasında`` + ``ki``), learned from a treebank's multiword tokens.

A token seen as a multiword token in most of its training occurrences is split into the
words it had most often. Other tokens may end in a clitic: the second word of a two-word
token that its two words spell (``n't``, ``ki``). For a token that ends in one, an
averaged perceptron (`arborparse.text.classifier`) over the tagger's word features
(`arborparse.text.features`: the token, its suffixes and neighbours) chooses whether to
cut it there, trained on every training token that ends in a clitic. Multiword tokens whose
words do not spell them (French ``au`` = ``à`` + ``le``) come from the dictionary alone.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from arborparse.text.classifier import Classifier, candidate_arrays, offsets
from arborparse.text.features import word_features


class Multiword:
    """Splits tokens into words (see the module docstring)."""

    def __init__(self, epochs: int = 10, bits: int = 18, seed: int = 0):
        self.epochs = epochs
        self.bits = bits
        self.seed = seed

    def fit(self, sentences: Sequence[Sequence[tuple[str, tuple[str, ...]]]]) -> Multiword:
        """Learn from sentences of (token, its words) pairs."""
        counts, as_words, clitics = Counter(), defaultdict(Counter), set()
        for tokens in sentences:
            for form, words in tokens:
                counts[form] += 1
                if len(words) > 1:
                    as_words[form][words] += 1
                    if len(words) == 2 and "".join(words) == form and words[0]:
                        clitics.add(words[1].lower())
        self.dictionary = {form: list(w.most_common(1)[0][0]) for form, w in as_words.items()
                           if sum(w.values()) * 2 > counts[form]}
        self.clitics = sorted(clitics)
        self._index_clitics()
        self.classifier = None
        if not clitics:
            return self
        gold = [len(words[1]) if len(words) == 2 and "".join(words) == form else 0
                for tokens in sentences for form, words in tokens]
        forms = [[form for form, _ in tokens] for tokens in sentences]
        X, bounds, cptr, cand = self._arrays(forms)
        self.classifier = Classifier([str(k) for k in range(max(map(len, clitics)) + 1)],
                                     self.bits)
        self.classifier.fit((X, bounds, np.array(gold, dtype=np.int64),
                             np.full(len(gold), -1), cptr, cand), self.epochs, self.seed)
        return self

    def _index_clitics(self) -> None:
        self._clitic_set = set(self.clitics)
        self._lengths = sorted({len(c) for c in self.clitics})

    def _cuts(self, form: str) -> list[int]:
        """0 (no cut) and the length of every clitic the token ends in."""
        lower = form.lower()
        return [0] + [k for k in self._lengths
                      if len(lower) > k and lower[-k:] in self._clitic_set]

    def _arrays(self, sentences: list[list[str]]):
        return (word_features(sentences, {}), offsets([len(s) for s in sentences]),
                *candidate_arrays([self._cuts(form) for s in sentences for form in s]))

    def split(self, sentences: list[list[str]]) -> list[list[tuple[str, ...]]]:
        """The words of each token of each sentence (lists of tokens)."""
        forms = [form for s in sentences for form in s]
        cuts = [0] * len(forms)
        if self.classifier is not None and any(len(self._cuts(f)) > 1 for f in forms):
            X, bounds, cptr, cand = self._arrays(sentences)
            cuts = self.classifier.predict(X, bounds, np.full(len(forms), -1), cptr,
                                           cand).tolist()
        words = iter([tuple(self.dictionary[form]) if form in self.dictionary else
                      (form[:-cut], form[-cut:]) if cut else (form,)
                      for form, cut in zip(forms, cuts)])
        return [[next(words) for _ in s] for s in sentences]

    def parts(self) -> tuple[dict, dict]:
        header = {"dictionary": self.dictionary, "clitics": self.clitics}
        return header, {} if self.classifier is None else {"weights": self.classifier.weights}

    @classmethod
    def from_parts(cls, header: dict, arrays: dict) -> Multiword:
        """Raises KeyError, TypeError or ValueError for invalid parts."""
        multiword = cls()
        multiword.dictionary = {str(k): list(v) for k, v in header["dictionary"].items()}
        multiword.clitics = [str(c) for c in header["clitics"]]
        multiword._index_clitics()
        multiword.classifier = None
        if multiword.clitics:
            multiword.classifier = Classifier(
                [str(k) for k in range(max(map(len, multiword.clitics)) + 1)],
                weights=arrays["weights"])
        return multiword
