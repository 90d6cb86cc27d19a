"""`Multiword`: which tokens are several words (``don't`` = ``do`` + ``n't``, Turkish
``yakasındaki`` = ``yakasında`` + ``ki``, Tamil ``அமைக்கவும்`` = ``அமைக்கவ்`` + ``உம்``),
learned from a treebank's multiword tokens.

A token seen as a multiword token in most of its training occurrences is split into the
words it had most often. Other tokens may end as a multiword token of training did: each
multiword token whose first word shares a beginning with it gives a suffix rule, the
token's ending after that shared beginning and what it becomes (``n't`` -> ``""`` +
``n't``; ``ும்`` -> ``்`` + ``உம்``; Spanish ``ámelo`` -> ``a`` + ``me`` + ``lo``), as UDPipe
1 does. For a token with rules that fit its ending, an averaged perceptron
(`arborparse.text.classifier`) over the tagger's word features (`arborparse.text.features`:
the token, its suffixes and neighbours) chooses one of them or none, trained on every
training token that some rule fits. Multiword tokens whose first word shares no beginning
with them (French ``au`` = ``à`` + ``le``) come from the dictionary alone.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from arborparse.text.classifier import Classifier, candidate_arrays, offsets
from arborparse.text.features import word_features

Rule = tuple[str, tuple[str, ...]]  # (the token's ending; the words' endings), lower case


def lower(text: str) -> str:
    """Lower case, one character for one (Turkish ``İ`` lowers to two in Python)."""
    return "".join(c.lower()[0] for c in text)


def rule_of(form: str, words: Sequence[str]) -> Rule | None:
    """The suffix rule of a multiword token, in lower case (None when its first word shares
    no beginning with it, or the token is all of that shared beginning)."""
    token, first = lower(form), lower(words[0])
    shared = 0
    while shared < min(len(token), len(first)) and token[shared] == first[shared]:
        shared += 1
    if shared == 0 or shared == len(token):
        return None
    return token[shared:], (first[shared:], *map(lower, words[1:]))


def apply_rule(form: str, rule: Rule) -> tuple[str, ...]:
    """The words of `form` by `rule`: an ending that the token spells is cut from the token
    (its case kept); one rewritten is upper case after an upper-case ending."""
    suffix, endings = rule
    stem, tail = form[:-len(suffix)], form[-len(suffix):]
    if "".join(endings) == suffix:  # a cut: the pieces come from the token itself
        pieces, at = [], 0
        for ending in endings:
            pieces.append(tail[at:at + len(ending)])
            at += len(ending)
        endings = tuple(pieces)
    elif tail.isupper():
        endings = tuple(e.upper() for e in endings)
    return (stem + endings[0], *endings[1:])


class Multiword:
    """Splits tokens into words (see the module docstring)."""

    def __init__(self, epochs: int = 10, bits: int = 18, seed: int = 0):
        self.epochs = epochs
        self.bits = bits
        self.seed = seed

    def fit(self, sentences: Sequence[Sequence[tuple[str, tuple[str, ...]]]]) -> Multiword:
        """Learn from sentences of (token, its words) pairs."""
        counts, as_words, rules = Counter(), defaultdict(Counter), set()
        for tokens in sentences:
            for form, words in tokens:
                counts[form] += 1
                if len(words) > 1:
                    as_words[form][words] += 1
                    rule = rule_of(form, words)
                    if rule is not None:
                        rules.add(rule)
        self.dictionary = {form: list(w.most_common(1)[0][0]) for form, w in as_words.items()
                           if sum(w.values()) * 2 > counts[form]}
        self.rules = sorted(rules)
        self._index_rules()
        self.classifier = None
        if not rules:
            return self
        number = {rule: k + 1 for k, rule in enumerate(self.rules)}
        gold = [number.get(rule_of(form, words), 0) if len(words) > 1 else 0
                for tokens in sentences for form, words in tokens]
        forms = [[form for form, _ in tokens] for tokens in sentences]
        X, bounds, cptr, cand = self._arrays(forms)
        self.classifier = Classifier(["", *(r[0] for r in self.rules)], self.bits)
        self.classifier.fit((X, bounds, np.array(gold, dtype=np.int64),
                             np.full(len(gold), -1), cptr, cand), self.epochs, self.seed)
        return self

    def _index_rules(self) -> None:
        self._by_suffix = defaultdict(list)
        for k, (suffix, _) in enumerate(self.rules):
            self._by_suffix[suffix].append(k + 1)
        self._lengths = sorted({len(suffix) for suffix in self._by_suffix})

    def _candidates(self, form: str) -> list[int]:
        """0 (no split) and the number of every rule that fits the token's ending."""
        token = lower(form)
        return [0] + [k for n in self._lengths if len(token) > n
                      for k in self._by_suffix.get(token[-n:], ())]

    def _arrays(self, sentences: list[list[str]]):
        return (word_features(sentences, {}), offsets([len(s) for s in sentences]),
                *candidate_arrays([self._candidates(form) for s in sentences for form in s]))

    def split(self, sentences: list[list[str]]) -> list[list[tuple[str, ...]]]:
        """The words of each token of each sentence (lists of tokens)."""
        forms = [form for s in sentences for form in s]
        chosen = [0] * len(forms)
        if self.classifier is not None and any(len(self._candidates(f)) > 1 for f in forms):
            X, bounds, cptr, cand = self._arrays(sentences)
            chosen = self.classifier.predict(X, bounds, np.full(len(forms), -1), cptr,
                                             cand).tolist()
        words = iter([tuple(self.dictionary[form]) if form in self.dictionary else
                      apply_rule(form, self.rules[k - 1]) if k else (form,)
                      for form, k in zip(forms, chosen)])
        return [[next(words) for _ in s] for s in sentences]

    def parts(self) -> tuple[dict, dict]:
        header = {"dictionary": self.dictionary,
                  "rules": [[suffix, list(endings)] for suffix, endings in self.rules]}
        return header, {} if self.classifier is None else {"weights": self.classifier.weights}

    @classmethod
    def from_parts(cls, header: dict, arrays: dict) -> Multiword:
        """Raises KeyError, TypeError or ValueError for invalid parts."""
        multiword = cls()
        multiword.dictionary = {str(k): list(v) for k, v in header["dictionary"].items()}
        multiword.rules = [(str(suffix), tuple(map(str, endings)))
                           for suffix, endings in header["rules"]]
        if any(not suffix or not endings for suffix, endings in multiword.rules):
            raise ValueError("a multiword rule without an ending")
        multiword._index_rules()
        multiword.classifier = None
        if multiword.rules:
            multiword.classifier = Classifier(["", *(r[0] for r in multiword.rules)],
                                              weights=arrays["weights"])
        return multiword
