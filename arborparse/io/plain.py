"""Input that is not CoNLL: raw text (for a tokenizer; paragraphs, or one sentence per line)
and tokenized text (one sentence per line, tokens separated by whitespace)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import numpy as np

from arborparse.errors import ArborparseError, TreebankFormatError
from arborparse.io.conllu import Sentence, decoded, lines_of, open_lines

FORMATS = ("text", "lines", "tokenized")  # parse --input-format, besides CoNLL's
_COMMENT = re.compile(r"# (?:sent_id =|text =|newdoc\b|newpar\b)")  # CoNLL-U's own
_WORD_ID = re.compile(r"\d+(?:[-.]\d+)?")


def characters(text: str, what: str = "the text") -> str:
    """`text`, refused (`ArborparseError`) if it holds a lone surrogate, which is not a
    character and cannot be written (JSON's ``"\\ud800"`` gives one; files, decoded
    strictly, never do)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise ArborparseError(f"{what} holds a lone surrogate (U+{ord(text[err.start]):04X}, "
                              f"character {err.start + 1}), which is not a character"
                              ) from None
    return text


def text_lines(source, encoding: str = "utf-8") -> Iterator[str]:
    """The lines of a text in `encoding` (a path, ``"-"`` for stdin, or an open file),
    newlines kept (a line ends as `arborparse.io.conllu.LINE_END` says), lazily; refused
    if it looks like CoNLL (see `_not_conll`)."""
    lines, name = open_lines(source)
    return (text for _, text in _not_conll(decoded(lines, name, encoding), name))


ADVICE = "read it with --input-format auto (or conllu)"  # the command line's


def _not_conll(numbered: Iterable[tuple[int, str]], name: str, advice: str = ADVICE
               ) -> Iterator[tuple[int, str]]:
    """The numbered lines of a text, lazily; a paragraph (the text's start, or after a blank
    line) that begins like CoNLL-U or CoNLL-X is refused (`TreebankFormatError`, ending
    with `advice`): a comment ``# sent_id =``, ``# text =``, ``# newdoc`` or ``# newpar``
    among its first comment lines, or a first other line of 10 tab-separated columns led by
    a word ID."""
    opening = True  # the line opens a paragraph, or follows its opening comments
    for lineno, text in numbered:
        if opening:
            comment, columns = _COMMENT.match(text), text.split("\t")
            why = f'a "{comment.group()}" comment' if comment else "10 tab-separated columns" \
                if len(columns) == 10 and _WORD_ID.fullmatch(columns[0]) else None
            if why:
                raise TreebankFormatError(name, lineno, f"looks like CoNLL-U ({why}), not "
                                          f"text: {advice}")
        opening = not text.strip() or (opening and text.startswith("#"))
        yield lineno, text


def prose_lines(text: str, name: str, advice: str) -> Iterator[str]:
    """The lines of a text in memory (`lines_of`: cut where a file's are), newlines kept,
    lazily; refused as `text_lines` refuses a file that looks like CoNLL (the error ending
    with `advice`)."""
    return (line for _, line in _not_conll(enumerate(lines_of(text), 1), name, advice))


def iter_tokenized(source, encoding: str = "utf-8") -> Iterator[Sentence]:
    """One sentence per non-blank line, its tokens the whitespace-separated pieces (each a
    word; ``# text`` the line, ``# sent_id`` its number), blank lines between paragraphs
    (``# newpar``; ``# newdoc`` before the first, as raw text's); the bytes in
    `encoding`, cut into lines as `text_lines` cuts; refused if it looks like CoNLL (see
    `_not_conll`)."""
    lines, name = open_lines(source)
    count, newpar = 0, True
    for lineno, text in _not_conll(decoded(lines, name, encoding), name):
        forms = text.split()
        if not forms:
            newpar = True
            continue
        count += 1
        yield words_sentence(forms, count, newpar, name, lineno, newdoc=count == 1)
        newpar = False


def words_sentence(forms: list[str], number: int, newpar: bool = False,
                   path: str = "<memory>", line: int = 1, newdoc: bool = False) -> Sentence:
    """A sentence of pre-tokenized words, as `iter_tokenized` reads a line: ``# sent_id``
    `number`, ``# text`` the words joined by spaces, ``# newpar`` first if asked, and
    ``# newdoc`` before it if asked (a document's first sentence, as the tokenizer gives
    it)."""
    rows = [[str(i), form, *["_"] * 8] for i, form in enumerate(forms, 1)]
    comments = ["# newdoc"] * newdoc + ["# newpar"] * newpar + \
        [f"# sent_id = {number}", f"# text = {' '.join(forms)}"]
    return Sentence(comments, rows, list(range(len(rows))), np.full(len(rows) + 1, -1),
                    path, line)
