"""`Vocabulary`: what the neural model reads and predicts, as integer ids.

Words are looked up lowercased (their case reaches the model through the characters);
words seen fewer than `cutoff` times share the unknown id. Tags, FEATS bundles, lemma edit
scripts (`arborparse.text.lemmatizer.edit_script`) and relations are the training
treebank's, and so is the lemma dictionary: the most frequent lemma of each (form, UPOS)
seen in training, which the parser prefers to a script, as `arborparse.text.lemmatizer`
does. Id 0 pads, 1 is unknown, 2 is the root symbol (words and characters).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from arborparse.io.conllu import Sentence
from arborparse.text.lemmatizer import edit_script

PAD, UNKNOWN, ROOT = 0, 1, 2
SPECIAL = ("<pad>", "<unknown>", "<root>")
TAGS = ("upos", "xpos", "feats")
MAX_CHARS = 30  # characters of a word the character model reads (the rest is cut)


@dataclass
class Vocabulary:
    words: list[str]
    chars: list[str]
    upos: list[str]
    xpos: list[str]
    feats: list[str]
    scripts: list[tuple]  # lemma edit scripts; empty for a treebank without lemmas
    labels: list[str]
    lemmas: dict[str, str]  # "form\tUPOS" -> its most frequent training lemma

    def __post_init__(self):
        self._index = {name: {v: i for i, v in enumerate(getattr(self, name))}
                       for name in ("words", "chars", "upos", "xpos", "feats", "labels")}
        self._index["scripts"] = {tuple(s): i for i, s in enumerate(self.scripts)}

    @classmethod
    def build(cls, sentences: list[Sentence], cutoff: int = 2) -> Vocabulary:
        words = Counter(f.lower() for s in sentences for f in s.forms)
        chars = Counter(c for s in sentences for f in s.forms for c in f[:MAX_CHARS])
        has_lemmas = any(lemma != "_" for s in sentences for lemma in s.lemmas)
        scripts = Counter(edit_script(f, lemma) for s in sentences
                          for f, lemma in zip(s.forms, s.lemmas)) if has_lemmas else {}
        seen = Counter((f"{f}\t{u}", lemma) for s in sentences
                       for f, u, lemma in zip(s.forms, s.upos, s.lemmas)) if has_lemmas else {}
        lemmas = {}
        for (key, lemma), _ in sorted(seen.items(), key=lambda kv: (-kv[1], kv[0])):
            lemmas.setdefault(key, lemma)
        return cls([*SPECIAL, *sorted(w for w, c in words.items() if c >= cutoff)],
                   [*SPECIAL, *sorted(chars)],
                   sorted({t for s in sentences for t in s.upos}),
                   sorted({t for s in sentences for t in s.xpos}),
                   sorted({t for s in sentences for t in s.feats}),
                   sorted(scripts), sorted({t for s in sentences for t in s.deprels}), lemmas)

    def sizes(self) -> dict[str, int]:
        return {"words": len(self.words), "chars": len(self.chars), "upos": len(self.upos),
                "xpos": len(self.xpos), "feats": len(self.feats), "lemma": len(self.scripts),
                "labels": len(self.labels)}

    def word_ids(self, sentence: Sentence) -> np.ndarray:
        """(n+1,) ids of the root and the words."""
        index = self._index["words"]
        return np.array([ROOT] + [index.get(f.lower(), UNKNOWN) for f in sentence.forms],
                        dtype=np.int64)

    def char_ids(self, form: str) -> list[int]:
        index = self._index["chars"]
        return [index.get(c, UNKNOWN) for c in form[:MAX_CHARS]]

    def targets(self, sentence: Sentence) -> dict[str, np.ndarray]:
        """The gold heads, labels, tags and scripts of words 1..n as (n+1,) arrays, -1 at
        the root and for a value not in the vocabulary (not trained on)."""
        n = len(sentence)
        out = {"heads": sentence.heads.astype(np.int64)}
        for name, column in (("labels", sentence.deprels), ("upos", sentence.upos),
                             ("xpos", sentence.xpos), ("feats", sentence.feats)):
            index = self._index[name]
            out[name] = np.array([-1] + [index.get(v, -1) for v in column], dtype=np.int64)
        lemma = np.full(n + 1, -1, dtype=np.int64)
        if self.scripts:
            index = self._index["scripts"]
            lemma[1:] = [index.get(edit_script(f, l), -1)
                         for f, l in zip(sentence.forms, sentence.lemmas)]
        out["lemma"] = lemma
        return out

    def to_json(self) -> dict:
        return {"words": self.words, "chars": self.chars, "upos": self.upos,
                "xpos": self.xpos, "feats": self.feats,
                "scripts": [list(s) for s in self.scripts], "labels": self.labels,
                "lemmas": self.lemmas}

    @classmethod
    def from_json(cls, data: dict) -> Vocabulary:
        return cls(list(data["words"]), list(data["chars"]), list(data["upos"]),
                   list(data["xpos"]), list(data["feats"]),
                   [tuple(s) for s in data["scripts"]], list(data["labels"]),
                   {str(k): str(v) for k, v in data["lemmas"].items()})
