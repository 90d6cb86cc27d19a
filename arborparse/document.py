"""Documents: what calling a pipeline returns (``nlp(text)``), as views over the CoNLL-U rows
(`arborparse.io.Sentence`) that stay the storage.

    doc = nlp("The dog barks. It's late.")
    for sentence in doc.sentences:
        for word in sentence.words:
            print(word.id, word.text, word.upos, word.head, word.deprel,
                  doc.text[word.start_char:word.end_char])

`Document.sentences` holds `Sentence` views; a sentence has `start_char` and `end_char`,
`words` (syntactic words, the tree's nodes) and `tokens` (surface tokens: a multiword token
such as Spanish *del* holds its words *de* *el*). A `Word` has the ten CoNLL-U columns as
attributes (`id`, `text`, `lemma`, `upos`, `xpos`, `feats`, `head`, `deprel`, `deps`,
`misc`), `start_char` and `end_char` (where its token is in the text, with the invisible
characters it holds or is followed by, which its text lacks, all but a joiner inside an
emoji: `arborparse.text.rules`; None for pre-tokenized input), and, when the pipeline was
called with ``marginals=True``, `head_prob` (the probability of its head) and `label_prob`
(of its label given that head). ``kbest=k`` gives each sentence `kbest`, the k most
probable trees with their probabilities. `Document.to_conllu()` is what ``arborparse
parse`` writes for the same input; `Document.from_conllu(text)` reads it back.
"""

from __future__ import annotations

import io as _io
from dataclasses import dataclass

import numpy as np

from arborparse.errors import counted
from arborparse.io import conllu
from arborparse.io.conllu import DEPREL, DEPS, FEATS, FORM, ID, LEMMA, MISC, UPOS, XPOS
from arborparse.io.plain import characters


def _misc_value(misc: str, key: str) -> str | None:
    for entry in misc.split("|"):
        name, _, value = entry.partition("=")
        if name == key:
            return value
    return None


class Word:
    """One syntactic word: a view of its row (see the module docstring)."""

    __slots__ = ("sentence", "_index")

    def __init__(self, sentence: Sentence, index: int):
        self.sentence = sentence
        self._index = index  # 1-based word number

    @property
    def _row(self) -> list[str]:
        rows = self.sentence.data
        return rows.rows[rows.word_rows[self._index - 1]]

    @property
    def id(self) -> int:
        return self._index

    text = property(lambda self: self._row[FORM], doc="The word's form (FORM).")
    lemma = property(lambda self: self._row[LEMMA], doc="LEMMA.")
    upos = property(lambda self: self._row[UPOS], doc="UPOS.")
    xpos = property(lambda self: self._row[XPOS], doc="XPOS.")
    feats = property(lambda self: self._row[FEATS], doc="FEATS.")
    deprel = property(lambda self: self._row[DEPREL], doc="DEPREL.")
    deps = property(lambda self: self._row[DEPS], doc="DEPS (enhanced dependencies).")
    misc = property(lambda self: self._row[MISC], doc="MISC.")

    @property
    def head(self) -> int | None:
        """The head's word number (0: the root); None before parsing."""
        head = int(self.sentence.data.heads[self._index])
        return None if head < 0 else head

    @property
    def token(self) -> Token:
        """The surface token that holds the word."""
        return self.sentence._token_of[self._index]

    @property
    def start_char(self) -> int | None:
        """Where the word's token starts in the text (None: not read from raw text)."""
        return self.token.start_char

    @property
    def end_char(self) -> int | None:
        """Where the word's token ends in the text (None: not read from raw text)."""
        return self.token.end_char

    @property
    def head_prob(self) -> float | None:
        """P(this head) under the parser's tree distribution (``marginals=True``)."""
        value = _misc_value(self.misc, "HeadProb")
        return None if value is None else float(value)

    @property
    def label_prob(self) -> float | None:
        """P(this label | this head) (``marginals=True``; with a linear model's
        second-stage labeler, its probability of the label given the tree)."""
        value = _misc_value(self.misc, "LabelProb")
        return None if value is None else float(value)

    def to_dict(self) -> dict:
        """The word as JSON holds it (`Document.to_dict`)."""
        out = {"id": self.id, "form": self.text, "lemma": self.lemma, "upos": self.upos,
               "xpos": self.xpos, "feats": self.feats, "head": self.head,
               "deprel": self.deprel, "deps": self.deps, "misc": self.misc}
        if self.start_char is not None:
            out.update(start_char=self.start_char, end_char=self.end_char)
        return out

    def __repr__(self) -> str:
        return (f"Word(id={self.id}, text={self.text!r}, upos={self.upos!r}, "
                f"head={self.head}, deprel={self.deprel!r})")


class Token:
    """One surface token: its words (several for a multiword token), its text and where it
    is in the text."""

    __slots__ = ("sentence", "_row", "words", "start_char", "end_char")

    def __init__(self, sentence: Sentence, row: int, words: list[Word], span):
        self.sentence = sentence
        self._row = row
        self.words = words
        self.start_char, self.end_char = (None, None) if span is None else \
            (int(span[0]), int(span[1]))

    @property
    def id(self) -> str:
        """``"3"``, or ``"3-4"`` for a multiword token."""
        return self.sentence.data.rows[self._row][ID]

    @property
    def text(self) -> str:
        return self.sentence.data.rows[self._row][FORM]

    @property
    def misc(self) -> str:
        return self.sentence.data.rows[self._row][MISC]

    def to_dict(self) -> dict:
        """The token as JSON holds it (a multiword token's entry of `Sentence.to_dict`)."""
        out = {"id": self.id, "text": self.text, "words": [w.id for w in self.words]}
        if self.start_char is not None:
            out.update(start_char=self.start_char, end_char=self.end_char)
        return out

    def __repr__(self) -> str:
        return f"Token(id={self.id!r}, text={self.text!r}, words={len(self.words)})"


@dataclass(frozen=True)
class Tree:
    """One of the k most probable trees: its probability, heads (``heads[m]`` for word m,
    ``heads[0] = -1``) and labels (word 1 first). The probability is that of this labeled
    tree, each arc with its best label (P(heads) times each arc's label probability): it is
    not the product of the words' `head_prob`, which are marginals over every tree."""

    probability: float
    heads: np.ndarray
    deprels: list[str]


class Sentence:
    """A sentence of a document: a view of one `arborparse.io.Sentence` (``data``)."""

    def __init__(self, data: conllu.Sentence):
        self.data = data
        self.words = [Word(self, m) for m in range(1, len(data) + 1)]
        offsets = data.offsets
        self.tokens, self._token_of = [], {}
        for k, (row, numbers) in enumerate(data.tokens()):
            span = None if offsets is None else offsets[k]
            token = Token(self, row, [self.words[m - 1] for m in numbers], span)
            self.tokens.append(token)
            self._token_of.update({m: token for m in numbers})

    @property
    def text(self) -> str:
        """The ``# text`` comment, else the tokens joined by spaces."""
        text = self.data.comment("text")
        return " ".join(t.text for t in self.tokens) if text is None else text

    @property
    def start_char(self) -> int | None:
        """Where the sentence starts in the document's text (its first token's start), or
        None where the input had no text (pre-tokenized, CoNLL-U)."""
        return self.tokens[0].start_char if self.tokens else None

    @property
    def end_char(self) -> int | None:
        """Where the sentence ends in the document's text (its last token's end), or None."""
        return self.tokens[-1].end_char if self.tokens else None

    @property
    def kbest(self) -> list[Tree] | None:
        """The k most probable trees, best first (``kbest=k``), else None."""
        found = (self.data.analysis or {}).get("kbest")
        return None if found is None else [Tree(p, h, list(d)) for p, h, d in found]

    @property
    def head_marginals(self) -> np.ndarray | None:
        """P(h -> m), (n + 1, n + 1), each column m >= 1 summing to 1
        (``marginals=True``), else None."""
        return (self.data.analysis or {}).get("heads")

    def to_conllu(self) -> str:
        return self.data.to_text()

    def to_dict(self) -> dict:
        """The sentence as JSON holds it (`Document.to_dict`)."""
        words = [w.to_dict() for w in self.words]
        mu = self.head_marginals
        if mu is not None:
            for m, word in enumerate(words, 1):
                word["heads"] = [round(float(p), 6) for p in mu[:, m]]
        out = {"text": self.text, "words": words}
        if self.start_char is not None:
            out.update(start_char=self.start_char, end_char=self.end_char)
        several = [t for t in self.tokens if len(t.words) > 1]
        if several:  # a multiword token's surface form, which no word holds
            out["multiword_tokens"] = [t.to_dict() for t in several]
        if self.kbest is not None:
            out["kbest"] = [{"probability": t.probability, "heads": [int(h) for h in t.heads[1:]],
                             "deprels": t.deprels} for t in self.kbest]
        return out

    def __len__(self) -> int:
        return len(self.words)

    def __iter__(self):
        return iter(self.words)

    def __getitem__(self, i):
        """The i-th word (0-based, as in `words`; its `id` is i + 1)."""
        return self.words[i]

    def __repr__(self) -> str:
        return f"Sentence({self.text!r})"


class Document:
    """The sentences of one input, in order; `text` is the raw text they were read from
    (None for pre-tokenized input)."""

    def __init__(self, sentences, text: str | None = None):
        self.sentences = [s if isinstance(s, Sentence) else Sentence(s) for s in sentences]
        self.text = text

    @classmethod
    def from_conllu(cls, text: str) -> Document:
        """A document of CoNLL-U text (a str: ours, or the ``conllu`` package's
        serialization)."""
        if not isinstance(text, str):
            raise TypeError(f"from_conllu takes a str, not {type(text).__name__}"
                            + (": decode it first (data.decode('utf-8')), or read the file "
                               "with arborparse.io.read_conllu(path)"
                               if isinstance(text, (bytes, bytearray)) else ""))
        characters(text, "the CoNLL-U text")
        source = _io.StringIO(text if text.endswith("\n") else text + "\n")
        source.name = "<conllu>"
        return cls(conllu.iter_conllu(source, "conllu"))

    def to_conllu(self) -> str:
        """The document as CoNLL-U: what ``arborparse parse`` writes for the same input."""
        return "".join(s.to_conllu() for s in self.sentences)

    def to_dict(self) -> dict:
        """The document as plain lists and dicts, ready for `json.dumps`: ``{"text": ...,
        "sentences": [{"text": ..., "words": [...], "kbest": [...]}]}``, each word
        ``{"id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps",
        "misc"}`` and, from raw text, ``"start_char"`` and ``"end_char"`` (each sentence's
        too); a sentence with multiword tokens lists them under ``"multiword_tokens"``
        (``{"id": "3-4", "text", "words": [3, 4]}``, from raw text with their offsets); with
        ``marginals=True`` each word's ``"heads"`` (P(head = h) for h = 0, 1..n, to six
        decimals), with ``kbest=k`` each sentence's trees (``"probability"``, ``"heads"``
        of words 1..n, ``"deprels"``). The service answers the same."""
        return {"text": self.text, "sentences": [s.to_dict() for s in self.sentences]}

    @property
    def words(self) -> list[Word]:
        return [w for s in self.sentences for w in s.words]

    def __len__(self) -> int:
        return len(self.sentences)

    def __iter__(self):
        return iter(self.sentences)

    def __getitem__(self, i):
        """The i-th sentence (0-based, as in `sentences`)."""
        return self.sentences[i]

    def __repr__(self) -> str:
        return (f"Document({counted(len(self.sentences), 'sentence')}, "
                f"{counted(len(self.words), 'word')})")
