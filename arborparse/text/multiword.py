"""`Multiword`: which tokens are several words (``don't`` = ``do`` + ``n't``, Turkish
``yakasındaki`` = ``yakasında`` + ``ki``, Tamil ``அமைக்கவும்`` = ``அமைக்கவ்`` + ``உம்``,
Hebrew ``בבית`` = ``ב`` + ``ה`` + ``בית``), learned from a treebank's multiword tokens.

A token seen as a multiword token in most of its training occurrences is split into the
words it had most often; one seen and never split there is left whole (Coptic ``ⲡⲁⲙⲃⲱ``, a
name, is not the possessive ``ⲡⲁ`` + ``ⲙⲃⲱ`` that a rule would make of it). Other tokens
may be split as a multiword token of training was,
by a rule: a suffix rule where the token's first word shares a beginning with it (the
token's ending after that beginning and what it becomes: ``n't`` -> ``""`` + ``n't``;
``ும்`` -> ``்`` + ``உம்``; Spanish ``ámelo`` -> ``a`` + ``me`` + ``lo``, as UDPipe 1 does),
and a prefix rule where its last word shares an ending with it (the token's beginning
before that ending and what it becomes: Hebrew ``ב`` -> ``ב`` + ``ה`` + ``""``). For a
token with rules that fit it, an averaged perceptron (`arborparse.text.classifier`) over
the tagger's word features (`arborparse.text.features`: the token, its suffixes and
neighbours) chooses one of them or none, trained on every training token that some rule
fits; a multiword token's class is the most frequent of the rules it gives. Multiword
tokens that share neither end with their words (French ``au`` = ``à`` + ``le``) come from
the dictionary alone. Rules are in lower case (one character for one).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from arborparse.text.classifier import Classifier, candidate_arrays, offsets
from arborparse.text.features import word_features

SIDES = ("prefix", "suffix")
REMEMBERED = 1 << 16  # `Multiword._candidates` of this many forms kept
# (side, the token's beginning or ending, the words' pieces), lower case: a suffix rule's
# pieces are the first word's ending and the other words; a prefix rule's, the words
# before the last and the last word's beginning
Rule = tuple[str, str, tuple[str, ...]]


def lower(text: str) -> str:
    """Lower case, one character for one (Turkish ``İ`` lowers to two in Python)."""
    return "".join(c.lower()[0] for c in text)


def _shared(a: str, b: str) -> int:
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    return k


def rules_of(form: str, words: Sequence[str]) -> list[Rule]:
    """The rules a multiword token gives: its suffix rule (the first word shares a
    beginning with the token) and its prefix rule (the last word shares an ending), where
    the shared part is neither empty nor the whole token."""
    token, first, last = lower(form), lower(words[0]), lower(words[-1])
    rules = []
    k = _shared(token, first)
    if 0 < k < len(token):
        rules.append(("suffix", token[k:], (first[k:], *map(lower, words[1:]))))
    k = _shared(token[::-1], last[::-1])
    if 0 < k < len(token):
        rules.append(("prefix", token[:len(token) - k],
                      (*map(lower, words[:-1]), last[:len(last) - k])))
    return rules


def _pieces(part: str, rule_part: str, pieces: tuple[str, ...]) -> tuple[str, ...]:
    """The pieces of a rule for the token's `part` that it fits: cut from the token (its
    case kept) where they spell it, else upper case after an upper-case part."""
    if "".join(pieces) == rule_part:
        out, at = [], 0
        for piece in pieces:
            out.append(part[at:at + len(piece)])
            at += len(piece)
        return tuple(out)
    return tuple(p.upper() for p in pieces) if part.isupper() else pieces


def apply_rule(form: str, rule: Rule) -> tuple[str, ...]:
    """The words of `form` by `rule` (which fits it)."""
    side, affix, pieces = rule
    if side == "suffix":
        stem = form[:-len(affix)]
        pieces = _pieces(form[-len(affix):], affix, pieces)
        return (stem + pieces[0], *pieces[1:])
    rest = form[len(affix):]
    pieces = _pieces(form[:len(affix)], affix, pieces)
    return (*pieces[:-1], pieces[-1] + rest)


class Multiword:
    """Splits tokens into words (see the module docstring)."""

    def __init__(self, epochs: int = 10, bits: int = 18, seed: int = 0):
        self.epochs = epochs
        self.bits = bits
        self.seed = seed

    def fit(self, sentences: Sequence[Sequence[tuple[str, tuple[str, ...]]]]) -> Multiword:
        """Learn from sentences of (token, its words) pairs."""
        counts, as_words, given = Counter(), defaultdict(Counter), Counter()
        for tokens in sentences:
            for form, words in tokens:
                counts[form] += 1
                if len(words) > 1:
                    as_words[form][words] += 1
                    given.update(rules_of(form, words))
        self.dictionary = {form: list(w.most_common(1)[0][0]) for form, w in as_words.items()
                           if sum(w.values()) * 2 > counts[form]}
        self.rules = sorted(given)
        self._index_rules()
        # forms never split in training that a rule fits (the others the rules leave alone)
        self.unsplit = {form for form in counts if form not in as_words and
                        len(self._candidates(form)) > 1}
        self.classifier = None
        if not given:
            return self
        number = {rule: k + 1 for k, rule in enumerate(self.rules)}

        def gold(form, words):
            found = rules_of(form, words) if len(words) > 1 else []
            return number[max(found, key=lambda r: (given[r], r))] if found else 0

        classes = [gold(form, words) for tokens in sentences for form, words in tokens]
        forms = [[form for form, _ in tokens] for tokens in sentences]
        X, bounds, cptr, cand = self._arrays(
            forms, [self._candidates(form) for s in forms for form in s])
        self.classifier = Classifier(["", *(r[1] for r in self.rules)], self.bits)
        self.classifier.fit((X, bounds, np.array(classes, dtype=np.int64),
                             np.full(len(classes), -1), cptr, cand), self.epochs, self.seed)
        return self

    def _index_rules(self) -> None:
        self._seen: dict[str, list[int]] = {}
        self._by = {side: defaultdict(list) for side in SIDES}
        for k, (side, affix, _) in enumerate(self.rules):
            self._by[side][affix].append(k + 1)
        self._lengths = {side: sorted({len(a) for a in self._by[side]}) for side in SIDES}

    def _candidates(self, form: str) -> list[int]:
        """0 (no split) and the number of every rule that fits the token (remembered for
        the last `REMEMBERED` forms seen)."""
        found = self._seen.get(form)
        if found is None:
            token = lower(form)
            found = [0] + [k for n in self._lengths["suffix"] if len(token) > n
                           for k in self._by["suffix"].get(token[-n:], ())] + \
                          [k for n in self._lengths["prefix"] if len(token) > n
                           for k in self._by["prefix"].get(token[:n], ())]
            if len(self._seen) >= REMEMBERED:
                self._seen.clear()
            self._seen[form] = found
        return found

    def _arrays(self, sentences: list[list[str]], candidates: list[list[int]]):
        return (word_features(sentences, {}), offsets([len(s) for s in sentences]),
                *candidate_arrays(candidates))

    def split(self, sentences: list[list[str]]) -> list[list[tuple[str, ...]]]:
        """The words of each token of each sentence (lists of tokens)."""
        forms = [form for s in sentences for form in s]
        chosen = [0] * len(forms)
        candidates = [self._candidates(f) for f in forms] if self.classifier is not None else []
        if any(len(c) > 1 for c in candidates):
            X, bounds, cptr, cand = self._arrays(sentences, candidates)
            chosen = self.classifier.predict(X, bounds, np.full(len(forms), -1), cptr,
                                             cand).tolist()
        words = iter([tuple(self.dictionary[form]) if form in self.dictionary else
                      apply_rule(form, self.rules[k - 1]) if k and form not in self.unsplit
                      else (form,) for form, k in zip(forms, chosen)])
        return [[next(words) for _ in s] for s in sentences]

    def parts(self) -> tuple[dict, dict]:
        header = {"dictionary": self.dictionary,
                  "rules": [[side, affix, list(pieces)] for side, affix, pieces in self.rules],
                  "unsplit": sorted(self.unsplit)}
        return header, {} if self.classifier is None else {"weights": self.classifier.weights}

    @classmethod
    def from_parts(cls, header: dict, arrays: dict) -> Multiword:
        """Raises KeyError, TypeError or ValueError for invalid parts."""
        multiword = cls()
        multiword.dictionary = {str(k): list(v) for k, v in header["dictionary"].items()}
        multiword.unsplit = set(map(str, header.get("unsplit", [])))  # none in older files
        multiword.rules = [(str(side), str(affix), tuple(map(str, pieces)))
                           for side, affix, pieces in header["rules"]]
        if any(side not in SIDES or not affix or not pieces
               for side, affix, pieces in multiword.rules):
            raise ValueError("a multiword rule without a side, an affix or pieces")
        multiword._index_rules()
        multiword.classifier = None
        if multiword.rules:
            multiword.classifier = Classifier(["", *(r[1] for r in multiword.rules)],
                                              weights=arrays["weights"])
        return multiword
