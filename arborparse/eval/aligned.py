"""The CoNLL 2018 scores of a system whose tokenization or sentence split differs from gold's
(a system that read raw text).

Both files spell the same text: the concatenation of their tokens' forms, whitespace
(Unicode category Zs) removed, must be the same string. A token, a sentence and each word
then covers a span of that string (the words of a multiword token share its span); tokens
and sentences match when their spans do. Words are aligned as the official script
(``conll18_ud_eval.py``) aligns them: by span outside multiword tokens; inside the
smallest stretch of text that holds whole multiword tokens of either side, by the longest
common subsequence of their lowercased forms. Each measure counts the correct aligned
words against the gold words (recall) and the system words (precision); UAS asks that
the system word's head be aligned to the gold word's head, and so on as in
`arborparse.eval`.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from arborparse.errors import ArborparseError
from arborparse.eval import CONTENT_DEPRELS, Words
from arborparse.io.conllu import FORM, ID, Sentence
from arborparse.io.validate import CONLLU_ROOT, check_tree

MEASURES = ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas",
            "UAS", "LAS", "CLAS", "MLAS", "BLEX")


@dataclass
class _Word:
    start: int  # the span of the word's token in the text
    end: int
    multiword: bool
    form: str  # lowercased, whitespace removed
    lemma: str
    tags: tuple[str, str, str]  # UPOS, XPOS, universal FEATS
    deprel: str  # universal part
    head: int  # the head word's index in the file's words; -1: the root
    functional: list[int]  # functional children, in order


@dataclass
class _Text:
    characters: list[str] = field(default_factory=list)
    tokens: list[tuple[int, int]] = field(default_factory=list)
    sentences: list[tuple[int, int]] = field(default_factory=list)
    words: list[_Word] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # of the tokens: "file:line"


def _no_space(form: str) -> str:
    return "".join(c for c in form if unicodedata.category(c) != "Zs")


def _read(sentences: Sequence[Sentence], name: str) -> _Text:
    """The text, tokens, sentences and words of one side."""
    if not sentences:
        raise ArborparseError(f"the {name} file holds no sentences")
    text = _Text()
    for s in sentences:
        check_tree(s, s.format == "conllu", CONLLU_ROOT)
        first, start, words = len(text.words), len(text.characters), Words(s)
        for r, numbers in s.tokens():
            form = _no_space(s.rows[r][FORM])
            if not form:
                raise ArborparseError(f"{s.path}:{s.line}: a token of the {name} file has no "
                                      f"characters but spaces ({s.rows[r][FORM]!r})")
            span = (len(text.characters), len(text.characters) + len(form))
            text.characters.extend(form)
            text.tokens.append(span)
            text.lines.append(f"{s.path}:{s.line + len(s.comments) + r}")
            for m in numbers:
                head = int(s.heads[m])
                text.words.append(_Word(
                    *span, "-" in s.rows[r][ID], _no_space(s.forms[m - 1]).lower(),
                    words.lemmas[m - 1], (words.upos[m - 1], words.xpos[m - 1],
                                          words.feats[m - 1]), words.deprels[m - 1],
                    first + head - 1 if head > 0 else -1,
                    [first + c - 1 for c in words.functional[m]]))
        text.sentences.append((start, len(text.characters)))
    return text


def _check_same_text(gold: _Text, system: _Text) -> None:
    if gold.characters == system.characters:
        return
    i = next((i for i, (a, b) in enumerate(zip(gold.characters, system.characters))
              if a != b), min(len(gold.characters), len(system.characters)))

    def there(text):  # its token at character i, or where it ends before it
        at = text.lines[max(t for t, (start, _) in enumerate(text.tokens) if start <= i)]
        return f"{at} has {''.join(text.characters[i:i + 20])!r}" \
            if i < len(text.characters) else f"ends after {at}"
    raise ArborparseError(f"the texts differ from character {i} (whitespace aside): gold "
                          f"{there(gold)}, system {there(system)}")


def _matching_spans(gold: list[tuple[int, int]], system: list[tuple[int, int]]) -> int:
    correct, g, s = 0, 0, 0
    while g < len(gold) and s < len(system):
        if system[s][0] < gold[g][0]:
            s += 1
        elif gold[g][0] < system[s][0]:
            g += 1
        else:
            correct += gold[g][1] == system[s][1]
            g += 1
            s += 1
    return correct


def _multiword_stretch(gold: list[_Word], system: list[_Word], g: int, s: int):
    """(g0, s0, g1, s1): the words gold[g0:g1] and system[s0:s1] of the smallest stretch of
    text that starts at gold[g] or system[s] (one of them in a multiword token) and holds
    whole multiword tokens of both sides."""
    if gold[g].multiword:
        end = gold[g].end
        if not system[s].multiword and system[s].start < gold[g].start:
            s += 1
    else:
        end = system[s].end
        if not gold[g].multiword and gold[g].start < system[s].start:
            g += 1
    g0, s0 = g, s

    def beyond(words, i):
        if i >= len(words):
            return True
        return words[i].start >= end if words[i].multiword else words[i].end > end

    while not beyond(gold, g) or not beyond(system, s):
        if g < len(gold) and (s >= len(system) or gold[g].start <= system[s].start):
            word, g = gold[g], g + 1
        else:
            word, s = system[s], s + 1
        if word.multiword:
            end = max(end, word.end)
    return g0, s0, g, s


def _align_by_forms(gold: list[_Word], system: list[_Word], g0, s0, g1, s1, pairs) -> None:
    """Append to pairs the (gold, system) words of the longest common subsequence of the
    forms of gold[g0:g1] and system[s0:s1] (the official script's choice among ties)."""
    G, S = g1 - g0, s1 - s0
    lcs = [[0] * (S + 1) for _ in range(G + 1)]
    for g in reversed(range(G)):
        for s in reversed(range(S)):
            same = gold[g0 + g].form == system[s0 + s].form
            lcs[g][s] = max(lcs[g + 1][s + 1] + 1 if same else 0, lcs[g + 1][s], lcs[g][s + 1])
    g = s = 0
    while g < G and s < S:
        if gold[g0 + g].form == system[s0 + s].form:
            pairs.append((g0 + g, s0 + s))
            g += 1
            s += 1
        elif lcs[g][s] == lcs[g + 1][s]:
            g += 1
        else:
            s += 1


def align_words(gold: list[_Word], system: list[_Word]) -> list[tuple[int, int]]:
    """The aligned (gold index, system index) pairs, in text order."""
    pairs, g, s = [], 0, 0
    while g < len(gold) and s < len(system):
        if gold[g].multiword or system[s].multiword:
            g0, s0, g, s = _multiword_stretch(gold, system, g, s)
            _align_by_forms(gold, system, g0, s0, g, s, pairs)
        elif (gold[g].start, gold[g].end) == (system[s].start, system[s].end):
            pairs.append((g, s))
            g += 1
            s += 1
        elif gold[g].start <= system[s].start:
            g += 1
        else:
            s += 1
    return pairs


def _score(correct: int, gold: int, system: int, aligned: int | None = None) -> dict:
    score = {"precision": 100.0 * correct / system if system else 0.0,
             "recall": 100.0 * correct / gold if gold else 0.0,
             "f1": 200.0 * correct / (gold + system) if gold + system else 0.0}
    if aligned is not None:
        score["aligned_accuracy"] = 100.0 * correct / aligned if aligned else None
    return score


def evaluate_aligned(gold: Sequence[Sentence], system: Sequence[Sentence]) -> dict:
    """The CoNLL 2018 measures (`MEASURES`) of `system` against `gold` when they tokenize
    or split the same text differently: ``{measure: {"precision", "recall", "f1"[,
    "aligned_accuracy"]}}``, in percent. Raises `ArborparseError` when the two do not
    spell the same text or a sentence is not a tree."""
    g_text, s_text = _read(gold, "gold"), _read(system, "system")
    _check_same_text(g_text, s_text)
    G, S = g_text.words, s_text.words
    pairs = align_words(G, S)
    to_gold = {s: g for g, s in pairs}

    def head(words, i, mapped):
        h = words[i].head
        return None if h < 0 else (to_gold.get(h, "unaligned") if mapped else h)

    def lemma(g, i):
        return "_" if G[g].lemma == "_" else i.lemma

    def key(measure, g, s):
        """The values compared for the gold word g and its system word s."""
        gw, sw = G[g], S[s]
        if measure in ("UPOS", "XPOS", "UFeats"):
            k = ("UPOS", "XPOS", "UFeats").index(measure)
            return gw.tags[k], sw.tags[k]
        if measure == "AllTags":
            return gw.tags, sw.tags
        if measure == "Lemmas":
            return lemma(g, gw), lemma(g, sw)
        if measure == "UAS":
            return head(G, g, False), head(S, s, True)
        arc = (head(G, g, False), gw.deprel), (head(S, s, True), sw.deprel)
        if measure in ("LAS", "CLAS"):
            return arc
        if measure == "BLEX":
            return (*arc[0], lemma(g, gw)), (*arc[1], lemma(g, sw))
        # MLAS: the arc, UPOS, FEATS and the functional children's
        children = ([(c, G[c].deprel, G[c].tags[0], G[c].tags[2]) for c in gw.functional],
                    [(to_gold.get(c, "unaligned"), S[c].deprel, S[c].tags[0], S[c].tags[2])
                     for c in sw.functional])
        return ((*arc[0], gw.tags[0], gw.tags[2], children[0]),
                (*arc[1], sw.tags[0], sw.tags[2], children[1]))

    scores = {"Tokens": _score(_matching_spans(g_text.tokens, s_text.tokens),
                               len(g_text.tokens), len(s_text.tokens)),
              "Sentences": _score(_matching_spans(g_text.sentences, s_text.sentences),
                                  len(g_text.sentences), len(s_text.sentences)),
              "Words": _score(len(pairs), len(G), len(S))}
    for measure in MEASURES[3:]:
        content = measure in ("CLAS", "MLAS", "BLEX")
        counted = [(g, s) for g, s in pairs if not content or G[g].deprel in CONTENT_DEPRELS]
        correct = sum(a == b for a, b in (key(measure, g, s) for g, s in counted))
        scores[measure] = _score(
            correct, sum(1 for w in G if not content or w.deprel in CONTENT_DEPRELS),
            sum(1 for w in S if not content or w.deprel in CONTENT_DEPRELS), len(counted))
    return scores
