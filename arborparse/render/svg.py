"""One dependency tree as SVG: words in a row (UPOS under each), arcs above them from head to
dependent with their labels, the root's arc a vertical line.

Layout is deterministic: a word's box is as wide as its longest text at a fixed width per
character; an arc is lifted one level above every shorter arc whose span overlaps its own,
so nested and crossing (non-projective) arcs never share a height with a longer one, and
higher still while its label (at the top of the arc, as wide as its characters at the
widest a character of the labels' font takes) would meet the label of an arc at that
level, so that no two labels overlap. A
right-to-left sentence (its first strong character Hebrew, Arabic, Persian, ...) is laid
out from the right. Long sentences keep their size: the SVG is as wide as its words (the page scrolls).
With marginals (``HeadProb`` in MISC, from ``parse --marginals``), each arc's opacity is its
probability, and arcs below `threshold` are drawn dashed in another colour and marked
``unsure``. Every word and arc carries its numbers as ``data-`` attributes.
"""

from __future__ import annotations

import html
import re
import unicodedata

from arborparse.io.conllu import MISC, Sentence

CHAR = 8.4  # px per character of the 14px font (a wide one, Hangul's or Han's, takes two)
GAP = 18  # px between word boxes
LEVEL = 34  # px per arc level
WORD_Y = 28  # px from the arcs' feet to the words' baseline
PAD = 12
LABEL_CHAR = 7.2  # px per character of the 11px labels, at the most ("nummod" in DejaVu Sans)
LABEL_GAP = 4  # px at least between two labels side by side
SURE, UNSURE = "#2c3e50", "#c0392b"


def columns(text: str) -> int:
    """How many character widths `text` takes: two for a wide character (East Asian Wide or
    Fullwidth: Hangul, Han, kana), none for a combining mark, one for the others."""
    return sum(0 if unicodedata.category(c) in ("Mn", "Me") else
               2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def right_to_left(words: list[str]) -> bool:
    """True when the first strong character of `words` is right-to-left: a paragraph's
    direction as the Unicode bidirectional algorithm finds it (rules P2 and P3), so that a
    Hebrew or Persian sentence quoting a URL or an English name still reads from the
    right."""
    for word in words:
        for c in word:
            kind = unicodedata.bidirectional(c)
            if kind in ("R", "AL", "L"):
                return kind != "L"
    return False


def head_probabilities(sentence: Sentence) -> list[float | None]:
    """Each word's ``HeadProb`` from MISC, None where there is none."""
    out = []
    for misc in sentence.column(MISC):
        value = None
        for item in misc.split("|"):
            if item.startswith("HeadProb="):
                try:
                    value = float(item[9:])
                except ValueError:
                    value = None
        out.append(value)
    return out


def levels(heads, labels: dict[int, tuple[float, float]] | None = None) -> dict[int, int]:
    """Dependent -> the level of its arc (roots excluded): one above every shorter arc
    whose span overlaps its own, and higher while its label would meet the label of an arc
    already at that level (`labels`: dependent -> the left and right x of its arc's label;
    None: labels take no room)."""
    arcs = sorted(((abs(h - m), min(h, m), max(h, m), m)
                   for m, h in enumerate(heads) if m > 0 and h > 0))
    placed: list[tuple[int, int, int]] = []  # (left, right, level)
    out = {}
    for _, left, right, m in arcs:
        level = 1 + max((lv for a, b, lv in placed if a < right and b > left
                         and b - a < right - left), default=0)
        if labels:
            ours = labels[m]
            while any(out[d] == level and ours[0] < labels[d][1] and labels[d][0] < ours[1]
                      for d in out):
                level += 1
        placed.append((left, right, level))
        out[m] = level
    return out


def _label_x(x: list[float], h: int, m: int) -> tuple[float, float]:
    """Where the arc h -> m leaves its head (beside the head's centre, towards m) and the x
    of its label (halfway between its ends)."""
    xh = x[h] + (4 if x[m] > x[h] else -4)
    return xh, (xh + x[m]) / 2


def label_boxes(x: list[float], heads, labels: list[str]) -> dict[int, tuple[float, float]]:
    """Dependent -> the left and right x of its arc's label, `LABEL_GAP` included (roots
    excluded); `x` is each word's centre, 1..n."""
    boxes = {}
    for m, h in enumerate(heads):
        if m > 0 and h > 0:
            centre = _label_x(x, int(h), m)[1]
            half = (LABEL_CHAR * len(labels[m - 1]) + LABEL_GAP) / 2
            boxes[m] = (centre - half, centre + half)
    return boxes


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")  # no XML 1.0 character


def escape(text: str) -> str:
    """`text` for XML and HTML: markup escaped, and the control characters XML 1.0 has no
    place for (a word list may hold them) shown as U+FFFD."""
    return html.escape(_NOT_XML.sub("\ufffd", text))


def tree(sentence) -> Sentence:
    """The CoNLL sentence of a `Sentence`, or of a document's sentence view
    (`arborparse.document.Sentence`, what ``nlp(text).sentences`` holds)."""
    from arborparse.document import Sentence as View

    if isinstance(sentence, View):
        return sentence.data
    if isinstance(sentence, Sentence):
        return sentence
    raise TypeError(f"render a Sentence or a document's sentence, not "
                    f"{type(sentence).__name__}")


def svg(sentence, threshold: float = 0.5, title: str | None = None) -> str:
    """The tree of `sentence` (a `Sentence` with HEAD and DEPREL, or a sentence of
    ``nlp(...)``'s document) as an SVG document."""
    sentence = tree(sentence)
    forms, upos, heads = sentence.forms, sentence.upos, sentence.heads
    labels, probs = sentence.deprels, head_probabilities(sentence)
    n = len(forms)
    widths = [CHAR * max(columns(f), len(u), 1) + GAP for f, u in zip(forms, upos)]
    rtl = right_to_left(forms)
    order = list(range(n))[::-1] if rtl else list(range(n))
    x, left = [0.0] * (n + 1), PAD
    for i in order:
        x[i + 1] = left + widths[i] / 2
        left += widths[i]
    level = levels(heads, label_boxes(x, heads, labels))
    top = max(level.values(), default=0) + 1
    foot = PAD + LEVEL * top + 14
    width, height = left + PAD, foot + WORD_Y + 26
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="arborparse-tree" '
           f'width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" '
           f'direction="{"rtl" if rtl else "ltr"}" font-family="sans-serif" font-size="14">']
    if title:
        out.append(f"<title>{escape(title)}</title>")
    for m in range(1, n + 1):
        h, p = int(heads[m]), probs[m - 1]
        unsure = p is not None and p < threshold
        colour = UNSURE if unsure else SURE
        opacity = 1.0 if p is None else max(0.15, min(1.0, p))
        attrs = (f'class="arc{" unsure" if unsure else ""}" data-head="{h}" data-dep="{m}" '
                 f'data-label="{escape(labels[m - 1])}"'
                 + ("" if p is None else f' data-prob="{p:.4f}"'))
        tip = f"{labels[m - 1]}: {forms[m - 1]}" + ("" if p is None else f" ({p:.0%})")
        dash = ' stroke-dasharray="5 3"' if unsure else ""
        xm = x[m]
        if h == 0:
            y = PAD + 6
            path = f"M{xm:.1f},{y} L{xm:.1f},{foot}"
            label_x, label_y = xm, y - 2
        else:
            y = foot - LEVEL * level[m]
            xh, label_x = _label_x(x, h, m)
            path = (f"M{xh:.1f},{foot} C{xh:.1f},{y:.1f} {xm:.1f},{y:.1f} "
                    f"{xm:.1f},{foot}")
            label_y = foot - 0.75 * LEVEL * level[m] - 4
        out.append(
            f'<g {attrs} opacity="{opacity:.3f}"><title>{escape(tip)}</title>'
            f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="1.6"{dash}/>'
            f'<path d="M{xm - 4:.1f},{foot - 7} L{xm + 4:.1f},{foot - 7} L{xm:.1f},{foot} Z" '
            f'fill="{colour}"/>'
            f'<text x="{label_x:.1f}" y="{label_y:.1f}" text-anchor="middle" font-size="11" '
            f'fill="{colour}">{escape(labels[m - 1])}</text></g>')
    for m in range(1, n + 1):
        w = widths[m - 1] - GAP / 2
        out.append(f'<g class="word" data-id="{m}"><rect x="{x[m] - w / 2:.1f}" '
                   f'y="{foot + 4}" width="{w:.1f}" height="{WORD_Y + 12}" fill="transparent"/>'
                   f'<text x="{x[m]:.1f}" y="{foot + WORD_Y - 8}" '
                   f'text-anchor="middle">{escape(forms[m - 1])}</text>'
                   f'<text x="{x[m]:.1f}" y="{foot + WORD_Y + 10}" text-anchor="middle" '
                   f'font-size="11" fill="#7f8c8d">{escape(upos[m - 1])}</text></g>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
