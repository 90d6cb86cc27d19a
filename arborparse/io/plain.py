"""Input that is not CoNLL: raw text (for a tokenizer) and tokenized text (one sentence per
line, tokens separated by whitespace)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from arborparse.io.conllu import Sentence, decoded, open_lines


def text_lines(source, encoding: str = "utf-8") -> Iterator[str]:
    """The lines of a text in `encoding` (a path, ``"-"`` for stdin, or an open file),
    newlines kept, lazily."""
    return (text for _, text in decoded(*open_lines(source), encoding))


def iter_tokenized(source, encoding: str = "utf-8") -> Iterator[Sentence]:
    """One sentence per non-blank line, its tokens the whitespace-separated pieces (each a
    word; ``# text`` the line, ``# sent_id`` its number), blank lines between paragraphs
    (``# newpar``); the bytes in `encoding`."""
    lines, name = open_lines(source)
    count, newpar = 0, True
    for lineno, text in decoded(lines, name, encoding):
        forms = text.split()
        if not forms:
            newpar = True
            continue
        count += 1
        yield words_sentence(forms, count, newpar, name, lineno)
        newpar = False


def words_sentence(forms: list[str], number: int, newpar: bool = False,
                   path: str = "<memory>", line: int = 1) -> Sentence:
    """A sentence of pre-tokenized words, as `iter_tokenized` reads a line: ``# sent_id``
    `number`, ``# text`` the words joined by spaces, ``# newpar`` first if asked."""
    rows = [[str(i), form, *["_"] * 8] for i, form in enumerate(forms, 1)]
    comments = ["# newpar"] * newpar + [f"# sent_id = {number}",
                                         f"# text = {' '.join(forms)}"]
    return Sentence(comments, rows, list(range(len(rows))), np.full(len(rows) + 1, -1),
                    path, line)
