"""What the taggers read of each word: static features, hashed once per sentence.

A word's features: a bias, its form and lowercased form, suffixes of 1-5 and prefixes of
1-4 characters, its shape (``Xxx``, ``dd``, ...), the lowercased forms of the two words
on each side, the 3-character suffixes of its neighbours, and the ambiguity classes (the
tags a lowercased form had in training, or ``?``) of the word and its neighbours.
Hashes are 32-bit CRCs salted by template, stable across machines and runs.
"""

from __future__ import annotations

import re
import zlib

import numpy as np

TEMPLATES = ("bias", "form", "lower", "s1", "s2", "s3", "s4", "s5", "p1", "p2", "p3", "p4",
             "shape", "w-1", "w+1", "w-2", "w+2", "s3-1", "s3+1", "amb", "amb-1", "amb+1",
             "w-1 w", "w w+1", "s6")
LOWER = TEMPLATES.index("lower")
SUFFIX3 = TEMPLATES.index("s3")
_RUNS = re.compile(r"(.)\1+")


def _hash(template: int, text: str) -> int:
    return zlib.crc32(text.encode("utf-8"), template * 0x9E3779B1 & 0xFFFFFFFF)


def shape(form: str) -> str:
    """X for upper case, x for lower case, d for digits, the rest as is; runs of one
    class collapsed (``McDonald's`` -> ``XxXx'x``, ``1984`` -> ``d``)."""
    out = "".join("X" if c.isupper() else "x" if c.islower() else "d" if c.isdigit() else c
                  for c in form)
    return _RUNS.sub(r"\1", out)


def ambiguity(lower: str, classes: dict[str, str]) -> str:
    return classes.get(lower, "?")


def sentence_features(forms: list[str], classes: dict[str, str]) -> np.ndarray:
    """The static features of a sentence's words: (n, len(TEMPLATES)) uint32 hashes.
    `classes`: lowercased form -> its ambiguity class (a string)."""
    n = len(forms)
    lower = [f.lower() for f in forms]
    pad = ["<s2>", "<s>"] + lower + ["</s>", "</s2>"]
    amb = [ambiguity(w, classes) for w in lower]
    amb_pad = ["<s>"] + amb + ["</s>"]
    out = np.empty((n, len(TEMPLATES)), dtype=np.uint32)
    for i, (form, low) in enumerate(zip(forms, lower)):
        values = (
            "", form, low,
            *(low[-k:] if len(low) >= k else "<" + low for k in range(1, 6)),
            *(low[:k] if len(low) >= k else low + ">" for k in range(1, 5)),
            shape(form), pad[i + 1], pad[i + 3], pad[i], pad[i + 4],
            pad[i + 1][-3:], pad[i + 3][-3:], amb[i], amb_pad[i], amb_pad[i + 2],
            pad[i + 1] + " " + low, low + " " + pad[i + 3], low[-6:] if len(low) >= 6 else "<" + low)
        out[i] = [_hash(t, v) for t, v in enumerate(values)]
    return out
