"""Errors a user can act on. The command line prints them as one line and exits with 1.
Warnings too (`warn`), which it prints as one line each."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# how to get a model with every component, as errors that lack one say
TRAIN_EVERY_COMPONENT = ("arborparse train, whose default components are tokenizer,tagger,"
                         "lemmatizer,parser")


# where `warn` gathers its warnings instead of giving them (`gathered_warnings`), per thread
_GATHERED: ContextVar[list | None] = ContextVar("arborparse_warnings", default=None)


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """`warnings.warn`, shown at the line that called into arborparse: the first frame
    outside its modules (a generator's warning is raised wherever it is consumed, so no
    fixed ``stacklevel`` finds that line; where a library called arborparse, spaCy's
    ``nlp(text)``, that library's line). Inside `gathered_warnings`, gathered instead."""
    gathered = _GATHERED.get()
    if gathered is not None:
        caller = sys._getframe(1)
        gathered.append((category, message, f"{caller.f_code.co_filename}:{caller.f_lineno}"))
        return
    frame, level = sys._getframe(1), 2
    while frame is not None and \
            frame.f_globals.get("__name__", "").partition(".")[0] == "arborparse":
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


@contextmanager
def gathered_warnings() -> Iterator[list[tuple[type[Warning], str, str]]]:
    """The warnings that arborparse gives inside the block (this thread's, or this task's),
    gathered as (category, message, where `warn` was called) instead of given: a Dask
    worker's task hands them to the client, which gives them as its own."""
    gathered: list = []
    token = _GATHERED.set(gathered)
    try:
        yield gathered
    finally:
        _GATHERED.reset(token)


def counted(n: int, noun: str) -> str:
    """``1 word``, ``3 words``: a count in a message, with the noun's plural where due."""
    return f"{n} {noun}{'s' * (n != 1)}"


class ArborparseError(Exception):
    """Base class of every error caused by user input (files, options, models)."""


class TreebankFormatError(ArborparseError, ValueError):
    """A treebank file is malformed, or holds a tree that is not valid for its use.

    The message names the file and the line: ``path:line: what is wrong``, or, for a
    sentence, its `where` (``Sentence.where``: a sentence made in memory by its number and
    first words).
    """

    def __init__(self, path, line, message, where: str | None = None):
        self.path = str(path)
        self.line = line
        self.reason = message
        where = where or (f"{self.path}:{line}" if line is not None else self.path)
        super().__init__(f"{where}: {message}")


class MissingFileError(TreebankFormatError, FileNotFoundError):
    """A file to read is not there: told in one line as every `TreebankFormatError` is, and
    caught by ``except FileNotFoundError`` (or OSError) as Python's own would be."""


class NotTreebankError(TreebankFormatError):
    """A file read as a treebank (`format`: its name, such as CoNLL-U) is not CoNLL at all
    (plain text, say); a command that takes other formats adds which (`hinted`)."""

    def __init__(self, path, line, format: str, hint: str = ""):
        self.format = format
        super().__init__(path, line, f"does not look like {format}: the line has 1 column "
                         f"(10 tab-separated columns are expected{hint and '; ' + hint})")

    def hinted(self, hint: str) -> NotTreebankError:
        """The same error with `hint` (what else to give) in its parentheses."""
        return NotTreebankError(self.path, self.line, self.format, hint)


class EncodingError(TreebankFormatError):
    """A file's bytes are not valid in the encoding it is read with: the message names the
    line and the byte offset (from 0, in the file as read, decompressed), and the encoding
    the file looks like where its bytes say (`looks_like`: a UTF-16 or UTF-32 byte order
    mark at its start, or every other byte of its first line 0: UTF-16-LE or UTF-16-BE
    without one); a command that takes ``--encoding`` adds it."""

    def __init__(self, path, line, offset: int, encoding: str, looks_like: str | None = None):
        self.offset = offset
        self.encoding = encoding
        self.looks_like = looks_like
        said = "" if not looks_like else f"; every other byte is 0, as in {looks_like}" \
            if looks_like.endswith(("-LE", "-BE")) else f"; it begins as {looks_like} does"
        super().__init__(path, line, f"not valid {encoding} at byte {offset}{said}")
