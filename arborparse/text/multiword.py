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

Where a token is several words glued together, as a Coptic bound group is (``ⲁⲩⲱⲁϥⲥⲱⲧⲙ`` =
``ⲁⲩⲱ`` + ``ⲁ`` + ``ϥ`` + ``ⲥⲱⲧⲙ``), one rule per token learns too little: its prefix
``ⲁⲩⲱⲁϥ`` must have been seen whole. `Segmenter` learns instead where words begin, from
the characters around each gap between two letters, and cuts an unseen token there.
Trained on the training tokens whose words spell them, it is kept where the development
tokens come out split right more often with it than with the rules; the forms seen and
never split stay whole with it too (Coptic-Scriptorium test, its tokens unseen in training:
60.25 % split right by the rules, 76.33 % with the segmenter; `bench/multiword.py`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from arborparse.text.classifier import Classifier, candidate_arrays, offsets
from arborparse.text.features import feature_hash, word_features

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


CONTEXT = 5  # characters read on each side of a gap (`_gap_rows`)
ANCHORED = 6  # a token's beginning or ending up to this long is a feature of its own
GAP_PAIRS = (1, 6, 2, 7, 11)  # `_gap_rows`' columns `Classifier` reads beside the cuts
# before a gap: the characters before it and after it, each paired with the cut just before
# (the other three it pairs with a given tag, which a segmenter has none of: constant)


def _gap_rows(form: str) -> list[tuple[int, ...]]:
    """The features of each gap between two characters of a token (lower case): the one to
    five characters before it and after it ("^" and "$" past the token's ends), pairs of
    them across the gap, the token's beginning before it and its ending after it where
    short (`ANCHORED`), and the token's length with the gap's place."""
    token = lower(form)
    n = len(token)
    padded = "^" * CONTEXT + token + "$" * CONTEXT
    rows = []
    for i in range(1, n):
        j = i + CONTEXT
        before = [padded[j - k:j] for k in range(1, CONTEXT + 1)]
        after = [padded[j:j + k] for k in range(1, CONTEXT + 1)]
        values = ("", *before, *after,
                  *(f"{before[a]}|{after[b]}" for a, b in ((0, 0), (1, 1), (2, 0), (0, 2),
                                                          (0, 1), (1, 0), (2, 2))),
                  token[:i] if i <= ANCHORED else "", token[i:] if n - i <= ANCHORED else "",
                  f"{min(n, 12)},{min(i, ANCHORED)}")
        rows.append(tuple(feature_hash(k, v) for k, v in enumerate(values)))
    return rows


GAP_COLUMNS = len(_gap_rows("ab")[0])


def spelled(form: str, words: Sequence[str]) -> bool:
    """Whether a multiword token's words, one after the other, spell it (lower case)."""
    return lower("".join(words)) == lower(form)


class Segmenter:
    """Where the words of a token glued together begin: an averaged perceptron
    (`arborparse.text.classifier`) that reads a token's gaps left to right and says of
    each whether a word begins after it (`_gap_rows`, and the two gaps before)."""

    def __init__(self, epochs: int = 10, bits: int = 18, seed: int = 0,
                 weights: np.ndarray | None = None):
        self.epochs = epochs
        self.seed = seed
        self.classifier = Classifier(["", "cut"], bits, weights=weights, pairs=GAP_PAIRS)

    @staticmethod
    def _arrays(forms: Sequence[str]):
        """(X, bounds, given, cptr, cand) for the classifier: no given tag, every class a
        candidate."""
        rows = [_gap_rows(form) for form in forms]
        X = np.array([r for token in rows for r in token],
                     dtype=np.uint64).reshape(-1, GAP_COLUMNS)
        return (X, offsets([len(token) for token in rows]), np.full(len(X), -1),
                *candidate_arrays([()] * len(X)))

    def fit(self, tokens: Sequence[tuple[str, tuple[str, ...]]]) -> Segmenter:
        """Learn from (token, its words) pairs whose words spell the token (`spelled`)."""
        X, bounds, given, cptr, cand = self._arrays([form for form, _ in tokens])
        gold = []
        for form, words in tokens:
            cuts = set(np.cumsum([len(w) for w in words[:-1]]).tolist())
            gold += [int(i in cuts) for i in range(1, len(form))]
        self.classifier.fit((X, bounds, np.array(gold, dtype=np.int64), given, cptr, cand),
                            self.epochs, self.seed)
        return self

    def split(self, forms: Sequence[str]) -> list[tuple[str, ...]]:
        """Each token's words: its pieces between the gaps the classifier cuts."""
        X, bounds, given, cptr, cand = self._arrays(forms)
        cut = self.classifier.predict(X, bounds, given, cptr, cand)
        out = []
        for form, a, b in zip(forms, bounds[:-1].tolist(), bounds[1:].tolist()):
            at = [0, *(i + 1 for i in np.flatnonzero(cut[a:b]).tolist()), len(form)]
            out.append(tuple(form[x:y] for x, y in zip(at, at[1:])))
        return out


class Multiword:
    """Splits tokens into words (see the module docstring)."""

    def __init__(self, epochs: int = 10, bits: int = 18, seed: int = 0):
        self.epochs = epochs
        self.bits = bits
        self.seed = seed

    def fit(self, sentences: Sequence[Sequence[tuple[str, tuple[str, ...]]]],
            dev: Sequence[Sequence[tuple[str, tuple[str, ...]]]] | None = None) -> Multiword:
        """Learn from sentences of (token, its words) pairs; with `dev` (the same), keep a
        `Segmenter` where the dev tokens come out split right more often with it
        (`dev_right_`: the percentage of them each way)."""
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
        self.classifier = self.segmenter = None
        self.dev_right_ = {}
        if given:
            self._fit_rules(sentences, given)
        spelt = sorted({(form, words) for tokens in sentences for form, words in tokens
                        if spelled(form, words)})
        if dev and any(len(words) > 1 for _, words in spelt):
            self._fit_segmenter(spelt, dev, [form for form in counts if form not in as_words])
        return self

    def _fit_rules(self, sentences, given: Counter) -> None:
        """The classifier that chooses among the rules that fit a token."""
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

    def _fit_segmenter(self, spelt, dev, whole: list[str]) -> None:
        """A `Segmenter` trained on the distinct training tokens their words spell
        (`spelt`, one-word tokens included), kept (with the rules' classifier dropped)
        where more dev tokens come out split right with it; the forms seen and never split
        (`whole`) that it would cut are then left whole (`unsplit`, then these alone)."""
        forms = [[form for form, _ in tokens] for tokens in dev]
        gold = [tuple(words) for tokens in dev for _, words in tokens]
        if not gold:  # nothing to choose by
            return

        def right() -> float:
            found = [words for s in self.split(forms) for words in s]
            return round(100.0 * sum(a == b for a, b in zip(found, gold)) / len(gold), 2)

        by_rules, unsplit = right(), self.unsplit
        self.segmenter = Segmenter(self.epochs, self.bits, self.seed).fit(spelt)
        self.unsplit = {form for form, words in zip(whole, self.segmenter.split(whole))
                        if len(words) > 1}
        self.dev_right_ = {"rules": by_rules, "segmenter": right()}
        if self.dev_right_["segmenter"] > by_rules:
            self.classifier = None
        else:
            self.segmenter, self.unsplit = None, unsplit

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
        if self.segmenter is not None:
            rest = list(dict.fromkeys(f for f in forms if f not in self.dictionary and
                                      f not in self.unsplit))
            cut = dict(zip(rest, self.segmenter.split(rest)))
            found = [tuple(self.dictionary[form]) if form in self.dictionary else
                     cut.get(form, (form,)) for form in forms]
        else:
            chosen = [0] * len(forms)
            candidates = [self._candidates(f) for f in forms] \
                if self.classifier is not None else []
            if any(len(c) > 1 for c in candidates):
                X, bounds, cptr, cand = self._arrays(sentences, candidates)
                chosen = self.classifier.predict(X, bounds, np.full(len(forms), -1), cptr,
                                                 cand).tolist()
            found = [tuple(self.dictionary[form]) if form in self.dictionary else
                     apply_rule(form, self.rules[k - 1]) if k and form not in self.unsplit
                     else (form,) for form, k in zip(forms, chosen)]
        words = iter(found)
        return [[next(words) for _ in s] for s in sentences]

    @property
    def unseen_by(self) -> str:
        """How a token not in the dictionary is split: ``"characters"`` (the segmenter) or
        ``"rules"``."""
        return "characters" if self.segmenter is not None else "rules"

    def parts(self) -> tuple[dict, dict]:
        header = {"dictionary": self.dictionary,
                  "rules": [[side, affix, list(pieces)] for side, affix, pieces in self.rules],
                  "unsplit": sorted(self.unsplit), "dev_right": self.dev_right_}
        arrays = {} if self.classifier is None else {"weights": self.classifier.weights}
        if self.segmenter is not None:
            arrays["segmenter"] = self.segmenter.classifier.weights
        return header, arrays

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
        multiword.dev_right_ = dict(header.get("dev_right", {}))  # none in older files
        multiword.classifier = multiword.segmenter = None
        if "segmenter" in arrays:  # kept by `_fit_segmenter`, without the rules' classifier
            multiword.segmenter = Segmenter(weights=arrays["segmenter"])
        elif multiword.rules:
            multiword.classifier = Classifier(["", *(r[1] for r in multiword.rules)],
                                              weights=arrays["weights"])
        return multiword
