"""Vocabularies of the ISBN parser (spec §1): what the model generates and reads.

Generated, hierarchically: a POS (UPOS, which every UD treebank has; [OURS] where IDP used
the treebank's POS column), then a FEATS bundle within the POS (the whole FEATS string is
one symbol), then a lowercased word form within the (POS, FEATS) cell. The end of the
sentence is the POS ``$$$``. In every cell, items seen fewer than `cutoff` times in training
become the cell's ``#UNKNOWN#``; if that is then still rarer than `unknown_cutoff`, the
rarest remaining item joins it. Unseen POS map to the most frequent one, unseen bundles and
forms to their cell's ``#UNKNOWN#``.

For single-rooted output (see `ISBNParser`): per UPOS, the most frequent label of words
whose head is a sentence's root word, and the most frequent such label over all UPOS.

Read, as explicit features: the same word ids (LEX), lemmas, UPOS, XPOS, elementary FEATS
(the bundle split on ``|``) and arc labels (DEP), each with a cutoff for lemmas.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from arborparse.io.conllu import Sentence

UNKNOWN = "#UNKNOWN#"
END = "$$$"


def _cell(counts: Counter, cutoff: int, unknown_cutoff: int) -> list[str]:
    """The items of one cell, #UNKNOWN# first, then by decreasing count (ties by name)."""
    kept = sorted((c, w) for w, c in counts.items() if c >= cutoff)
    unknown = sum(c for c in counts.values() if c < cutoff)
    if unknown < unknown_cutoff and kept:
        kept.pop(0)  # the rarest remaining item joins #UNKNOWN#
    return [UNKNOWN] + [w for _, w in sorted(kept, key=lambda cw: (-cw[0], cw[1]))]


def _index(items: list[str]) -> dict[str, int]:
    return {w: i for i, w in enumerate(items)}


@dataclass
class Vocabulary:
    """pos[0] is ``$$$``; feats[p] the bundles of POS p; words[p][f] the forms of cell
    (p, f); labels the arc labels (the root label excluded); the input vocabularies lemmas,
    xpos and feat_atoms (index 0: unknown); root_dependents the most frequent label of
    dependents of a root word by UPOS, and under ``""`` over all."""

    pos: list[str]
    feats: list[list[str]]
    words: list[list[list[str]]]
    labels: list[str]
    root_label: str
    lemmas: list[str]
    xpos: list[str]
    feat_atoms: list[str]
    root_dependents: dict[str, str]

    @classmethod
    def build(cls, sentences: list[Sentence], cutoff: int = 5, unknown_cutoff: int = 5,
              trees: list[Sentence] | None = None) -> Vocabulary:
        """From the (lifted) training sentences; `trees`: the same before lifting, for
        root_dependents (default: the sentences)."""
        pos_counts = Counter(p for s in sentences for p in s.upos)
        pos = [END] + sorted(pos_counts, key=lambda p: (-pos_counts[p], p))
        feat_counts = {p: Counter() for p in pos}
        word_counts: dict[tuple[str, str], Counter] = {}
        roots, labels = Counter(), set()
        lemmas, xpos, atoms = Counter(), set(), set()
        for s in sentences:
            for m, (form, lemma, upos, x, feats, label) in enumerate(
                    zip(s.forms, s.lemmas, s.upos, s.xpos, s.feats, s.deprels), 1):
                feat_counts[upos][feats] += 1
                word_counts.setdefault((upos, feats), Counter())[form.lower()] += 1
                if s.heads[m] == 0:
                    roots[label] += 1
                else:
                    labels.add(label)
                lemmas[lemma] += 1
                xpos.add(x)
                atoms.update(feats.split("|"))
        under_root: dict[str, Counter] = {"": Counter()}
        for s in sentences if trees is None else trees:
            for m, (upos, label) in enumerate(zip(s.upos, s.deprels), 1):
                if s.heads[m] > 0 and s.heads[s.heads[m]] == 0:
                    under_root.setdefault(upos, Counter())[label] += 1
                    under_root[""][label] += 1
        feats = [_cell(feat_counts[p], cutoff, unknown_cutoff) for p in pos]
        words = []
        for p, bundles in zip(pos, feats):
            cells = []
            for f in bundles:
                if f == UNKNOWN:  # the forms of every rare bundle of p
                    counts = Counter()
                    for bundle, c in word_counts.items():
                        if bundle[0] == p and bundle[1] not in bundles:
                            counts.update(c)
                else:
                    counts = word_counts[(p, f)]
                cells.append(_cell(counts, cutoff, unknown_cutoff))
            words.append(cells)
        root_label = roots.most_common(1)[0][0] if roots else "root"
        labels = sorted(labels - {root_label})
        root_dependents = {p: min(c, key=lambda lab: (-c[lab], lab))
                           for p, c in under_root.items() if c}
        root_dependents.setdefault("", labels[0] if labels else root_label)
        return cls(pos, feats, words, labels, root_label,
                   _cell(lemmas, cutoff, unknown_cutoff), [UNKNOWN] + sorted(xpos),
                   [UNKNOWN] + sorted(atoms), root_dependents)

    def __post_init__(self):
        self._pos = _index(self.pos)
        self._feats = [_index(f) for f in self.feats]
        self._words = [[_index(cell) for cell in cells] for cells in self.words]
        self._labels = _index(self.labels)
        self._lemmas = _index(self.lemmas)
        self._xpos = _index(self.xpos)
        self._atoms = _index(self.feat_atoms)
        offsets, total = [], 0
        for cells in self.words:
            row = []
            for cell in cells:
                row.append(total)
                total += len(cell)
            offsets.append(row)
        self._offsets = offsets
        self.word_count = total

    def generated(self, upos: str, feats: str, form: str) -> tuple[int, int, int]:
        """(POS id, bundle id within the POS, form id within the cell) of a word."""
        p = self._pos.get(upos, 1)  # 1: the most frequent POS
        f = self._feats[p].get(feats, 0)
        return p, f, self._words[p][f].get(form.lower(), 0)

    def word_id(self, p: int, f: int, w: int) -> int:
        """The flat id of form w of cell (p, f): the LEX input."""
        return self._offsets[p][f] + w

    def cell_range(self, p: int, f: int) -> tuple[int, int]:
        """The flat ids [start, stop) of the forms of cell (p, f)."""
        start = self._offsets[p][f]
        return start, start + len(self.words[p][f])

    def label(self, label: str) -> int:
        """The id of an arc label; unseen labels map to the first (a clear error would stop
        parsing a treebank with a label the training data lacks)."""
        return self._labels.get(label, 0)

    def root_dependent(self, upos: str) -> str:
        """The label to give a word of this UPOS attached to the root word."""
        return self.root_dependents.get(upos, self.root_dependents[""])

    def lemma(self, lemma: str) -> int:
        return self._lemmas.get(lemma, 0)

    def xpos_id(self, xpos: str) -> int:
        return self._xpos.get(xpos, 0)

    def atoms(self, feats: str) -> list[int]:
        return [self._atoms.get(a, 0) for a in feats.split("|")]

    def to_json(self) -> dict:
        return {"pos": self.pos, "feats": self.feats, "words": self.words,
                "labels": self.labels, "root_label": self.root_label, "lemmas": self.lemmas,
                "xpos": self.xpos, "feat_atoms": self.feat_atoms,
                "root_dependents": self.root_dependents}

    @classmethod
    def from_json(cls, data: dict) -> Vocabulary:
        return cls(**data)
