"""Checks on input: gold trees for training or evaluation, tags for parsing."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from arborparse.errors import TRAIN_EVERY_COMPONENT, TreebankFormatError, warn
from arborparse.io.conllu import Sentence
from arborparse.trees.structure import find_cycle


# what allows several words on the root, where a trainer's check says it needs one
MULTI_ROOT = " (multi_root allows several)"
# and where evaluation does (CoNLL-U trees; CoNLL-X ones may have several)
CONLLU_ROOT = " (in CoNLL-U, as UD and the official evaluation script have it)"


def check_tree(sentence: Sentence, single_root: bool = True, several: str = "") -> None:
    """Raise `TreebankFormatError` unless the sentence holds a well-formed tree.

    Every word needs a head, the heads must form a tree rooted at 0, and with
    ``single_root=True`` exactly one word attaches to the root (`several`: what the
    message adds, such as the option that allows several, `MULTI_ROOT`).
    """
    heads = sentence.heads
    for m in range(1, len(heads)):
        if heads[m] < 0:
            raise TreebankFormatError(sentence.path, sentence.word_line(m),
                                      f"word {m} has no HEAD (a tree is needed here)",
                                      where=sentence.word_where(m))
    cycle = find_cycle(heads)
    if cycle is not None:
        words = " -> ".join(str(m) for m in cycle + [cycle[0]])
        raise TreebankFormatError(sentence.path, sentence.word_line(min(cycle)),
                                  f"the heads form a cycle ({words})",
                                  where=sentence.word_where(min(cycle)))
    roots = np.flatnonzero(heads == 0)
    if single_root and len(roots) != 1:
        second = int(roots[1]) if len(roots) > 1 else None
        raise TreebankFormatError(
            sentence.path, sentence.word_line(second) if second else sentence.line,
            f"{len(roots)} words attach to the root (words {', '.join(map(str, roots))}); "
            f"single-root trees need exactly one{several}",
            where=sentence.word_where(second) if second else sentence.where)


TAG_COLUMNS = ("UPOS", "XPOS", "FEATS", "LEMMA")


class MissingTagsWarning(UserWarning):
    """Some words of the input have no UPOS."""


def only_sentences(sentences: Iterable[Sentence]) -> Iterator[Sentence]:
    """Pass the sentences through, lazily; TypeError, in one line that says what to call
    instead, for a str or bytes given as the stream (which would be read as one sentence
    per character) and for an item that is not a `Sentence`."""
    if isinstance(sentences, (str, bytes)):
        raise TypeError("parse takes an iterable of Sentence (arborparse.io.read_conllu "
                        f"reads them), not {type(sentences).__name__}: for raw text call "
                        "parse_text(text), or the pipeline itself (nlp(text))")
    for k, s in enumerate(sentences, 1):
        if not isinstance(s, Sentence):
            raise TypeError(f"parse takes Sentence objects (arborparse.io.read_conllu reads "
                            f"them); item {k} is {type(s).__name__}: for raw text call "
                            "parse_text(text), for word lists the pipeline itself "
                            "(nlp([['The', 'dog', 'barks']]))")
        yield s


def require_tags(sentences: Iterable[Sentence]) -> Iterator[Sentence]:
    """Pass the sentences through (`only_sentences`), for a parser that reads tags: a
    sentence none of whose words has a UPOS (CoNLL-X: CPOSTAG) raises `TreebankFormatError`
    naming the empty tag columns; when the stream ends, a `MissingTagsWarning` counts the
    words without one."""
    missing = 0
    for s in only_sentences(sentences):
        count = s.upos.count("_")
        if count == len(s):
            columns = (s.upos, s.xpos, s.feats, s.lemmas)
            empty = [name for name, values in zip(TAG_COLUMNS, columns)
                     if all(v == "_" for v in values)]
            raise TreebankFormatError(
                s.path, s.line, f"the words have no tags (column{'s' * (len(empty) > 1)} "
                f"{', '.join(empty)} empty): this model has no tagger; tag the input first, or "
                f"train a model with one ({TRAIN_EVERY_COMPONENT})", where=s.where)
        missing += count
        yield s
    if missing:
        warn(f"{missing} word{'s' * (missing > 1)} of the input had no UPOS (_) and "
             "were parsed without it; expect lower accuracy", MissingTagsWarning)
