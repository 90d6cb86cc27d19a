"""What the tokenizer (`arborparse.text.tokenizer`) settles before its classifier, the same
in every language, each rule kept only where the training treebank agrees.

Strings kept whole (`WHOLE`): URLs and e-mail addresses (of ASCII characters, so that one
glued to a word of another script, as Korean's particles and Chinese's words are, ends
there), file paths, numbers with separators
(``https://example.com/a?b=c``, ``x.y@z.org``, ``/usr/local/bin``, ``3,000.50``, ``12:30``,
Arabic script's ``۱۲۳٫۴۵`` and ``۱۲۳٬۴۵۶``) and numbers joined by slashes (dates and
fractions: ``12/05/2020``, ``۱۳۹۹/۰۵/۱۲``, ``1/2``) and emoji (a flag, a pictograph with
its skin tone, pictographs joined by zero-width joiners: ``🇰🇷``, ``👍🏽``, ``👨‍👩‍👧``) are
one token each, never cut inside nor glued to their neighbours, unless the treebank does
otherwise: `whole_kinds` keeps a
kind where the treebank has no such string, or keeps at least half of them as tokens of
their own (English-EWT keeps them; Turkish-IMST's one
number with a separator carries its suffix, ``9.8'lik``, so numbers are left to the
classifier there).

Invisible characters are no part of words: control characters (Unicode category Cc) that
are not whitespace, and format characters (Cf: the zero-width space U+200B, the joiners
U+200C and U+200D, the byte-order mark U+FEFF, the word joiner U+2060, the soft hyphen,
directional marks, ...) but the prepended concatenation marks, which are drawn. They are
dropped from the text before it is tokenized, unless the treebank's tokens hold them
(Persian writes U+200C inside words): `kept_invisible` finds which; even then one is kept
only inside a word, its nearest visible neighbours letters, marks or digits (a stray U+200C
between spaces, before a full stop, or alone, is no word of its own). A zero-width space
dropped so parts the words on either side, as a space would (``The\u200bdog`` is two
words; Thai and Khmer texts mark word ends with it); the others join them (the word joiner
and the soft hyphen mean just that; a control character in a word is noise). A zero-width
joiner between two pictographs, and the tag characters after one (U+E0020 to U+E007F, as
in the flag of Scotland), stay, as part of the emoji they make.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

import numpy as np

# an emoji's pictograph, with what may follow it: a variation selector, a skin tone, tags
_PICTOGRAPH = (r"[\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff]"
               r"[\ufe0f\U0001f3fb-\U0001f3ff\U000e0020-\U000e007f]*")

# kind: pattern (case-insensitive), tried in this order where several begin at one place
WHOLE = {
    # ASCII alone: a letter of another script ends it (``(http://x.kr)에서``, ``见x.cn获取``)
    # (printable ASCII but "<>, the last character none of '.,;:!?)]} either)
    "url": r"(?<![a-z0-9_])(?:[a-z][a-z0-9+.-]*://|www\.|mailto:)[!#-;=?-~]*"
           r"[#-&(*+\-/-9=@-\\^-|~]",
    "email": r"(?<![a-z0-9_.%+-])[a-z0-9_.%+-]*[a-z0-9_]@[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)+",
    # after ~, . or .., or a drive (C:), one name or more; else two or more: /usr/local
    "path": r"(?<![\w/\\.~])(?:(?:~|\.\.?|[a-z]:)(?:[/\\][\w.+-]*\w)+|(?:[/\\][\w.+-]*\w){2,})"
            r"[/\\]?",
    # 3,000.50 12:30 1.2.3, and with the Arabic decimal and thousands separators
    "number": r"(?<![\w.,:\u066b\u066c])\d+(?:[.,:\u066b\u066c]\d+)+"
              r"(?![.,:\u066b\u066c]?\w)",
    "slashed": r"(?<![\w/.,:])\d+(?:/\d+)+(?!/?\w)",  # 12/05/2020 1/2
    # a flag (two regional indicators), a keycap (1️⃣), or pictographs joined by zero-width
    # joiners, each with its variation selector, skin tone or tag characters: 🇰🇷 👍🏽 👨‍👩‍👧
    "emoji": rf"[\U0001f1e6-\U0001f1ff]{{2}}|[0-9#*]\ufe0f?\u20e3|{_PICTOGRAPH}"
             rf"(?:\u200d{_PICTOGRAPH})*",
}

# Cf, but drawn: the prepended concatenation marks (Arabic number signs and their kin)
_DRAWN = frozenset("\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2"
                   "\U000110bd\U000110cd")


def invisible(c: str) -> bool:
    """Whether the character `c` is invisible (see the module docstring)."""
    category = unicodedata.category(c)
    return category == "Cf" and c not in _DRAWN or category == "Cc" and not c.isspace()


def kept_invisible(texts: Iterable[str]) -> str:
    """The invisible characters that occur in `texts` (a treebank's), sorted."""
    return "".join(sorted({c for text in texts for c in set(text) if invisible(c)}))


ZWJ, ZWSP = "\u200d", "\u200b"


def _pictograph(c: str) -> bool:
    """An emoji's part: a symbol (So), the emoji variation selector or a skin tone."""
    return unicodedata.category(c) == "So" or c == "\ufe0f" or \
        "\U0001f3fb" <= c <= "\U0001f3ff"


def _tag(c: str) -> bool:
    return "\U000e0020" <= c <= "\U000e007f"


def _in_emoji(text: str, i: int) -> bool:
    """Whether the invisible `text[i]` is part of an emoji: a joiner between two
    pictographs, or a tag character after a pictograph or another tag character."""
    c = text[i]
    if c == ZWJ:
        return 0 < i < len(text) - 1 and _pictograph(text[i - 1]) and _pictograph(text[i + 1])
    return _tag(c) and i > 0 and (_pictograph(text[i - 1]) or _tag(text[i - 1]))


def _inside_word(text: str, i: int) -> bool:
    """Whether the nearest visible characters on each side of `text[i]` (past any other
    invisible one but a zero-width space, which parts words) are letters, marks or
    digits: `text[i]` is inside a word."""
    def wordy(step: int) -> bool:
        j = i + step
        while 0 <= j < len(text) and invisible(text[j]) and text[j] != ZWSP:
            j += step
        return 0 <= j < len(text) and (text[j].isalnum() or
                                       unicodedata.category(text[j])[0] == "M")
    return wordy(-1) and wordy(1)


def visible(text: str, keep: str = "") -> tuple[str, Sequence[int]]:
    """`text` without its invisible characters (but those in `keep` inside a word, and
    those that are part of an emoji: 👨‍👩‍👧), each zero-width space it drops made a
    space, and where each of its characters is in `text` (see the module docstring)."""
    hidden = {c for c in set(text) if invisible(c)}
    if not hidden:
        return text, range(len(text))
    kept = [c in keep and _inside_word(text, i) if c in hidden else True
            for i, c in enumerate(text)]
    where = [i for i, c in enumerate(text) if kept[i] or c == ZWSP or _in_emoji(text, i)]
    return "".join(" " if text[i] == ZWSP and not kept[i] else text[i] for i in where), where


@lru_cache(maxsize=None)
def whole_pattern(kinds: tuple[str, ...]) -> re.Pattern | None:
    """One pattern for the strings of `kinds` (`WHOLE`'s keys; the match's `lastgroup`
    names its kind); None for no kind."""
    if not kinds:
        return None
    return re.compile("|".join(f"(?P<{kind}>{WHOLE[kind]})" for kind in WHOLE
                               if kind in kinds), re.IGNORECASE)


def whole_kinds(texts: Iterable[tuple[str, np.ndarray]]) -> tuple[str, ...]:
    """The kinds of `WHOLE` a treebank keeps as tokens of their own: its texts, each with
    where its tokens end (``ends[i]``: a token ends at character i), have no string of
    the kind, or hold at least half of them as one token each."""
    pattern = whole_pattern(tuple(WHOLE))
    found, whole = Counter(), Counter()
    for text, ends in texts:
        for match in pattern.finditer(text):
            a, b = match.span()
            found[match.lastgroup] += 1
            whole[match.lastgroup] += bool(ends[b - 1] and not ends[a:b - 1].any() and (
                a == 0 or ends[a - 1] or text[a - 1].isspace()))
    return tuple(kind for kind in WHOLE if 2 * whole[kind] >= found[kind])
