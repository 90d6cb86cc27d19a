"""What the tokenizer (`arborparse.text.tokenizer`) settles before its classifier, the same
in every language, each rule kept only where the training treebank agrees.

Invisible characters are no part of words: control characters (Unicode category Cc) that
are not whitespace, and format characters (Cf: the zero-width space U+200B, the joiners
U+200C and U+200D, the byte-order mark U+FEFF, the word joiner U+2060, the soft hyphen,
directional marks, ...) but the prepended concatenation marks, which are drawn. They are
dropped from the text before it is tokenized, unless the treebank's tokens hold them
(Persian writes U+200C inside words): `kept_invisible` finds which.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence

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


def visible(text: str, keep: str = "") -> tuple[str, Sequence[int]]:
    """`text` without its invisible characters (but those in `keep`), and where each of
    its characters is in `text`."""
    drop = {c for c in set(text) if invisible(c) and c not in keep}
    if not drop:
        return text, range(len(text))
    where = [i for i, c in enumerate(text) if c not in drop]
    return "".join(text[i] for i in where), where
