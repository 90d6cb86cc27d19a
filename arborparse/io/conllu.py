"""Reading and writing CoNLL-U and CoNLL-X treebanks.

A small reader of our own rather than a CoNLL-U library: the promises here are a
byte-identical round trip (comments, multiword tokens, empty nodes and every column
kept verbatim), errors that name the file and line, CoNLL-X in the same reader, and
speed (English-EWT train in well under a second; see ``bench/RESULTS.md``). The
``conllu`` package parses into dictionaries, re-serializes columns its own way and
reports no line numbers, so it keeps none of the first three.
"""

from __future__ import annotations

import codecs
import gzip
import itertools
import lzma
import math
import os
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from arborparse.errors import ArborparseError, EncodingError, MissingFileError, \
    NotTreebankError, TreebankFormatError, counted
from arborparse.io.atomic import atomic_open

COLUMNS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")
ID, FORM, LEMMA, UPOS, XPOS, FEATS, HEAD, DEPREL, DEPS, MISC = range(10)
FORMATS = ("auto", "conllu", "conllx")
FORMAT_NAMES = {"conllu": "CoNLL-U", "conllx": "CoNLL-X"}
# suffixes that name one format; any other (``.conll`` is used for both) goes by content
_SUFFIX_FORMAT = {".conllu": "conllu", ".conllx": "conllx"}


TREE_MISC = ("HeadProb", "LabelProb")  # MISC entries of a tree's arcs (parse --marginals)
# where a line ends, in every reader: after a newline, or after a carriage return that no
# newline follows (old Mac files; Python's universal newlines, which the CoNLL 2018
# evaluation script reads with, end a line there too)
LINE_END = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")
_UNWRITABLE = re.compile(r"[\t\n\r]")  # in a field of a row
_LINE_END_BYTES = re.compile(LINE_END.pattern.encode())


def writable(value) -> bool:
    """Whether `value` can stand in a field of a row (a word, a tag, a label): a non-empty
    string without tabs or line ends, which a CoNLL-U file holds and reads back."""
    return isinstance(value, str) and bool(value) and not _UNWRITABLE.search(value)


def _check_tree_columns(heads: np.ndarray, deprels) -> None:
    """ValueError, naming the first, for what a CoNLL-U file could not hold or arborparse
    would not read back: a head not a whole number 0..n or the word itself, a label not a
    non-empty string or one with a tab or line end."""
    n = len(heads) - 1
    if heads.dtype.kind in "iu":
        h = heads[1:]
        bad = np.flatnonzero((h < 0) | (h > n) | (h == np.arange(1, n + 1))) + 1
    else:  # floats, objects, strings, booleans: each looked at
        bad = [m for m in range(1, n + 1) if not _a_head(heads[m], m, n)]
    if len(bad):
        m = int(bad[0])
        value = heads[m].item() if isinstance(heads[m], np.generic) else heads[m]
        raise ValueError(f"heads[{m}] = {value!r}: a head is a whole number, a word 1..{n} "
                         f"other than {m} or 0 for the root")
    m = next((m for m, d in enumerate(() if deprels is None else deprels)
              if not writable(d)), None)
    if m is not None:
        raise ValueError(f"deprels[{m}] = {deprels[m]!r}: a label is a non-empty string "
                         "without tabs or line ends")


def _a_head(value, m: int, n: int) -> bool:
    """Whether `value` may stand as word m's head in a sentence of n words."""
    return isinstance(value, (int, float, np.integer, np.floating)) and \
        not isinstance(value, (bool, np.bool_)) and math.isfinite(value) and \
        float(value).is_integer() and 0 <= value <= n and value != m


def misc_without(misc: str, keys) -> str:
    """A MISC value without its entries of the `keys` (``_`` when none is left)."""
    return "|".join(e for e in misc.split("|") if e.split("=", 1)[0] not in keys) or "_"


@dataclass(eq=False)
class Sentence:
    """One sentence of a treebank, kept verbatim.

    Attributes
    ----------
    comments : list of str
        Comment lines (with their leading ``#``), CoNLL-U only.
    rows : list of list of str
        Every token line split into its 10 columns, in file order: words, multiword
        token ranges (``3-4``) and empty nodes (``5.1``).
    word_rows : list of int
        ``rows[word_rows[i - 1]]`` is word ``i``; words are numbered 1..n.
    heads : ndarray of int, shape (n + 1,)
        ``heads[m]`` is the head of word m, ``heads[0] = -1``. A word whose HEAD is
        ``_`` (text not yet parsed) has head -1.
    path, line : where the sentence starts (for error messages).
    format : ``"conllu"`` or ``"conllx"`` (columns 9 and 10 are PHEAD and PDEPREL).
    offsets : ndarray of int, shape (tokens, 2), or None
        For a sentence read from raw text: where each token (`tokens`) starts and ends in
        the text, as character offsets (not written to files).
    analysis : dict or None
        What a parser found beside the tree when asked (not written to files):
        ``"heads"``, the head marginals (n + 1, n + 1), each column m >= 1 summing to 1;
        ``"kbest"``, the k most probable trees as (probability, heads, deprels).
    """

    comments: list[str]
    rows: list[list[str]]
    word_rows: list[int]
    heads: np.ndarray
    path: str = "<memory>"
    line: int = 1
    format: str = "conllu"
    offsets: np.ndarray | None = field(default=None, repr=False)
    analysis: dict | None = field(default=None, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.word_rows)

    def comment(self, key: str) -> str | None:
        """The value of the first ``# key = value`` comment (``text``, ``sent_id``), else
        None."""
        prefix = f"# {key} = "
        return next((c[len(prefix):] for c in self.comments if c.startswith(prefix)), None)

    @property
    def where(self) -> str:
        """Where the sentence is, for messages: its file and line, or, for one made in
        memory (raw text's sentences), its number and first words."""
        if self.path != "<memory>":
            return f"{self.path}:{self.line}"
        return f"sentence {self.comment('sent_id') or '?'} ({' '.join(self.forms[:5])} ...)"

    def column(self, index: int) -> list[str]:
        """The values of one column for words 1..n (index: ``FORM``, ``UPOS``, ...)."""
        rows, cached = self.rows, self._cache.get(index)
        if cached is None:
            cached = self._cache[index] = [rows[r][index] for r in self.word_rows]
        return cached

    @property
    def forms(self) -> list[str]:
        return self.column(FORM)

    @property
    def lemmas(self) -> list[str]:
        return self.column(LEMMA)

    @property
    def upos(self) -> list[str]:
        return self.column(UPOS)

    @property
    def xpos(self) -> list[str]:
        return self.column(XPOS)

    @property
    def feats(self) -> list[str]:
        return self.column(FEATS)

    @property
    def deprels(self) -> list[str]:
        return self.column(DEPREL)

    @property
    def has_tree(self) -> bool:
        """True when every word has a HEAD."""
        return bool(np.all(self.heads[1:] >= 0))

    def tokens(self) -> list[tuple[int, list[int]]]:
        """The surface tokens, in order: each token's row index (a multiword token's range
        line, else its word's own line) and the numbers of the words it holds. Empty nodes
        are no tokens."""
        out, inside = [], set()
        for r, row in enumerate(self.rows):
            if "." in row[ID]:
                continue
            if "-" in row[ID]:
                a, b = map(int, row[ID].split("-"))
                out.append((r, list(range(a, b + 1))))
                inside.update(range(a, b + 1))
            elif int(row[ID]) not in inside:
                out.append((r, [int(row[ID])]))
        return out

    def word_line(self, m: int) -> int:
        """The file line number of word m (1-based)."""
        return self.line + len(self.comments) + self.word_rows[m - 1]

    def word_where(self, m: int) -> str:
        """Where word m (1-based) is, for messages: its file and line, or, for a sentence
        made in memory, the sentence's `where` and the word's number."""
        if self.path != "<memory>":
            return f"{self.path}:{self.word_line(m)}"
        return f"{self.where}, word {m}"

    def _with_rows(self, rows: list[list[str]], heads: np.ndarray) -> Sentence:
        """A copy with these rows and heads; comments, word positions, origin, offsets and
        analysis kept."""
        return Sentence(list(self.comments), rows, list(self.word_rows), heads, self.path,
                        self.line, self.format, self.offsets, self.analysis)

    def with_tree(self, heads, deprels=None) -> Sentence:
        """A copy whose HEAD (and DEPREL, if given) columns are replaced. What describes the
        old tree goes: DEPS (CoNLL-U; the enhanced graph) and PHEAD/PDEPREL (CoNLL-X) become
        ``_``, and MISC loses the old arcs' probabilities (`TREE_MISC`). Nothing else
        changes.

        Parameters
        ----------
        heads : array of int, shape (n + 1,)
            ``heads[m]`` for words 1..n; ``heads[0]`` is ignored.
        deprels : sequence of str, length n, optional

        A head that is not a whole number 0..n other than its word, or a label that is
        empty or holds a tab or line end, is a ValueError: the file written would not
        read back.
        """
        n = len(self)
        heads = np.asarray(heads)
        if heads.shape != (n + 1,):
            raise ValueError(f"heads must have shape ({n + 1},), got {heads.shape}")
        if deprels is not None and len(deprels) != n:
            raise ValueError(f"deprels must have {n} labels, got {len(deprels)}")
        _check_tree_columns(heads, deprels)
        rows = [list(r) for r in self.rows]
        stale = (DEPS,) if self.format == "conllu" else (DEPS, MISC)  # CoNLL-X PHEAD, PDEPREL
        for i, r in enumerate(self.word_rows):
            rows[r][HEAD] = str(int(heads[i + 1]))
            if deprels is not None:
                rows[r][DEPREL] = deprels[i]
            for column in stale:
                rows[r][column] = "_"
            if self.format == "conllu":
                rows[r][MISC] = misc_without(rows[r][MISC], TREE_MISC)
        new_heads = heads.astype(np.int64, copy=True)
        new_heads[0] = -1
        return self._with_rows(rows, new_heads)

    def with_columns(self, columns: dict[int, list[str]]) -> Sentence:
        """A copy with whole columns of the words replaced: ``{UPOS: [...], LEMMA: [...]}``
        (one value per word); nothing else changes."""
        rows = [list(r) for r in self.rows]
        for column, values in columns.items():
            if len(values) != len(self):
                raise ValueError(f"need {len(self)} values for column {COLUMNS[column]}, got "
                                 f"{len(values)}")
            for r, value in zip(self.word_rows, values):
                if not writable(value):
                    raise ValueError(f"{COLUMNS[column]} value {value!r}: a column value must "
                                     "be non-empty, without tabs or line ends")
                rows[r][column] = value
        return self._with_rows(rows, self.heads.copy())

    def with_analysis(self, **found) -> Sentence:
        """A copy with entries added to `analysis` (``heads=...``, ``kbest=...``)."""
        copy = self._with_rows(self.rows, self.heads)
        copy.analysis = {**(self.analysis or {}), **found}
        return copy

    def with_misc(self, items: list[str]) -> Sentence:
        """A copy with items[m - 1] (``Key=Value|Key=Value``) set in the MISC column of word
        m: keys already there get the new values, other entries stay. CoNLL-X has no MISC
        column (its tenth is PDEPREL): a `TreebankFormatError` there."""
        if len(items) != len(self):
            raise ValueError(f"need {len(self)} MISC items, got {len(items)}")
        if self.format == "conllx":
            keys = sorted({entry.split("=", 1)[0] for item in items for entry in item.split("|")})
            raise TreebankFormatError(self.path, self.line, f"CoNLL-X has no MISC column for "
                                      f"{' and '.join(keys)} (its tenth column is PDEPREL): "
                                      "give CoNLL-U", where=self.where)
        rows = [list(r) for r in self.rows]
        for r, item in zip(self.word_rows, items):
            new = item.split("|")
            keys = {entry.split("=", 1)[0] for entry in new}
            old = [] if rows[r][MISC] == "_" else rows[r][MISC].split("|")
            rows[r][MISC] = "|".join([e for e in old if e.split("=", 1)[0] not in keys] + new)
        return self._with_rows(rows, self.heads.copy())

    def to_text(self) -> str:
        """The sentence as CoNLL-U/CoNLL-X text, ending with its blank line."""
        lines = self.comments + ["\t".join(r) for r in self.rows]
        return "\n".join(lines) + "\n\n"


COMPRESSED = {".gz": gzip.open, ".xz": lzma.open}  # read by suffix


def uncompressed(path) -> Path:
    """The path without a compression suffix (``x.conllu.gz`` -> ``x.conllu``)."""
    path = Path(path)
    return path.with_suffix("") if path.suffix.lower() in COMPRESSED else path


def lines_of(text: str) -> list[str]:
    """The lines of a text in memory, ends kept, cut where `LINE_END` says (not at the
    other characters `str.splitlines` takes for line ends: U+2028, form feed, ...)."""
    return [line for line in LINE_END.split(text) if line]


def at_line_ends(lines: Iterable[bytes | str]) -> Iterator[bytes | str]:
    """The lines (bytes or text) cut where `LINE_END` says: after a carriage return that no
    newline follows, and after a newline inside one (a caller's "line" that holds
    several), so that a text reads the same however it is cut into lines."""
    for line in lines:
        cr, nl = (b"\r", b"\n") if isinstance(line, bytes) else ("\r", "\n")
        end = len(line) - (2 if line.endswith(cr + nl) else 1 if line.endswith((cr, nl)) else 0)
        if line.find(cr, 0, end) != -1 or line.find(nl, 0, end) != -1:
            cut = _LINE_END_BYTES if isinstance(line, bytes) else LINE_END
            yield from (piece for piece in cut.split(line) if piece)
        else:
            yield line


def open_lines(source) -> tuple[Iterator[bytes | str], str]:
    """The lines of a path (``.gz`` and ``.xz`` decompressed), ``"-"`` (stdin) or an open
    file, and a name for messages: bytes, but the lines of an open text file are the text
    it decodes. A line ends as `LINE_END` says (`_recut` cuts the bytes of UTF-16 and
    UTF-32 again)."""
    lines, name = _opened(source)
    return at_line_ends(lines), name


def _opened(source) -> tuple[Iterator[bytes | str], str]:
    """`open_lines`, each line ending at a newline."""
    if isinstance(source, (str, os.PathLike)):
        if str(source) == "-":
            return iter(sys.stdin.buffer), "<stdin>"
        path = Path(source)
        opener = COMPRESSED.get(path.suffix.lower(), open)
        try:
            handle = opener(path, "rb")
        except OSError as err:
            error = MissingFileError if isinstance(err, FileNotFoundError) else \
                TreebankFormatError
            raise error(path, None, f"cannot open: {err.strerror}") from None

        def lines():
            with handle:
                try:
                    yield from handle
                except (OSError, EOFError, lzma.LZMAError) as err:
                    raise TreebankFormatError(path, None, f"cannot decompress: {err}") \
                        from None
        return lines(), str(path)
    return iter(source), str(getattr(source, "name", "<stream>"))


def check_encoding(encoding: str) -> str:
    """`encoding` if Python knows it as a text encoding, else `ArborparseError`."""
    try:
        "".encode(encoding)
    except LookupError:
        raise ArborparseError(f"unknown encoding {encoding!r} (give a name Python knows: "
                              "utf-8, latin-1, cp1252, utf-16, ...)") from None
    return encoding


def decoded(lines: Iterable[bytes | str], name: str,
            encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
    """(line number, text) of byte lines in `encoding`, newlines kept (lines of text, from
    an open text file, as they are). A byte-order mark at the start is skipped. Bytes that
    are not `encoding` are refused with their line and byte offset (`EncodingError`)."""
    if "\n".encode(check_encoding(encoding)) != b"\n":  # UTF-16, UTF-32
        lines = at_line_ends(_recut(lines, name, encoding))
    utf8 = codecs.lookup(encoding).name == "utf-8"
    done, first = 0, b""  # the bytes before this line, the first line's first bytes
    for lineno, raw in enumerate(lines, 1):
        if isinstance(raw, str):
            yield lineno, raw.removeprefix("\ufeff") if lineno == 1 else raw
            continue
        if lineno == 1:
            first = raw[:256]
            if utf8 and raw.startswith(codecs.BOM_UTF8):
                raw, done = raw[3:], 3
        try:
            yield lineno, raw.decode(encoding)
        except UnicodeDecodeError as err:
            raise EncodingError(name, lineno, done + err.start, "UTF-8" if utf8 else encoding,
                                _looks_like(first)) from None
        done += len(raw)


def _looks_like(first: bytes) -> str | None:
    """The encoding a file whose first line's bytes are `first` (cut after a byte 0a) looks
    like: UTF-16 or UTF-32 where it begins with their byte order mark, UTF-16-LE or
    UTF-16-BE where every other byte of it is 0 (the ASCII characters of a file without
    the mark), else None."""
    for name, mark in (("UTF-32", codecs.BOM_UTF32_LE), ("UTF-32", codecs.BOM_UTF32_BE),
                       ("UTF-16", codecs.BOM_UTF16_LE), ("UTF-16", codecs.BOM_UTF16_BE)):
        if first.startswith(mark):
            return name
    raw = first.removesuffix(b"\n")
    odd, even = raw[1::2], raw[0::2]
    if len(raw) >= 8 and odd.count(0) >= 0.9 * len(odd) and not even.count(0):
        return "UTF-16-LE"
    if len(raw) >= 8 and even.count(0) >= 0.9 * len(even) and not odd.count(0):
        return "UTF-16-BE"
    return None


def _recut(lines: Iterable[bytes | str], name: str, encoding: str) -> Iterator[str]:
    """The lines, cut at ``\\n`` alone, of bytes in an encoding whose newline is more than
    the byte 0a (UTF-16, UTF-32): decoded as one stream, since a byte 0a may be half of
    any character there (a byte-order mark is skipped by the codec)."""
    decoder = codecs.getincrementaldecoder(encoding)()
    pending, done, count = "", 0, 0
    for raw in itertools.chain(lines, [None]):
        if isinstance(raw, str):  # from an open text file
            yield raw
            continue
        try:
            pending += decoder.decode(raw or b"", raw is None)
        except UnicodeDecodeError as err:
            held = len(decoder.getstate()[0])  # bytes given before, not yet decoded
            raise EncodingError(name, count + 1, done - held + err.start, encoding) from None
        done += len(raw or b"")
        while cut := pending.find("\n") + 1:
            count += 1
            yield pending[:cut]
            pending = pending[cut:]
    if pending:
        yield pending


def _blocks(lines: Iterable[bytes | str], name: str,
            encoding: str = "utf-8") -> Iterator[tuple[int, list[str], bool]]:
    """Group decoded lines into sentences: (first line number, lines without newlines,
    whether a blank line ends it).

    A byte-order mark at the start is skipped; the last sentence needs no blank line after
    it (as in the CoNLL 2018 evaluation script).
    """
    block: list[str] = []
    start, columns = 0, False  # columns: a line with tabs was read
    for lineno, text in decoded(lines, name, encoding):
        if not text.endswith(("\n", "\r")) and (columns or "\t" in text):  # (else: not CoNLL)
            _check_last_line(name, lineno, text)
        columns = columns or "\t" in text
        text = text.rstrip("\n")
        if text.endswith("\r"):
            text = text[:-1]
        if text.strip() == "":
            if block:
                yield start, block, True
                block = []
            continue
        if not block:
            start = lineno
        block.append(text)
    if block:
        yield start, block, False


def _check_last_line(name: str, lineno: int, text: str) -> None:
    """A last line without its newline must be whole: a comment, blank, or 10 columns."""
    columns = text.count("\t") + 1
    if text.strip() and not text.startswith("#") and columns < 10:
        raise TreebankFormatError(name, lineno, f"the last line is truncated ({columns} of 10 "
                                  "columns and no newline): the file may have been cut short")


def sniff(name: str, lines: list[str]) -> str:
    """CoNLL-U or CoNLL-X: by the suffix ``.conllu`` or ``.conllx``, else by the first
    sentence's content (``.conll`` files come in both)."""
    suffix = uncompressed(name).suffix.lower()
    if suffix in _SUFFIX_FORMAT:
        return _SUFFIX_FORMAT[suffix]
    for text in lines:
        if text.startswith("#"):
            return "conllu"
        cols = text.split("\t")
        if len(cols) == 10:
            if "-" in cols[ID] or "." in cols[ID] or ":" in cols[DEPS]:
                return "conllu"
            if cols[DEPS].isdigit():
                return "conllx"
    return "conllu"


def _not_treebank(name: str, start: int, lines: list[str], fmt: str) -> None:
    """Refuse a first sentence that is not CoNLL at all (plain text, say) in one line."""
    first = next((i for i, text in enumerate(lines)
                  if not (text.startswith("#") and fmt == "conllu")), None)
    if first is not None and fmt == "conllx" and lines[first].startswith("#") and \
            "\t" not in lines[first]:
        raise TreebankFormatError(name, start + first, "a comment line, which CoNLL-X has "
                                  "not: this looks like CoNLL-U (read it as conllu)")
    if first is not None and "\t" not in lines[first]:
        lineno = start + first
        raise NotTreebankError(name, lineno, FORMAT_NAMES[fmt])


def _parse_block(name: str, start: int, lines: list[str], fmt: str) -> Sentence:
    comments: list[str] = []
    rows: list[list[str]] = []
    word_rows: list[int] = []
    heads = [-1]
    head_lines: list[int] = []
    empty_index = 0
    range_end = range_line = 0
    range_ident = ""
    for offset, text in enumerate(lines):
        lineno = start + offset
        if text.startswith("#") and fmt == "conllu":
            if rows:
                raise TreebankFormatError(name, lineno, "comment line after the first token line")
            comments.append(text)
            continue
        cols = text.split("\t")
        if len(cols) != 10:
            raise TreebankFormatError(
                name, lineno, f"expected 10 tab-separated columns, found {len(cols)}")
        if "" in cols:
            raise TreebankFormatError(
                name, lineno, f"column {COLUMNS[cols.index('')]} is empty (use _ for no value)")
        ident = cols[ID]
        n = len(word_rows)
        if ident.isdigit():
            if int(ident) != n + 1:
                raise TreebankFormatError(
                    name, lineno, f"word ID {ident} out of order (expected {n + 1})")
            head = cols[HEAD]
            if head == "_":
                heads.append(-1)
            elif head.isdigit():
                heads.append(int(head))
            elif head[:1] == "-" and head[1:].isdigit():
                raise TreebankFormatError(name, lineno, f"HEAD {head} out of range (0 is the "
                                          "root, 1 to n the words)")
            else:
                raise TreebankFormatError(name, lineno, f"HEAD {head!r} is not an integer")
            head_lines.append(lineno)
            word_rows.append(len(rows))
            empty_index = 0
        elif fmt == "conllu" and "-" in ident:
            a, _, b = ident.partition("-")
            if n < range_end and a.isdigit() and b.isdigit() and int(a) == n + 1:
                raise TreebankFormatError(
                    name, lineno, f"multiword token range {ident} overlaps the range "
                    f"{range_ident} of line {range_line}")
            if not (a.isdigit() and b.isdigit()) or int(a) != n + 1 or int(b) <= int(a) \
                    or n < range_end:
                raise TreebankFormatError(
                    name, lineno, f"multiword token range {ident} out of order or malformed "
                    f"(expected a range starting at {n + 1})")
            range_end, range_line, range_ident = int(b), lineno, ident
        elif fmt == "conllu" and "." in ident:
            a, _, b = ident.partition(".")
            if not (a.isdigit() and b.isdigit()) or int(a) != n or int(b) != empty_index + 1:
                raise TreebankFormatError(
                    name, lineno, f"empty node ID {ident} out of order or malformed "
                    f"(expected {n}.{empty_index + 1})")
            empty_index += 1
        else:
            raise TreebankFormatError(name, lineno, f"malformed ID {ident!r}")
        rows.append(cols)
    if not word_rows:
        raise TreebankFormatError(name, start, "sentence has no words")
    n = len(word_rows)
    if range_end > n:
        raise TreebankFormatError(name, range_line, f"multiword token range reaches word "
                                  f"{range_end} but the sentence has {counted(n, 'word')}")
    for m in range(1, n + 1):
        if heads[m] > n:
            raise TreebankFormatError(name, head_lines[m - 1], f"HEAD {heads[m]} out of range "
                                      f"(the sentence has {counted(n, 'word')})")
        if heads[m] == m:
            raise TreebankFormatError(name, head_lines[m - 1], f"word {m} is its own head")
    return Sentence(comments, rows, word_rows, np.array(heads, dtype=np.int64), name, start, fmt)


def iter_conllu(source, format: str = "auto", encoding: str = "utf-8") -> Iterator[Sentence]:
    """Stream the sentences of a CoNLL-U or CoNLL-X file.

    Parameters
    ----------
    source : path, ``"-"`` for standard input, or an open file (binary or text)
    format : ``"auto"``, ``"conllu"`` or ``"conllx"``. ``auto`` goes by the suffix
        ``.conllu`` or ``.conllx``, else (``.conll``, stdin, ...) by the first sentence's
        content: comments, ranges, empty nodes or DEPS mean CoNLL-U, a numeric PHEAD
        column CoNLL-X.
    encoding : of the bytes (default UTF-8; an open text file is read as it decodes itself)

    Raises
    ------
    TreebankFormatError
        For any malformed line, naming the file and line number (`EncodingError` for
        bytes that are not `encoding`).
    """
    if format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {format!r}")
    lines, name = open_lines(source)
    fmt = None if format == "auto" else format
    first = True
    for start, block, ended in _blocks(lines, name, encoding):
        fmt = fmt or sniff(name, block)
        if first:
            _not_treebank(name, start, block, fmt)
            first = False
        try:
            sentence = _parse_block(name, start, block, fmt)
        except TreebankFormatError as err:
            if ended or type(err) is not TreebankFormatError:
                raise
            raise TreebankFormatError(err.path, err.line, f"{err.reason} (the file ends "
                                      "without a blank line after this sentence: was it "
                                      "cut short?)") from None
        yield sentence


def read_conllu(source, format: str = "auto", encoding: str = "utf-8") -> list[Sentence]:
    """Read a whole CoNLL-U or CoNLL-X file into a list of sentences (see `iter_conllu`)."""
    return list(iter_conllu(source, format, encoding))


def write_conllu(sentences: Iterable[Sentence], dest) -> None:
    """Write sentences to a path (atomically: a temporary file renamed into place),
    ``"-"`` (stdout) or an open text file."""
    if isinstance(dest, (str, os.PathLike)) and str(dest) != "-":
        with atomic_open(dest, "w", encoding="utf-8", newline="\n") as handle:
            for sentence in sentences:
                handle.write(sentence.to_text())
        return
    handle = sys.stdout if str(dest) == "-" else dest
    for sentence in sentences:
        handle.write(sentence.to_text())
    handle.flush()
