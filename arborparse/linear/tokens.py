"""Per-sentence token tables: every attribute a feature template reads, as 32-bit hashes.

Strings are hashed with CRC-32 (stable across processes and machines, unlike Python's
``hash``), salted by attribute so that the same string in two columns differs. Index 0 is
the root symbol; positions -1 and n+1 (outside the sentence) are read as the padding
symbols STR and END by the templates.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from arborparse.io.conllu import Sentence

FORM, LEMMA, UPOS, XPOS, PREFIX, LONG, SUFFIX = range(7)
ATTRIBUTES = 7
PREFIX_LENGTH = 5
SUFFIX_LENGTH = 3
FEATS_SALT = 6  # the FEATS items' namespace (model files depend on it staying 6)
SUFFIX_SALT = 7  # the suffixes' (each other column's is its index)
_NUMBER = re.compile(r"^[+-]?[0-9][0-9.,:/]*$")


@lru_cache(maxsize=1 << 17)  # tags and frequent words come back in every sentence
def string_hash(text: str, salt: int) -> int:
    """A stable 32-bit hash of a string in one of the attribute namespaces."""
    return zlib.crc32(text.encode("utf-8"), salt * 0x9E3779B1 & 0xFFFFFFFF)


ROOT = {a: string_hash("<root>", SUFFIX_SALT if a == SUFFIX else a)
        for a in range(ATTRIBUTES)}


def normalize(form: str) -> str:
    """Numbers become <num> (McDonald et al.'s number normalization)."""
    return "<num>" if _NUMBER.match(form) else form


@dataclass
class TokenTable:
    """The attributes of words 0..n (0 is the root) as int64 hashes, and their FEATS.

    attrs : (n+1, ATTRIBUTES) hashes of normalized FORM, LEMMA, UPOS, XPOS, the 5-character
        prefix of the form, whether the form is longer than 5 characters (0/1), and the
        form's last 3 characters in lower case (without that column where `encode` was
        asked for none)
    feats_ptr, feats : FEATS items of word i are ``feats[feats_ptr[i]:feats_ptr[i+1]]``
    """

    attrs: np.ndarray
    feats_ptr: np.ndarray
    feats: np.ndarray

    def __len__(self) -> int:
        return len(self.attrs) - 1

    def cut(self, a: int, b: int) -> TokenTable:
        """The table of words a+1..b (0-based a..b-1) as a sentence of their own (each
        word's row is its own: the same as `encode` of that sentence)."""
        ptr = self.feats_ptr[a + 1:b + 2]
        return TokenTable(np.concatenate([self.attrs[:1], self.attrs[a + 1:b + 1]]),
                          np.concatenate([[0], ptr - ptr[0]]),
                          self.feats[ptr[0]:ptr[-1]])


@lru_cache(maxsize=1 << 17)  # a word's row comes back with every sentence that has it
def _row(form: str, lemma: str, upos: str, xpos: str) -> tuple[int, ...]:
    """A word's attributes (`TokenTable.attrs`' row)."""
    word = normalize(form)
    return (string_hash(word, FORM), string_hash(normalize(lemma), LEMMA),
            string_hash(upos, UPOS), string_hash(xpos, XPOS),
            string_hash(word[:PREFIX_LENGTH], PREFIX), int(len(word) > PREFIX_LENGTH),
            string_hash(word[-SUFFIX_LENGTH:].lower(), SUFFIX_SALT))


@lru_cache(maxsize=1 << 14)
def _feats(feats: str) -> tuple[int, ...]:
    """The hashes of a FEATS bundle's items."""
    return () if feats == "_" else tuple(string_hash(f, FEATS_SALT) for f in feats.split("|"))


def encode(sentence: Sentence, suffixes: bool = True) -> TokenTable:
    """The token table of a sentence (CoNLL-X: CPOSTAG plays UPOS, POSTAG plays XPOS);
    without `suffixes`, without the SUFFIX column (a model saved before the suffix
    features: the templates read none)."""
    width = ATTRIBUTES if suffixes else SUFFIX
    rows = [tuple(0 if a == LONG else ROOT[a] for a in range(width))]
    ptr = [0, 0]
    feats: list[int] = []
    for form, lemma, upos, xpos, fts in zip(sentence.forms, sentence.lemmas, sentence.upos,
                                            sentence.xpos, sentence.feats):
        rows.append(_row(form, lemma, upos, xpos)[:width])
        feats.extend(_feats(fts))
        ptr.append(len(feats))
    return TokenTable(np.array(rows, dtype=np.int64), np.array(ptr, dtype=np.int64),
                      np.array(feats, dtype=np.int64))
