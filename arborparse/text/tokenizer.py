"""`Tokenizer`: sentences, tokens and multiword tokens from raw text, learned from a UD
treebank alone.

The treebank's tokens and their ``SpaceAfter=No`` spell its text; ``# newpar`` and
``# newdoc`` mark paragraphs (a treebank without them is one long paragraph). Every
character that is not whitespace gets a label: the token goes on after it (``inside``),
a token ends there (``token``), or a token and its sentence end there (``sentence``).
Whitespace always ends a token, and the end of a paragraph its sentence. An averaged
perceptron (`arborparse.text.classifier`) labels the characters of a paragraph left to
right from the characters around them (their code points, Unicode classes and pairs), the
whitespace-delimited chunk they sit in with their place in it, the chunks around it, and
the shapes of the ends of those chunks (runs of letters and digits with their lengths, the
other characters as they are: an abbreviation the treebank never wrote looks like those
it did). One training sentence in ten (`CAPITALS_EVERY`) is also read in capitals, so that a
text in capitals is cut as in small letters (treebanks hold few such words).
With development data, the epoch is chosen on its boundaries and the weight of sentence
ends shifted to make its sentence boundaries best (a text without punctuation, as
Gothic's, otherwise gets too few). With development data, a second, word-level classifier
(`arborparse.text.sentences`) is trained to decide where sentences end among the tokens
the characters give, and kept when it finds the dev sentences better; once a parser is
trained, `fit_syntax` may add a parser's view of where sentences end
(`arborparse.text.syntax`: a parser of windows of the paragraph, kept with it), used when
the pipeline passes that parser's marginals (`crossing=`) to `split`, `tokenize` or
`iter_tokenize`. Multiword tokens are split into their words by
`arborparse.text.multiword`. Whitespace ends a token, unless at
least `SPACES_AT` of the training tokens hold a space (Vietnamese writes a word's syllables
apart: ``Hà Nội``): then a character before a single space may also be inside its token,
and the classifier decides.

Before the classifier, `arborparse.text.rules` drops the invisible characters (zero-width
spaces and joiners, control characters, ...) but those the treebank's tokens hold, inside a
word: a token made only of them disappears, and the others keep their offsets in the text
as given (a zero-width space is read as a space: see that module). Its strings kept whole
(URLs, e-mail addresses, file paths, numbers with separators or joined by slashes), of the
kinds the treebank keeps whole, are one token each: the classifier may choose no other
label inside them or at their ends, and the multiword splitter leaves them alone.
"""

from __future__ import annotations

import functools
import re
import unicodedata
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from arborparse.errors import ArborparseError, warn
from arborparse.io.chunks import chunks
from arborparse.io.conllu import FORM, MISC, Sentence, at_line_ends, lines_of
from arborparse.io.model_files import ModelFileError, inner, nested
from arborparse.io.plain import characters
from arborparse.text.classifier import Classifier, Trained, candidate_arrays, offsets
from arborparse.text.features import mix
from arborparse.text.multiword import Multiword
from arborparse.text.rules import WHOLE, kept_invisible, visible, whole_kinds, whole_pattern
from arborparse.text.sentences import SentenceSplitter, shift_bias
from arborparse.text.syntax import GAIN, MARGIN_ONLY, SyntaxEnds

VERSION = 6  # of the tokenizer inside a model file (4: the view of sentence ends keeps its
# own parser; 5: the chunks' shapes; 6: the multiword tokens' segmenter, which a reader of 5
# would fail on)
OLDEST = 5
CAPITALS_EVERY = 10  # one training sentence in so many is also read in capitals (`_in_capitals`)
SPACES_AT = 0.01  # the share of training tokens with a space that lets spaces join tokens
SPLITTER_BITS = 20  # of the word-level sentence splitter's weights (whatever `bits`: its
# features are few)
LABELS = ("inside", "token", "sentence")
INSIDE, TOKEN, SENTENCE = range(3)
TEMPLATES = ("bias", "c", "c raw", "c-1", "c+1", "c-2", "c+2", "c+3", "c-1 c", "c c+1",
             "c+1 c+2", "c-1 c c+1", "classes", "class+1", "class-1", "chunk", "chunk end",
             "chunk start", "next chunk", "c next class", "c to end", "previous chunk",
             "chunk next chunk", "shape", "shape next shape")
_COLUMN = {name: i for i, name in enumerate(TEMPLATES)}
# paired with the previous labels by the classifier: the character, its trigram, ...
PAIRS = tuple(_COLUMN[name] for name in ("c", "c-1 c c+1", "c c+1", "chunk end", "classes"))
_CATEGORIES = ("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd",
               "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc",
               "Cf", "Cs", "Co", "Cn")
_CHUNK = re.compile(r"\S+")
SHAPE_RUNS = 4  # of a chunk's runs (of letters, of digits, or one other character) its
# shape keeps, counted from its end
SHAPE_TAIL = 96  # of a chunk's last characters its shape reads (a chunk of a script
# without spaces may be a paragraph)
SHAPE_LENGTH = 4  # the longest length of a run its shape tells apart
_LETTERS, _RUNS = {"a", "A"}, {"a", "A", "9"}
BATCH_CHARACTERS = 1 << 13  # of paragraphs split at once in a stream (`iter_tokenize`)
UNSEEN_SHARE = 0.02  # of a text's first batch in characters training never had: a warning
UNSEEN_LEAST = 5  # ... and at least so many of them (not a stray symbol in a line)
UNSEEN_TIMES = 5  # ... or so many times the share of the training text's last tenth new to
# the nine tenths before it, where that is more (scripts of thousands of characters)
TOKEN_SENTENCES = 256  # of pre-tokenized sentences split at once (`split_tokens`)


@dataclass
class Token:
    """A token of raw text: its characters, whether whitespace follows, its words (a
    multiword token has several), where it starts and ends in its paragraph (the
    characters from `start` to `end`, invisible ones dropped, are `form`)."""

    form: str
    space_after: bool
    words: tuple[str, ...]
    start: int
    end: int


class _Canonical(dict):
    """A `str.translate` table, filled as characters come: each character to the one Unicode
    says it is, where that is one other character (a canonical singleton: the Greek
    question mark U+037E is ';', the ano teleia U+0387 '·', the ohm sign 'Ω', a CJK
    compatibility ideograph its unified one, a Greek letter with oxia the one with tonos),
    else to itself: text typed either way is read alike."""

    def __missing__(self, code: int) -> int:
        found = unicodedata.normalize("NFC", chr(code))
        self[code] = ord(found) if len(found) == 1 else code
        return self[code]


_CANONICAL = _Canonical()


def _class(c: str) -> int:
    return len(_CATEGORIES) if c.isspace() else _CATEGORIES.index(unicodedata.category(c))


def _shape(chunk: str) -> int:
    """A hash of the shape of a chunk's end (its last `SHAPE_TAIL` characters): its last
    `SHAPE_RUNS` runs, each run of upper case letters (``A``), of other letters (``a``) or
    of digits (``9``) as its kind and length (up to `SHAPE_LENGTH`), any other character
    as itself. A combining mark is part of the letter before it (a Tamil vowel sign or
    virama, an accent written apart), else a letter. ``U.N.`` is ``A1.A1.``, ``ஐ.நா.`` and
    ``டி.வி.`` ``a1.a1.``, ``டி.எம்.`` ``a1.a2.``, ``1995.`` ``94.``: what an abbreviation
    or a number looks like where the treebank never wrote it."""
    return _tail_shape(chunk[-SHAPE_TAIL:])


@functools.lru_cache(maxsize=1 << 16)
def _tail_shape(tail: str) -> int:
    runs = []
    for c in tail:
        if c.isupper():
            kind = "A"
        elif c.isalpha():
            kind = "a"
        elif c.isdigit():
            kind = "9"
        elif unicodedata.category(c)[0] == "M":
            if runs and runs[-1][0] in _LETTERS:  # part of the letter before it
                continue
            kind = "a"
        else:
            kind = c
        if runs and kind in _RUNS and runs[-1][0] == kind:
            runs[-1][1] += 1
        else:
            runs.append([kind, 1])
    return zlib.crc32("".join(kind + str(min(n, SHAPE_LENGTH)) if kind in _RUNS else kind
                              for kind, n in runs[-SHAPE_RUNS:]).encode("utf-8"))


_RUN = re.compile(r"\s\s")
_SPACES = re.compile(r"\s+")
# every whitespace character (str.isspace, as the pattern's \s): none lies above U+3000
_SPACE_CODES = np.array([c for c in range(0x3001) if chr(c).isspace()], dtype=np.uint32)


def char_features(texts: list[str], apart: bool = True, canonical: bool = True
                  ) -> tuple[list[np.ndarray], np.ndarray]:
    """(positions, X): for each text, the positions of its characters that are not
    whitespace; their static features, text after text, (all those characters,
    len(TEMPLATES)) uint32 hashes. Each text's features read nothing beyond it (the texts
    are read as one string, a space between them, and what a feature would see of the next
    or the previous text is what it sees beyond a text's ends).

    A text is read as the treebanks' texts write a sentence within a paragraph: a run of
    whitespace as one space (a line end of CR LF, a line's indent or two spaces after a
    full stop leave the features as they are), and, with `apart` (a treebank that writes
    whitespace between its sentences: `Tokenizer.apart`), a space before and after it (a
    treebank has few paragraph ends, none where it marks no paragraph: one-sentence texts
    kept their last word and full stop as one token). With `canonical`, a character is read
    as the one Unicode says it is (`_Canonical`: the Greek question mark as ';')."""
    given = {}  # the positions of the characters that are not whitespace, as given
    read, shift = [], []
    try:
        for j, text in enumerate(texts):
            if _RUN.search(text):
                codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
                given[j] = np.flatnonzero(~np.isin(codes, _SPACE_CODES))
                text = _SPACES.sub(" ", text)
            shift.append(int(apart and not text[:1].isspace()))
            read.append(" " * shift[-1] + text +
                        ("" if not apart or text[-1:].isspace() else " "))
        positions, X = _char_features(read, canonical)
    except UnicodeEncodeError:  # only a str made in memory holds one: refused in one line
        for text in texts:
            characters(text, f"the paragraph {text[:30]!r}")
        raise
    return [given[j] if j in given else where - shift[j]
            for j, where in enumerate(positions)], X


def _char_features(texts: list[str], canonical: bool) -> tuple[list[np.ndarray], np.ndarray]:
    """`char_features` of texts as they are read (without runs of whitespace)."""
    joined = " ".join(texts)
    if canonical:  # one character for one, whitespace for whitespace: nothing moves
        joined = joined.translate(_CANONICAL)
    n = len(joined)
    raw = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    lengths = np.array([len(t) for t in texts], dtype=np.int64)
    begin = np.cumsum(lengths + 1) - lengths - 1  # where each text starts in `joined`
    text = np.repeat(np.arange(len(texts)), lengths + 1)[:n]  # the text of each character
    here = np.arange(n) - begin[text]  # its place in its text
    size = lengths[text]
    # each distinct character's lowercased code (all whitespace a space) and class, then
    # every character's, looked up
    distinct, which = np.unique(raw, return_inverse=True)
    kinds = [(32 if c.isspace() else ord(c.lower()) if len(c.lower()) == 1 else ord(c),
              _class(c)) for c in map(chr, distinct.tolist())]
    low = np.array([k[0] for k in kinds], dtype=np.uint64).reshape(-1)[which]
    cls = np.array([k[1] for k in kinds], dtype=np.uint64).reshape(-1)[which]
    between = here == size  # the spaces put between the texts
    space = (cls == len(_CATEGORIES)) | between
    # the chunk of every character (-1 outside one), where it starts and ends, the
    # chunks before and after it in its text
    found = [(m.start(), m.end(), zlib.crc32(m.group().lower().encode("utf-8")),
              _shape(m.group())) for m in _CHUNK.finditer(joined)]
    first, last, hashes, shapes = (
        np.array(column, dtype=dtype).reshape(-1) for column, dtype in
        zip(zip(*found) if found else ((), (), (), ()),
            (np.int64, np.int64, np.uint64, np.uint64)))
    width = last - first
    chunk = np.full(n, -1, dtype=np.int64)
    chunk[np.repeat(first - np.cumsum(width) + width, width) + np.arange(width.sum())] = \
        np.repeat(np.arange(len(found)), width)
    inside = chunk >= 0
    k = chunk[inside]
    of_text = text[first]  # each chunk's text
    before = np.maximum(k - 1, 0)
    after = np.minimum(k + 1, len(found) - 1)
    has_before = (k > 0) & (of_text[before] == of_text[k])
    has_next = (k + 1 < len(found)) & (of_text[after] == of_text[k])
    chunk_hash = np.zeros(n, dtype=np.uint64)
    start = np.zeros(n, dtype=np.int64)
    end = np.zeros(n, dtype=np.int64)
    following = np.zeros(n, dtype=np.uint64)
    previous = np.zeros(n, dtype=np.uint64)
    next_class = np.full(n, len(_CATEGORIES) + 1, dtype=np.uint64)
    shape = np.zeros(n, dtype=np.uint64)
    next_shape = np.zeros(n, dtype=np.uint64)
    chunk_hash[inside], start[inside], end[inside] = hashes[k], first[k], last[k]
    shape[inside] = shapes[k]
    next_shape[inside] = np.where(has_next, shapes[after], 0)
    previous[inside] = np.where(has_before, hashes[before], 0)
    following[inside] = np.where(has_next, hashes[after], 0)
    next_class[inside] = np.where(has_next, cls[first[after]], len(_CATEGORIES) + 1)

    def at(values, k, outside):
        """values[i + k] for every character i, `outside` beyond its text."""
        out = np.full(n, outside, dtype=np.uint64)
        if abs(k) < n:
            if k >= 0:
                out[:n - k] = values[k:]
            else:
                out[-k:] = values[:n + k]
        out[(here + k < 0) | (here + k >= size)] = outside
        return out

    c, c1, c2, c_1 = low, at(low, 1, 1), at(low, 2, 4), at(low, -1, 2)
    k0, k1, k_1 = cls, at(cls, 1, 99), at(cls, -1, 98)
    to_end = np.minimum(end - np.arange(n) - 1, 3).astype(np.uint64)
    from_start = np.minimum(np.arange(n) - start, 3).astype(np.uint64)
    columns = {
        "bias": (np.zeros(n, dtype=np.uint64),), "c": (c,), "c raw": (raw,), "c-1": (c_1,),
        "c+1": (c1,), "c-2": (at(low, -2, 3),), "c+2": (c2,),
        "c+3": (at(low, 3, 5),), "c-1 c": (c_1, c), "c c+1": (c, c1),
        "c+1 c+2": (c1, c2), "c-1 c c+1": (c_1, c, c1),
        "classes": (k_1, k0, k1, at(cls, 2, 97)), "class+1": (k1,), "class-1": (k_1,),
        "chunk": (chunk_hash,), "chunk end": (chunk_hash, to_end),
        "chunk start": (chunk_hash, from_start), "next chunk": (following, to_end),
        "c next class": (c, next_class, to_end), "c to end": (c, to_end),
        "previous chunk": (previous, to_end), "chunk next chunk": (chunk_hash, following, to_end),
        "shape": (shape, to_end), "shape next shape": (shape, next_shape, to_end)}
    kept = np.flatnonzero(~space)
    X = mix(100, [columns[name] for name in TEMPLATES])[kept]
    bounds = np.searchsorted(kept, np.append(begin, n))
    return [kept[bounds[j]:bounds[j + 1]] - begin[j] for j in range(len(texts))], X


def _candidates(positions: np.ndarray, one_sentence: bool = False,
                spans: list[tuple[int, int]] = (), joinable: np.ndarray | None = None
                ) -> list[list[int]]:
    """The labels each character of a paragraph may take: one before whitespace ends a
    token (unless `joinable`: before a single space, it may also be inside), the last one
    its sentence (the only one, with `one_sentence`); each span (start, end: a string kept
    whole, without whitespace) is one token."""
    ends = np.zeros(len(positions), dtype=bool)
    ends[:-1] = positions[:-1] + 1 != positions[1:]
    if joinable is not None:
        ends &= ~joinable
    inner = [INSIDE, TOKEN] if one_sentence else [INSIDE, TOKEN, SENTENCE]
    lists = [inner[1:] if e else inner for e in ends.tolist()]
    if lists:
        lists[-1] = [SENTENCE]
    for a, b in spans:
        k = int(np.searchsorted(positions, a))  # the span's first character
        last = k + b - a - 1
        lists[k:last] = [[INSIDE]] * (b - a - 1)
        lists[last] = [label for label in lists[last] if label != INSIDE]
        if k and positions[k - 1] == a - 1:  # a character right before it ends a token
            lists[k - 1] = [label for label in lists[k - 1] if label != INSIDE]
    return lists


def _tokens(sentence: Sentence) -> list[tuple[str, bool, tuple[str, ...]]]:
    """The sentence's tokens: (form, space after, words)."""
    forms = sentence.forms
    return [(sentence.rows[r][FORM], "SpaceAfter=No" not in sentence.rows[r][MISC].split("|"),
             tuple(forms[m - 1] for m in words)) for r, words in sentence.tokens()]


def token_words(sentences: Iterable[Sentence]) -> list[list[tuple[str, tuple[str, ...]]]]:
    """Each sentence's tokens as (form, its words), as `Multiword` learns from them."""
    return [[(form, words) for form, _, words in _tokens(s)] for s in sentences]


def grouped(sentences: Iterable[Sentence]) -> Iterator[list[Sentence]]:
    """The treebank's sentences by paragraph (``# newpar`` and ``# newdoc`` open one; a
    treebank without them is one paragraph)."""
    group = []
    for s in sentences:
        if group and any(c.startswith(("# newpar", "# newdoc")) for c in s.comments):
            yield group
            group = []
        group.append(s)
    if group:
        yield group


def paragraphs(sentences: Iterable[Sentence]) -> list[tuple[str, np.ndarray]]:
    """The treebank's text as paragraphs, each with the label of every character
    (whitespace: -1)."""
    out = []
    for group in grouped(sentences):
        text, labels = [], []
        for s in group:
            tokens = _tokens(s)
            for k, (form, space, _) in enumerate(tokens):
                text.append(form)
                labels += [INSIDE] * (len(form) - 1) + [SENTENCE if k == len(tokens) - 1
                                                        else TOKEN]
                if space:
                    text.append(" ")
                    labels.append(-1)
        out.append(("".join(text), np.array(labels, dtype=np.int64)))
    # without the whitespace after their last token, as `split` reads paragraphs
    return [(t.rstrip(), y[:len(t.rstrip())]) for t, y in out]


def _in_capitals(data: list[tuple[str, np.ndarray]], apart: bool
                 ) -> list[tuple[str, np.ndarray]]:
    """One sentence in `CAPITALS_EVERY` of the paragraphs (`paragraphs`), in capitals (one
    character for one), as one more paragraph (none where capitals change nothing, as in a
    script without them): treebanks hold few words in capitals, and a tokenizer trained
    on them alone cut Welsh *CYSGU* into *CYSG* *U* and every *GYMRU* in two."""
    pieces, labels, k = [], [], 0
    for text, y in data:
        start = 0
        for end in np.flatnonzero(y == SENTENCE).tolist():
            k += 1
            if k % CAPITALS_EVERY == 0:  # the others are not written again
                sentence = text[start:end + 1]
                lead = len(sentence) - len(sentence.lstrip())
                upper = "".join(c.upper() if len(c.upper()) == 1 else c
                                for c in sentence[lead:])
                if upper != sentence[lead:]:
                    pieces.append(upper)
                    labels.append(y[start + lead:end + 1])
            start = end + 1
    if not pieces:
        return []
    gap = " " if apart else ""  # between sentences, as the treebank writes them
    space = np.full(len(gap), -1, dtype=np.int64)  # its label: whitespace
    joined = [labels[0]]
    for y in labels[1:]:
        joined += [space, y]
    return [(gap.join(pieces), np.concatenate(joined))]


def token_paragraphs(sentences: Iterable[Sentence]) -> tuple[list[list[str]], list[np.ndarray]]:
    """The treebank's tokens by paragraph, and whether a sentence ends at each."""
    forms, ends = [], []
    for group in grouped(sentences):
        tokens = [[form for form, _, _ in _tokens(s)] for s in group]
        forms.append([form for t in tokens for form in t])
        ends.append(np.array([k == len(t) - 1 for t in tokens for k in range(len(t))]))
    return forms, ends


def _keep_marks(labels: np.ndarray, text: str, where: np.ndarray) -> None:
    """No token starts with a combining mark (Unicode M*: an accent written apart, an Indic
    vowel sign) right after a character: a token or sentence end predicted before the mark
    moves onto it, in place."""
    marks = {c for c in set(text) if unicodedata.category(c)[0] == "M"}
    if not marks:
        return
    at = np.array([i for i, c in enumerate(text) if c in marks and i], dtype=np.int64)
    k = np.searchsorted(where, at)  # the marks' labels (marks are never whitespace)
    joined = where[k - 1] == at - 1  # right after a character, not after whitespace
    for mark, before in zip(k[joined].tolist(), (k[joined] - 1).tolist()):
        labels[mark] = max(labels[mark], labels[before])
        labels[before] = INSIDE


def _resplit(labels: np.ndarray, text: str, where: np.ndarray, ends) -> np.ndarray:
    """A paragraph's character labels with its sentence ends chosen by `ends(token forms)`
    (a boolean array) among the token ends the labels give (`where`: the positions of the
    labeled characters)."""
    last = np.flatnonzero(labels != INSIDE)  # the last character of each token
    first = np.concatenate([[0], last[:-1] + 1])
    forms = [text[where[a]:where[b] + 1] for a, b in zip(first.tolist(), last.tolist())]
    out = labels.copy()
    out[last] = np.where(ends(forms), SENTENCE, TOKEN)
    return out


def _token_spans(paragraph: str, text: str, place, lead: int, spans, where: np.ndarray,
                 labels: np.ndarray) -> list[list[tuple[str, bool, int, int, bool]]]:
    """A paragraph's sentences as (form, space after, start, end, kept whole) of each
    token, from the labels of its visible characters (`Tokenizer.split_many`: `text` the
    visible characters, stripped of the `lead` whitespace before them; text[i] is
    paragraph[place[lead + i]])."""
    kept = {a for a, _ in spans}  # where the strings kept whole start
    sentences, tokens, start = [], [], None
    for i, label in zip(where.tolist(), labels.tolist()):
        start = i if start is None else start
        if label == INSIDE:
            continue
        # the paragraph's end is whitespace too, as in the treebanks
        space = i + 1 == len(text) or text[i + 1].isspace()
        end = place[lead + i + 1] if lead + i + 1 < len(place) else len(paragraph)
        tokens.append((text[start:i + 1], space, place[lead + start], end, start in kept))
        start = None
        if label == SENTENCE:
            sentences.append(tokens)
            tokens = []
    return sentences


def _alphabet(texts: list[str]) -> tuple[str, float]:
    """The letters and marks of the training texts (lower case), and the share of the last
    tenth's that the nine tenths before it lack: how often a text of the language meets a
    letter new to the model (near 0 for an alphabet, some percent for Chinese)."""
    letters = [c.lower() for t in texts for c in t if unicodedata.category(c)[0] in "LM"]
    cut = len(letters) - len(letters) // 10
    before, last = set(letters[:cut]), letters[cut:]
    rate = sum(c not in before for c in last) / len(last) if last else 0.0
    return "".join(sorted(set(letters))), round(rate, 6)


def _apart(data: list[tuple[str, np.ndarray]]) -> bool:
    """Whether most sentence ends within the training paragraphs (text, labels) are
    followed by whitespace; False where no paragraph holds two sentences."""
    spaced = ends = 0
    for text, labels in data:
        inside = np.flatnonzero(labels[:-1] == SENTENCE)
        ends += len(inside)
        spaced += sum(text[i + 1].isspace() for i in inside.tolist())
    return spaced > ends / 2


class Tokenizer(Trained):
    """Sentence splitter and tokenizer.

    Parameters
    ----------
    epochs : passes over the training text
    bits : log2 of the hashed weight vector

    Attributes
    ----------
    keep : str
        The invisible characters the training treebank's tokens hold, kept in the text
        (`arborparse.text.rules`); the others are dropped.
    whole : tuple of str
        The kinds of strings kept whole (`arborparse.text.rules.WHOLE`) that the training
        treebank keeps whole too: the rules applied.
    apart : bool
        Whether the training treebank writes whitespace between the sentences of a
        paragraph (most do; Japanese and Chinese do not): then a text is read with a space
        before and after it (`char_features`' `apart`).
    """

    kind = "tokenizer"
    keep = ""
    whole = tuple(WHOLE)
    splitter = None
    syntax = None
    spaces = False
    apart = True  # (files written before it: their texts are read as by most treebanks)
    canonical = False  # (files written before it read every character as it is typed)
    alphabet = None  # the training text's letters and marks, lower case (`_warn_unseen`)
    unseen_rate = 0.0  # the share of its last tenth new to the rest (`_alphabet`)

    def _arrays(self, texts: list[str], one_sentence: bool = False, spans=None):
        """(X, bounds, cptr, cand, positions) of paragraphs for the classifier
        (`one_sentence`: each paragraph is one; `spans`: for each, its strings kept whole)."""
        positions, X = char_features(texts, self.apart, self.canonical)
        return (X, offsets([len(w) for w in positions]),
                *self._label_candidates(texts, positions, one_sentence, spans), positions)

    def _label_candidates(self, texts: list[str], positions: list[np.ndarray],
                          one_sentence: bool = False, spans=None):
        """(cptr, cand): the labels each character of the paragraphs may take."""
        lists = []
        for j, (text, where) in enumerate(zip(texts, positions)):
            joinable = None
            if self.spaces:  # before one space, with a character after it
                after = np.append(where[1:], -1)
                joinable = (after == where + 2) & np.array(
                    [text[i + 1:i + 2] == " " for i in where.tolist()], dtype=bool)
            lists += _candidates(where, one_sentence, spans[j] if spans else (), joinable)
        return candidate_arrays(lists)

    def fit(self, train: list[Sentence], dev: list[Sentence] | None = None) -> Tokenizer:
        """Learn from the text of `train`; keep the epoch whose token and sentence
        boundaries are best on `dev` (F1, averaged), and the word-level sentence splitter
        if the boundaries of `dev` come out better with it (its sentence ends among the
        tokens the characters give alone)."""
        data = paragraphs(train)
        if not data:
            raise ArborparseError("the training data holds no sentences")
        self.splitter = self.syntax = None
        tokens = token_words(train)
        self.multiword = Multiword(seed=self.seed).fit(tokens,
                                                       token_words(dev) if dev else None)
        self.keep = kept_invisible(t for t, _ in data)
        self.whole = whole_kinds((t, labels >= TOKEN) for t, labels in data)
        forms = [form for t in tokens for form, _ in t]
        self.spaces = sum(" " in form for form in forms) >= SPACES_AT * len(forms)
        self.apart = _apart(data)
        self.alphabet, self.unseen_rate = _alphabet([t for t, _ in data])
        self.canonical = True
        read = data + _in_capitals(data, self.apart)
        X, bounds, cptr, cand, positions = self._arrays([t for t, _ in read])
        gold = np.concatenate([labels[p] for (_, labels), p in zip(read, positions)])
        self.classifier = Classifier(list(LABELS), self.bits, pairs=PAIRS)
        score, boundaries = self._dev_scores(dev) if dev else (None, None)
        self.history_ = self.classifier.fit((X, bounds, gold, np.full(len(gold), -1), cptr,
                                             cand), self.epochs, self.seed, score,
                                            self.progress, "tokenizer", "boundary F1")
        if dev:
            self.sentence_bias_ = shift_bias(self.classifier, X[0, 0], SENTENCE,
                                             lambda: score(self.classifier, SENTENCE))
            splitter = SentenceSplitter(self.epochs, SPLITTER_BITS, self.seed, self.progress)
            splitter.fit(*token_paragraphs(train), token_paragraphs(dev))
            characters = boundaries(self.classifier)
            words = boundaries(self.classifier, splitter)
            self.sentence_f1_ = {"characters": characters[1], "words": words[1]}
            # with the splitter the characters give the tokens alone, which may differ:
            # it is kept where the two F1 together come out better
            if sum(words) > sum(characters):
                self.splitter = splitter
        return self

    def _dev_scores(self, dev):
        """(score, boundaries) on `dev`: `score(classifier, only=None)`, the mean of the
        token and sentence boundaries' F1 (or the F1 of `only`), by which the epoch and the
        sentence ends' bias are chosen; `boundaries(classifier, splitter=None)`, the token
        and the sentence boundaries' F1, with `splitter` of the tokens the characters give
        alone and the sentence ends it chooses among them (as `split_many` does)."""
        data = paragraphs(dev)
        texts = [t for t, _ in data]
        X, bounds, cptr, cand, positions = self._arrays(texts)
        tokens_cptr, tokens_cand = self._label_candidates(texts, positions, one_sentence=True)
        gold = np.concatenate([labels[p] for (_, labels), p in zip(data, positions)])
        given = np.full(len(gold), -1)

        def f1(predicted, label):
            p, g = predicted >= label, gold >= label
            return 200.0 * (p & g).sum() / max(p.sum() + g.sum(), 1)

        def boundaries(classifier, splitter=None):
            if splitter is None:
                predicted = classifier.predict(X, bounds, given, cptr, cand)
            else:
                tokens = classifier.predict(X, bounds, given, tokens_cptr, tokens_cand)
                predicted = np.concatenate([
                    _resplit(tokens[bounds[j]:bounds[j + 1]], text, positions[j],
                             splitter.ends) for j, text in enumerate(texts)])
            return f1(predicted, TOKEN), f1(predicted, SENTENCE)

        def score(classifier, only=None):
            token, sentence = boundaries(classifier)
            return {None: (token + sentence) / 2, TOKEN: token, SENTENCE: sentence}[only]
        return score, boundaries

    # ------------------------------------------------------------------ tokenizing

    def split(self, paragraph: str, one_sentence: bool = False, crossing=None
              ) -> list[list[Token]]:
        """The sentences of one paragraph, as tokens (their `start` and `end` counted in
        `paragraph`; a token's span runs on over the invisible characters right after
        it); with `one_sentence`, the paragraph is one sentence. `crossing(words)`: the
        parser's expected arcs over the gap after each word (`arborparse.text.syntax`),
        which the sentence ends weigh when `fit_syntax` kept them."""
        return self.split_many([paragraph], one_sentence, crossing)[0]

    def split_many(self, paragraphs: list[str], one_sentence: bool = False, crossing=None
                   ) -> list[list[list[Token]]]:
        """`split` of each paragraph, their characters labeled by one compiled call and
        their multiword tokens split by one more (the same tokens as one paragraph at a
        time: a paragraph's labels and a sentence's words read nothing beyond them)."""
        # (its place among them, paragraph, text, place, lead, spans) of each paragraph with
        # visible characters
        read = []
        pattern = whole_pattern(self.whole)
        for k, paragraph in enumerate(paragraphs):
            text, place = visible(paragraph, self.keep)  # text[i] is paragraph[place[i]]
            lead = len(text) - len(text.lstrip())
            text = text.strip()
            if text:
                read.append((k, paragraph, text, place, lead,
                             [m.span() for m in pattern.finditer(text)] if pattern else []))
        resplit = self.splitter is not None and not one_sentence
        # where the word-level splitter decides the sentence ends, the characters give the
        # tokens alone (a sentence end they would see inside a word would split it)
        X, bounds, cptr, cand, positions = self._arrays(
            [r[2] for r in read], one_sentence or resplit, [r[5] for r in read])
        labels = self.classifier.predict(X, bounds, np.full(len(X), -1), cptr, cand)
        found = []  # each paragraph's sentences: (form, space, start, end, kept whole)
        for j, ((_, paragraph, text, place, lead, spans), where) in enumerate(zip(read,
                                                                                   positions)):
            chosen = labels[bounds[j]:bounds[j + 1]]
            _keep_marks(chosen, text, where)
            if resplit:
                ends = self.splitter.ends
                if self.syntax is not None and crossing is not None:
                    ends = functools.partial(self._syntax_ends, crossing=crossing)
                chosen = _resplit(chosen, text, where, ends)
            found.append(_token_spans(paragraph, text, place, lead, spans, where, chosen))
        words = iter(self.multiword.split([[form for form, *_ in s]
                                           for sentences in found for s in sentences]))
        out: list[list[list[Token]]] = [[] for _ in paragraphs]
        for (k, *_), sentences in zip(read, found):
            out[k] = [[Token(form, space, (form,) if one else w, a, b)
                       for (form, space, a, b, one), w in zip(s, next(words))]
                      for s in sentences]
        return out

    def _token_crossing(self, forms: list[str], crossing) -> np.ndarray:
        """`crossing` of a paragraph's words, at the end of each of its tokens."""
        words = self.multiword.split([forms])[0]
        last = np.cumsum([len(w) for w in words]) - 1
        return crossing([w for ws in words for w in ws])[last]

    def _syntax_ends(self, forms: list[str], crossing) -> np.ndarray:
        return self.syntax.ends(self.splitter.margins(forms),
                                self._token_crossing(forms, crossing))

    def fit_syntax(self, dev: list[Sentence], crossing, parser) -> bool:
        """Fit `SyntaxEnds` on the dev paragraphs' tokens with `crossing` (`parser`'s, a
        `arborparse.text.syntax.window_parser`, through the pipeline's tagger:
        `arborparse.pipeline.Pipeline.crossing`) and keep it, with `parser`, if its
        sentences are better there, by `GAIN` points of F1, than with the word-level
        splitter's margin alone (fitted the same way); True if kept. A tokenizer without
        that splitter keeps nothing."""
        self.syntax = None
        if self.splitter is None:
            return False
        forms, ends = token_paragraphs(dev)
        margins = [self.splitter.margins(f) for f in forms]
        crossings = [self._token_crossing(f, crossing) for f in forms]
        _, alone = SyntaxEnds.fit(margins, crossings, ends, MARGIN_ONLY)
        model, both = SyntaxEnds.fit(margins, crossings, ends)
        self.syntax_f1_ = {"words": alone, "syntax": both}  # dev sentences' F1
        if both >= alone + GAIN:
            self.syntax, model.parser = model, parser
        return self.syntax is not None

    def split_tokens(self, sentences: Iterable[Sentence]) -> Iterator[Sentence]:
        """Pre-tokenized sentences (a word a token, as `arborparse.io.plain.words_sentence`
        makes them) with their multiword tokens split into words as raw text's are (Welsh
        *Roedd* -> *Yr* *oedd*, French *du* -> *de* *le*), `TOKEN_SENTENCES` at a time; a
        sentence without one comes as it was."""
        for chunk in chunks(sentences, TOKEN_SENTENCES):
            for s, words in zip(chunk, self.multiword.split([s.forms for s in chunk])):
                if all(len(w) == 1 for w in words):
                    yield s
                    continue
                rows, word_rows = _rows([Token(form, True, w, 0, 0)
                                         for form, w in zip(s.forms, words)])
                yield Sentence(s.comments, rows, word_rows, np.full(len(word_rows) + 1, -1),
                               s.path, s.line)

    def tokenize(self, text: str, document: str = "", per_line: bool = False,
                 crossing=None) -> list[Sentence]:
        """The sentences of a text (paragraphs separated by blank lines) as CoNLL-U
        sentences without annotation: ``# newdoc`` (first), ``# newpar``, ``# sent_id``,
        ``# text`` (the tokens, whitespace between them made one space), multiword token
        ranges and ``SpaceAfter=No``. With `per_line`, each non-blank line is one sentence
        (never split). `crossing` as in `split`."""
        return list(self.iter_tokenize(lines_of(text), document, per_line,
                                       crossing))

    def iter_tokenize(self, lines: Iterable[str], document: str = "",
                      per_line: bool = False, crossing=None) -> Iterator[Sentence]:
        """`tokenize` over a stream of lines: the paragraphs (`per_line`: the lines) read
        and split in batches (`split_many`), each batch the paragraphs read until they
        make `BATCH_CHARACTERS` characters, the one that passes it included (where the
        lines fail, the paragraphs read before are split and given first). Each
        sentence's `offsets` say where its tokens are in the text the lines make. A line
        ends where a file's would, at a carriage return alone too, however the caller cut
        the text into lines (`at_line_ends`)."""
        count = 0
        for batch in chunks((_lines if per_line else _paragraphs)(at_line_ends(lines)),
                            BATCH_CHARACTERS, lambda paragraph: len(paragraph[1])):
            if count == 0:
                self._warn_unseen("".join(paragraph for _, paragraph, _ in batch))
            split = self.split_many([paragraph for _, paragraph, _ in batch], per_line,
                                    crossing)
            for (where, _, newpar), sentences in zip(batch, split):
                for k, tokens in enumerate(sentences):
                    count += 1
                    sentence = _sentence(tokens, newpar and k == 0, f"{document}{count}",
                                         where)
                    if count == 1:
                        sentence.comments.insert(0, "# newdoc")
                    yield sentence

    def _warn_unseen(self, text: str) -> None:
        """Warn where `UNSEEN_SHARE` or more of the letters and marks of `text` (a stream's
        first batch; `UNSEEN_LEAST` of them at least), or `UNSEEN_TIMES` the share of new
        ones in the training text's last tenth, never occur in the training text, in either
        case (another script, or marks the treebank leaves out: Coptic's supralinear
        strokes), naming the commonest."""
        if self.alphabet is None:
            return
        seen = set(self.alphabet)  # letters and marks: a run of '=' in an e-mail, or a
        # digit, is no sign of another script
        limit = max(UNSEEN_SHARE, UNSEEN_TIMES * self.unseen_rate)

        def unseen_in(text):
            read = [c for c in text if unicodedata.category(c)[0] in "LM"]
            unseen = Counter(c for c in read if c.lower() not in seen)
            share = sum(unseen.values()) / max(len(read), 1)
            return unseen, share, sum(unseen.values()) >= UNSEEN_LEAST and share >= limit

        unseen, share, many = unseen_in(text)
        if many:
            named = ", ".join(f"{c!r} (U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}) "
                              f"×{n}" for c, n in unseen.most_common(3))
            # the same letters composed otherwise (macOS writes Hangul decomposed, NFD)
            form = next((form for form in ("NFC", "NFD") if not unseen_in(
                unicodedata.normalize(form, text))[2]), None)
            warn(f"{100 * share:.1f}% of the text's letters never occur in the "
                 f"model's training text, such as {named}: it reads them as "
                 "unknown; " + (
                     "is the text in the model's language and script, written as its "
                     "treebank writes it?" if form is None else
                     f"the treebank writes the same letters in Unicode's {form} form: "
                     f"normalize the text to it first (unicodedata.normalize('{form}', "
                     f"text) in Python, uconv -x any-{form.lower()} on the command line)"))

    # ------------------------------------------------------------------ model files

    def parts(self) -> tuple[dict, dict]:
        header, arrays = self.multiword.parts()
        out = ({"multiword": header, "keep": self.keep, "whole": list(self.whole),
                "spaces": self.spaces, "apart": self.apart, "canonical": self.canonical,
                "alphabet": self.alphabet, "unseen_rate": self.unseen_rate},
               {"weights": self.classifier.weights, **nested("multiword", arrays)})
        if self.splitter is not None:
            header, arrays = self.splitter.parts()
            out[0]["sentences"] = header
            out[1].update(nested("sentences", arrays))
        if self.syntax is not None:
            header, arrays = self.syntax.parts()
            out[0]["syntax"] = header
            out[1].update(nested("syntax", arrays))
        return out

    @classmethod
    def from_parts(cls, header: dict, arrays: dict, path) -> Tokenizer:
        tokenizer = cls(progress=False)
        try:
            tokenizer.multiword = Multiword.from_parts(header["multiword"],
                                                       inner("multiword", arrays))
            tokenizer.classifier = Classifier(list(LABELS), weights=arrays["weights"],
                                              pairs=PAIRS)
            tokenizer.keep = header["keep"]
            tokenizer.whole = tuple(header["whole"])
            tokenizer.spaces = header["spaces"] is True
            tokenizer.apart = header.get("apart", True)
            tokenizer.canonical = header.get("canonical", False)
            tokenizer.alphabet = header.get("alphabet")  # None in files written before it
            tokenizer.unseen_rate = header.get("unseen_rate", 0.0)
            if tokenizer.alphabet is not None and not isinstance(tokenizer.alphabet, str) or \
                    not isinstance(tokenizer.unseen_rate, (int, float)):
                raise ValueError(f"alphabet {tokenizer.alphabet!r} or unseen_rate "
                                 f"{tokenizer.unseen_rate!r}")
            if not isinstance(tokenizer.apart, bool) or \
                    not isinstance(tokenizer.canonical, bool):
                raise ValueError(f"apart {tokenizer.apart!r} or canonical "
                                 f"{tokenizer.canonical!r}")
            if "sentences" in header:  # kept where it found the dev sentences better
                tokenizer.splitter = SentenceSplitter.from_parts(header["sentences"],
                                                                 inner("sentences", arrays))
            if "syntax" in header:  # kept by fit_syntax
                try:
                    tokenizer.syntax = SyntaxEnds.from_parts(header["syntax"],
                                                             inner("syntax", arrays), path)
                except ArborparseError as e:  # its parser's own complaint
                    raise ModelFileError(f"{path}: the tokenizer's view of sentence ends is "
                                         f"invalid ({str(e).removeprefix(f'{path}: ')})"
                                         ) from e
            if not isinstance(tokenizer.keep, str) or not set(tokenizer.whole) <= set(WHOLE):
                raise ValueError(f"keep {tokenizer.keep!r} or whole {tokenizer.whole!r}")
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ModelFileError(f"{path}: the tokenizer in the model file is invalid "
                                 f"({e})") from e
        return tokenizer


def _paragraphs(lines: Iterable[str]) -> Iterator[tuple[int, str, bool]]:
    """The paragraphs (separated by blank lines) of a stream of lines, one at a time, with
    the character offset where each starts (and True: each opens a paragraph)."""
    current, start, offset = [], 0, 0
    for line in lines:
        if line.strip():
            if not current:
                start = offset
            current.append(line)
        elif current:
            yield start, "".join(current), True
            current = []
        offset += len(line)
    if current:
        yield start, "".join(current), True


def _lines(lines: Iterable[str]) -> Iterator[tuple[int, str, bool]]:
    """The non-blank lines of a stream, with the character offset where each starts and
    whether it opens a paragraph (the first line, and one after blank lines)."""
    offset, newpar = 0, True
    for line in lines:
        if line.strip():
            yield offset, line, newpar
        newpar = not line.strip()
        offset += len(line)


def _rows(tokens: list[Token]) -> tuple[list[list[str]], list[int]]:
    """The CoNLL-U rows of a sentence's tokens (a multiword token's range, then its words)
    and the rows of its words."""
    rows, word_rows, k = [], [], 1
    for token in tokens:
        misc = "_" if token.space_after else "SpaceAfter=No"
        if len(token.words) > 1:
            rows.append([f"{k}-{k + len(token.words) - 1}", token.form, *["_"] * 7, misc])
            for w in token.words:
                word_rows.append(len(rows))
                rows.append([str(k), w, *["_"] * 8])
                k += 1
        else:
            word_rows.append(len(rows))
            rows.append([str(k), token.form, *["_"] * 7, misc])
            k += 1
    return rows, word_rows


def _sentence(tokens: list[Token], newpar: bool, sent_id: str, where: int = 0) -> Sentence:
    rows, word_rows = _rows(tokens)
    text = "".join(t.form + (" " if t.space_after else "") for t in tokens).strip()
    comments = (["# newpar"] if newpar else []) + [f"# sent_id = {sent_id}",
                                                   f"# text = {text}"]
    offsets = np.array([(where + t.start, where + t.end) for t in tokens],
                       dtype=np.int64).reshape(-1, 2)
    return Sentence(comments, rows, word_rows, np.full(len(word_rows) + 1, -1),
                    offsets=offsets)
