"""The states of an ISBN derivation (spec §3, §4): for each state, its decisions, the
earlier states it links to through the 7 structural relations, and its explicit inputs.

State 0 ([OURS], spec §11) generates w_1 and reads nothing but its own input. Every later
state t makes one parser decision (with its label, or the next word after a Shift) at the
configuration it was created in, and links to the most recent earlier states with

1. the same front word; 2. the same stack top; 3. the top's rightmost right dependent, 4.
its leftmost left dependent, 5. its head, 6. the front's leftmost dependent, each as a
stack top; 7. the previous state, when its front is this state's top (right after a Shift).

Explicit inputs: the previous decision and its label, and one value per feature template
(``TUNED``: IDP's default templates; ``LOCAL``: the stack top and the front word only).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arborparse.io.conllu import Sentence
from arborparse.isbn.transitions import LA, SHIFT, Config, oracle
from arborparse.isbn.vocab import Vocabulary

RELATIONS = 7
START = 4  # the "previous decision" of state 1, and state 0's only input
TUNED = (("LEX", "S0"), ("LEX", "I0"), ("LEX", "hS0"), ("LEMMA", "S0"), ("LEMMA", "I0"),
         ("CPOS", "S0"), ("CPOS", "I0"), ("POS", "S0"), ("POS", "I0"), ("POS", "S1"),
         ("FEATS", "S0"), ("FEATS", "I0"), ("DEP", "S0"), ("DEP", "lcS0"), ("DEP", "rcS0"),
         ("DEP", "lcI0"))
LOCAL = tuple((kind, word) for word in ("S0", "I0")
              for kind in ("LEX", "LEMMA", "CPOS", "POS", "FEATS", "DEP"))
FEATURE_SETS = {"tuned": TUNED, "local": LOCAL}
NONE, NO_HEAD = 0, 1  # feature values: no such word; (DEP) the word has no head yet


@dataclass
class Tokens:
    """The words of a sentence as vocabulary ids, index 1..n (index 0 unused)."""

    pos: np.ndarray
    feat: np.ndarray
    form: np.ndarray
    lex: np.ndarray
    lemma: np.ndarray
    xpos: np.ndarray
    atoms: list[list[int]]

    @classmethod
    def of(cls, sentence: Sentence, vocab: Vocabulary) -> Tokens:
        ids = [(0, 0, 0)] + [vocab.generated(u, f, w) for u, f, w in
                             zip(sentence.upos, sentence.feats, sentence.forms)]
        p, f, w = (np.array(c, dtype=np.int64) for c in zip(*ids))
        return cls(p, f, w, np.array([vocab.word_id(*i) for i in ids], dtype=np.int64),
                   np.array([0] + [vocab.lemma(x) for x in sentence.lemmas], dtype=np.int64),
                   np.array([0] + [vocab.xpos_id(x) for x in sentence.xpos], dtype=np.int64),
                   [[]] + [vocab.atoms(x) for x in sentence.feats])

    def __len__(self) -> int:
        return len(self.pos) - 1

    def values(self, kind: str) -> list:
        """The input value (before the template's offset) of each word for a feature kind
        other than DEP: one id, or the list of FEATS atoms."""
        if kind == "FEATS":
            return [[2 + a for a in atoms] for atoms in self.atoms]
        column = {"LEX": self.lex, "LEMMA": self.lemma, "CPOS": self.pos, "POS": self.xpos}
        return [[2 + int(v)] for v in column[kind]]


class Inputs:
    """Where each template's values sit in the one table of input vectors."""

    def __init__(self, vocab: Vocabulary, templates=TUNED):
        sizes = {"LEX": vocab.word_count, "LEMMA": len(vocab.lemmas), "CPOS": len(vocab.pos),
                 "POS": len(vocab.xpos), "FEATS": len(vocab.feat_atoms),
                 "DEP": len(vocab.labels)}
        self.templates = tuple(templates)
        self.labels = len(vocab.labels)
        offset = 1  # row 0: padding, always zero
        self.previous_action = offset
        offset += 5
        self.previous_label = offset  # 2 * labels rows: those of LA, then those of RA
        offset += 2 * self.labels
        self.offsets = []
        for kind, _ in self.templates:
            self.offsets.append(offset)
            offset += 2 + sizes[kind]
        self.size = offset


class History:
    """A derivation in progress: the configuration, the states so far (for the relations)
    and the previous decision. `new_state` creates the state of the current configuration;
    `apply` carries out its decision."""

    __slots__ = ("tokens", "inputs", "_tables", "config", "count", "last_top", "last_front",
                 "previous_front", "previous")

    def __init__(self, tokens: Tokens, inputs: Inputs):
        self.tokens = tokens
        self.inputs = inputs
        # per template: its offset and, except for DEP, each word's rows
        self._tables = [(where, offset, None if kind == "DEP" else
                         [[offset + v for v in values] for values in tokens.values(kind)])
                        for (kind, where), offset in zip(inputs.templates, inputs.offsets)]
        self.config = Config(len(tokens))
        self.count = 0
        self.last_top: dict[int, int] = {}
        self.last_front: dict[int, int] = {}
        self.previous_front = -1
        self.previous = (START, None)

    def copy(self) -> History:
        """An independent copy (sharing the read-only tokens, inputs and tables)."""
        other = History.__new__(History)
        other.tokens, other.inputs, other._tables = self.tokens, self.inputs, self._tables
        other.config = self.config.copy()
        other.count, other.previous_front, other.previous = \
            self.count, self.previous_front, self.previous
        other.last_top, other.last_front = dict(self.last_top), dict(self.last_front)
        return other

    def _words(self) -> dict[str, int]:
        """The word each template position names (0: none); lc and rc are the leftmost and
        rightmost dependents on either side."""
        c = self.config
        front = c.front if c.front <= c.n else 0
        s = c.stack[-1] if c.stack else 0
        return {"I0": front, "S0": s, "S1": c.stack[-2] if len(c.stack) > 1 else 0,
                "hS0": max(c.heads[s], 0) if s else 0,
                "lcS0": c.leftmost[s] if s else 0, "rcS0": c.rightmost[s] if s else 0,
                "lcI0": c.leftmost[front] if front else 0}

    def new_state(self, register: bool = True) -> tuple[list[int], list[int]]:
        """(the parent state of each relation, -1 if none; the input rows) of a new state
        at the current configuration, then registered for later relations (unless
        `register` is False: the search registers it in each successor)."""
        t = self.count
        inputs = self.inputs
        action, label = self.previous
        rows = [inputs.previous_action + action]
        parents = [-1] * RELATIONS
        c = self.config
        if t > 0:
            if label is not None:
                rows.append(inputs.previous_label + (label if action == LA
                                                     else inputs.labels + label))
            words = self._words()
            for where, offset, table in self._tables:
                w = words[where]
                if w == 0:
                    rows.append(offset + NONE)
                elif table is not None:
                    rows.extend(table[w])
                else:
                    label = c.labels[w]
                    rows.append(offset + (NO_HEAD if label is None else 2 + label))
            s = c.top
            parents[0] = self.last_front.get(c.front, -1)
            if s is not None:
                parents[1] = self.last_top.get(s, -1)
                if c.rightmost[s] > s:
                    parents[2] = self.last_top.get(c.rightmost[s], -1)
                if 0 < c.leftmost[s] < s:
                    parents[3] = self.last_top.get(c.leftmost[s], -1)
                parents[4] = self.last_top.get(c.heads[s], -1)
                if self.previous_front == s:
                    parents[6] = t - 1
            parents[5] = self.last_top.get(words["lcI0"], -1)
        if register:
            self.register()
        return parents, rows

    def register(self) -> None:
        """Record the state of the current configuration for later relations."""
        c, t = self.config, self.count
        if c.top is not None:
            self.last_top[c.top] = t
        self.last_front[c.front] = t
        self.previous_front = c.front
        self.count += 1

    def apply(self, action: int, label: int | None = None) -> None:
        self.config.apply(action, label)
        self.previous = (action, label)

    def next_word(self) -> tuple[int, int, int]:
        """(POS, bundle, form) ids the last Shift generates: the new front word, or the end
        (POS 0 = ``$$$``; bundle and form -1)."""
        j = self.config.front
        if j > self.config.n:
            return 0, -1, -1
        t = self.tokens
        return int(t.pos[j]), int(t.feat[j]), int(t.form[j])


@dataclass
class Derivation:
    """The gold derivation of one sentence as arrays over its T states: parents (T, 7);
    inputs, a list of row lists; action (T,), -1 for state 0; allowed (T, 4); label (T,),
    -1 if none; pos, feat, form (T,), -1 where nothing is generated."""

    parents: np.ndarray
    inputs: list[list[int]]
    action: np.ndarray
    allowed: np.ndarray
    label: np.ndarray
    pos: np.ndarray
    feat: np.ndarray
    form: np.ndarray

    @classmethod
    def of(cls, tokens: Tokens, inputs: Inputs, decisions) -> Derivation:
        """decisions: the oracle's [(action, label id or None), ...]."""
        history = History(tokens, inputs)
        parents, rows, action, allowed, label, gen = [], [], [], [], [], []
        p, r = history.new_state()
        parents.append(p)
        rows.append(r)
        action.append(-1)
        allowed.append([False] * 4)
        label.append(-1)
        gen.append((int(tokens.pos[1]), int(tokens.feat[1]), int(tokens.form[1])))
        for a, lab in decisions:
            p, r = history.new_state()
            parents.append(p)
            rows.append(r)
            allowed.append(history.config.allowed().tolist())
            history.apply(a, lab)
            action.append(a)
            label.append(-1 if lab is None else lab)
            gen.append(history.next_word() if a == SHIFT else (-1, -1, -1))
        pos, feat, form = (np.array(g, dtype=np.int64) for g in zip(*gen))
        return cls(np.array(parents, dtype=np.int64), rows, np.array(action, dtype=np.int64),
                   np.array(allowed, dtype=bool), np.array(label, dtype=np.int64), pos, feat,
                   form)


def decisions_of(sentence: Sentence, vocab: Vocabulary):
    """The oracle derivation of a projective (lifted) sentence with label ids."""
    return [(a, None if lab is None else vocab.label(lab))
            for a, lab in oracle(sentence.heads, sentence.deprels)]
