"""What the taggers read of each word: static features, hashed once per word type.

A word's features: a bias, its form and lowercased form, suffixes of 1-6 and prefixes of
1-4 characters, its shape (``Xxx``, ``dd``, ...), the lowercased forms of the two words
on each side, the 3-character suffixes of its neighbours, the pairs (previous word, word)
and (word, next word), and the ambiguity classes (the tags a lowercased form had in
training, or ``?``) of the word and its neighbours. A tagger adds what it reads off the
word's stem (`Stems`).

The strings of a word type are hashed once (32-bit CRCs salted by template); the features
that read the neighbours are the neighbours' hashes mixed with the template's number, a
few integer operations over all words at once. Stable across machines and runs.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from collections.abc import Iterable
from functools import lru_cache

import numpy as np
from numba import njit

# read off each word type's own strings
WORD = ("bias", "form", "lower", "s1", "s2", "s3", "s4", "s5", "s6", "p1", "p2", "p3", "p4",
        "shape", "amb")
# read off the neighbours' hashes
CONTEXT = ("w-1", "w+1", "w-2", "w+2", "s3-1", "s3+1", "w-1 w", "w w+1", "amb-1", "amb+1")
TEMPLATES = WORD + CONTEXT
# read off the word's stem (`Stems`), after every other template (a model trained without
# them reads the rest as before): what follows it, the UPOS of the training words with that
# stem, the two together, the features all those words have, and the rest's first
# `REST_PREFIXES` characters (where it is longer: the morphemes next to the stem)
REST_PREFIXES = (2, 3)
STEM = ("rest", "stem upos", "stem upos rest", "stem feats",
        *(f"rest{k}" for k in REST_PREFIXES))
STEM_BEFORE_PREFIXES = 4  # the `STEM` columns of a tagger file of version 8
STEM_LENGTH = 2  # the shortest stem
ROWS = 1 << 17  # the word types whose stem columns a tagger keeps across calls
LOWER, SUFFIX3, AMBIGUITY = WORD.index("lower"), WORD.index("s3"), WORD.index("amb")
_RUNS = re.compile(r"(.)\1+")
_M = np.uint64(0xFFFFFFFF)
# stand-ins for the words one and two places beyond the sentence's ends
BEFORE, BEFORE2, AFTER, AFTER2 = (np.uint64(zlib.crc32(s.encode())) for s in
                                  ("<s>", "<s2>", "</s>", "</s2>"))


def feature_hash(template: int, text: str) -> int:
    """The hash of a feature: a template number and its text."""
    return zlib.crc32(text.encode("utf-8"), template * 0x9E3779B1 & 0xFFFFFFFF)


def shape(form: str) -> str:
    """X for upper case, x for other letters and combining marks (scripts without case:
    ``வருகின்றனர்`` -> ``x``), d for digits, the rest as is; runs of one class collapsed
    (``McDonald's`` -> ``XxXx'x``, ``1984`` -> ``d``, ``1995ல்`` -> ``dx``)."""
    out = "".join("X" if c.isupper() else
                  "x" if c.isalpha() or unicodedata.category(c)[0] == "M" else
                  "d" if c.isdigit() else c for c in form)
    return _RUNS.sub(r"\1", out)


@lru_cache(maxsize=1 << 17)  # a word type's hashes, shared by the taggers and across calls
def _word_row(form: str) -> tuple[int, ...]:
    """The hashes of the word's own templates but the ambiguity class (`_ambiguity`)."""
    low = form.lower()
    values = ("", form, low,
              *(low[-k:] if len(low) >= k else "<" + low for k in range(1, 7)),
              *(low[:k] if len(low) >= k else low + ">" for k in range(1, 5)),
              shape(form))
    return tuple(feature_hash(t, v) for t, v in enumerate(values))


def stem_key(text: str) -> str:
    """A form or a lemma as stems are kept and looked up: lowercased, with the lowercase of
    Turkish ``İ`` (``i`` and a combining dot above) a plain ``i``, as lemmas write it."""
    return text.lower().replace("i\u0307", "i")


def combined(tags: Iterable[tuple[str, str]]) -> tuple[str, str]:
    """The UPOS of (UPOS, FEATS) tags (either may be several, ``|``-joined; FEATS ``_`` or
    empty: none) and the features all of them have, each ``|``-joined and sorted."""
    upos, shared = set(), None
    for us, feats in tags:
        upos.update(us.split("|"))
        found = {f for f in feats.split("|") if f not in ("", "_")}
        shared = found if shared is None else shared & found
    return "|".join(sorted(upos)), "|".join(sorted(shared or ()))


class Stems:
    """What a tagger reads off a word's stem (the `STEM` templates): the stem is the word's
    longest prefix of at least `STEM_LENGTH` characters that is the stem of a training word
    other than itself, so that a training word reads what a new word of its lemma would;
    ``?`` where it has none, or where those words share no feature. The rest and the stem's
    UPOS tell an agglutinative language's unseen forms apart, the shared features a lemma's
    gender (dev, gold words; UFeats / UPOS): Turkish-IMST 85.87 -> 87.03 / 90.50 -> 91.89,
    +0.35 / +0.37 on average over twelve treebanks. The rest's first two and three
    characters, where it has more (``-`` where not), are the morphemes next to the stem, which
    its last letters (the word's suffixes) do not reach: a Turkish verb's voice, negation
    and mood (yap|tır|ma|dı). Dev, gold words: Turkish-IMST UFeats 87.03 -> 88.10, +0.13
    UFeats and +0.02 UPOS on average over the twelve treebanks (up to 4 characters, or read
    where the rest is no longer: lower on average).

    `entries`: stem (`stem_key`: a lemma, or the beginning a form shares with its lemma,
    `arborparse.text.tagger.stems_of`) -> {form (`stem_key`): its UPOS and the features it
    always had (`combined`), a tab between}. `width`: how many of the `STEM` columns it
    gives (`STEM_BEFORE_PREFIXES` for a tagger file of version 8).
    """

    def __init__(self, entries: dict[str, dict[str, str]], width: int = len(STEM)):
        self.entries = entries
        self.width = width
        self.longest = max(map(len, entries), default=0)
        self._whole: dict[str, tuple[str, str]] = {}  # a stem's `combined` over all its forms
        self._rows: dict[str, tuple[int, ...]] = {}  # `row`'s answers, up to `ROWS` of them

    def _read(self, stem: str, word: str) -> tuple[str, str] | None:
        """The `combined` tags of the stem's forms other than the word; None: none."""
        forms = self.entries.get(stem)
        if not forms or forms.keys() == {word}:
            return None
        if word in forms:
            return combined(v.split("\t") for f, v in forms.items() if f != word)
        if stem not in self._whole:
            self._whole[stem] = combined(v.split("\t") for v in forms.values())
        return self._whole[stem]

    def row(self, word: str) -> tuple[int, ...]:
        """The hashes of the first `width` `STEM` templates of a word (`stem_key`)."""
        rest = upos = shared = "?"
        for k in range(min(len(word), self.longest), STEM_LENGTH - 1, -1):
            found = self._read(word[:k], word)
            if found:
                rest, (upos, shared) = word[k:], found
                shared = shared or "?"
                break
        first = len(TEMPLATES)
        values = (rest, upos, f"{upos} {rest}", shared,
                  *(rest if rest == "?" else rest[:n] if len(rest) > n else "-"
                    for n in REST_PREFIXES))
        return tuple(feature_hash(first + j, v) for j, v in enumerate(values[:self.width]))

    def columns(self, sentences: list[list[str]]) -> np.ndarray:
        """The `STEM` columns of every word of the sentences (lists of forms), in order:
        (words, `width`) uint32 hashes."""
        types: dict[str, int] = {}
        ids = np.fromiter((types.setdefault(stem_key(f), len(types)) for s in sentences
                           for f in s), dtype=np.int64)
        if len(self._rows) > ROWS:
            self._rows.clear()
        rows = self._rows
        table = np.array([rows[t] if t in rows else rows.setdefault(t, self.row(t))
                          for t in types], dtype=np.uint64)
        return table.reshape(len(types), self.width)[ids].astype(np.uint32)


@lru_cache(maxsize=1 << 12)  # the ambiguity classes are few, and come back in every call
def _ambiguity(cls: str) -> int:
    return feature_hash(AMBIGUITY, cls)


def mix(first: int, groups: list[tuple[np.ndarray, ...]]) -> np.ndarray:
    """A 32-bit hash of template number ``first + j`` and the values of ``groups[j]``
    (uint64 arrays of 32-bit integers, one dimension, all of one length), elementwise:
    (length, len(groups)) uint32, column j for template first + j. One kernel for every
    template (a paragraph's few words or characters made a NumPy call per template and
    step cost more than the hashing); an array in several groups is read once."""
    columns: dict[int, int] = {}
    unique, spec = [], np.full((len(groups), max(map(len, groups), default=0)), -1,
                               dtype=np.int64)
    for j, group in enumerate(groups):
        for k, values in enumerate(group):
            if id(values) not in columns:
                columns[id(values)] = len(unique)
                unique.append(values)
            spec[j, k] = columns[id(values)]
    starts = np.array([feature_hash(first + j, "") for j in range(len(groups))], dtype=np.uint64)
    return _mixed(starts, spec, np.stack(unique, axis=1) if unique else
                  np.empty((0, 0), dtype=np.uint64))


@njit(cache=True)
def _mixed(starts, spec, values):
    """`mix`: values (rows, arrays), spec[j] the arrays of template j (-1 past its
    last)."""
    out = np.empty((values.shape[0], spec.shape[0]), dtype=np.uint32)
    for i in range(values.shape[0]):
        for j in range(spec.shape[0]):
            h = starts[j]
            for k in range(spec.shape[1]):
                if spec[j, k] < 0:
                    break
                h = (h ^ values[i, spec[j, k]]) * np.uint64(0x100000001B3) & _M
                h ^= h >> np.uint64(15)
                h = h * np.uint64(0x2C1B3C6D) & _M
                h ^= h >> np.uint64(12)
            out[i, j] = np.uint32(h)
    return out


def word_features(sentences: list[list[str]], classes: dict[str, str]) -> np.ndarray:
    """The static features of every word of the sentences (lists of forms), in order:
    (words, len(TEMPLATES)) uint32 hashes. `classes`: lowercased form -> its ambiguity
    class (a string)."""
    forms = [f for s in sentences for f in s]
    types: dict[str, int] = {}
    ids = np.fromiter((types.setdefault(f, len(types)) for f in forms), dtype=np.int64,
                      count=len(forms))
    table = np.array([(*_word_row(f), _ambiguity(classes.get(f.lower(), "?")))
                      for f in types], dtype=np.uint64).reshape(len(types), len(WORD))
    out = np.empty((len(forms), len(TEMPLATES)), dtype=np.uint32)
    if not forms:
        return out
    own = table[ids]
    lengths = np.array([len(s) for s in sentences], dtype=np.int64)
    ends = np.cumsum(lengths)
    position = np.arange(len(forms)) - np.repeat(ends - lengths, lengths)
    remaining = np.repeat(ends, lengths) - np.arange(len(forms)) - 1

    def shifted(column: int, k: int) -> np.ndarray:
        """Column `column` of the word k places away (k = -2, -1, 1, 2), or a stand-in."""
        values, column = np.empty(len(forms), dtype=np.uint64), own[:, column]
        if k > 0:
            values[:-k], values[-k:] = column[k:], AFTER
        else:
            values[-k:], values[:-k] = column[:k], BEFORE
        if k < 0:
            values[position < -k] = BEFORE
            values[position == 0] = BEFORE2 if k == -2 else BEFORE
        else:
            values[remaining < k] = AFTER
            values[remaining == 0] = AFTER2 if k == 2 else AFTER
        return values

    out[:, :len(WORD)] = own
    lower, before, after = own[:, LOWER], shifted(LOWER, -1), shifted(LOWER, 1)
    out[:, len(WORD):] = mix(len(WORD), [
        (before,), (after,), (shifted(LOWER, -2),), (shifted(LOWER, 2),),
        (shifted(SUFFIX3, -1),), (shifted(SUFFIX3, 1),), (before, lower), (lower, after),
        (shifted(AMBIGUITY, -1),), (shifted(AMBIGUITY, 1),)])
    return out
