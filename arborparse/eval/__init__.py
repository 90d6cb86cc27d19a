"""Attachment scores, analyses and significance tests.

Definitions follow the CoNLL 2018 UD evaluation on gold tokenization: every
syntactic word counts (punctuation included, empty nodes and multiword-token lines
excluded), ``LAS`` compares the universal part of DEPREL (before ``:``). The
``_nopunct`` scores drop words whose UPOS is PUNCT (CoNLL-U) or whose FORM consists
only of Unicode punctuation (CoNLL-X, the CoNLL-X shared task rule).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence

import numpy as np

from arborparse.errors import ArborparseError, TreebankFormatError, counted
from arborparse.io.conllu import Sentence
from arborparse.io.validate import CONLLU_ROOT, check_tree
from arborparse.trees.structure import nonprojective_arcs

LENGTH_BINS = ("root", "1", "2", "3-6", ">6")
# the CoNLL 2018 shared task's relation classes and universal features
CONTENT_DEPRELS = frozenset({
    "nsubj", "obj", "iobj", "csubj", "ccomp", "xcomp", "obl", "vocative", "expl",
    "dislocated", "advcl", "advmod", "discourse", "nmod", "appos", "nummod", "acl", "amod",
    "conj", "fixed", "flat", "compound", "list", "parataxis", "orphan", "goeswith",
    "reparandum", "root", "dep"})
FUNCTIONAL_DEPRELS = frozenset({"aux", "cop", "mark", "det", "clf", "case", "cc"})
UNIVERSAL_FEATURES = frozenset({
    "PronType", "NumType", "Poss", "Reflex", "Foreign", "Abbr", "Gender", "Animacy",
    "Number", "Case", "Definite", "Degree", "VerbForm", "Mood", "Tense", "Aspect", "Voice",
    "Evident", "Polarity", "Person", "Polite"})
TAG_MEASURES = ("UPOS", "XPOS", "UFeats", "AllTags", "Lemmas", "CLAS", "MLAS", "BLEX")


def universal(deprel: str) -> str:
    """The universal part of a DEPREL: ``nmod:poss`` -> ``nmod``."""
    return deprel.split(":", 1)[0]


def is_punct(sentence: Sentence) -> np.ndarray:
    """Boolean mask over words 1..n of the words that the ``_nopunct`` scores skip."""
    if sentence.format == "conllx":
        return np.array([all(unicodedata.category(ch).startswith("P") for ch in form)
                         for form in sentence.forms], dtype=bool)
    return np.array([u == "PUNCT" for u in sentence.upos], dtype=bool)


class WordsDiffer(ArborparseError):
    """Two files that should hold the same words do not (`check_aligned`)."""


def check_aligned(gold: Sequence[Sentence], pred: Sequence[Sentence],
                  multi_root: bool = False) -> None:
    """Raise `ArborparseError` unless both files hold the same words, each sentence a tree
    (as the CoNLL 2018 script demands: every word a HEAD, no cycle; CoNLL-U trees have one
    root, CoNLL-X ones may have several; with `multi_root`, the system's trees may have
    several too); name the file and line of the first problem."""
    for name, sentences in (("gold", gold), ("system", pred)):
        if not sentences:
            raise ArborparseError(f"the {name} file holds no sentences")
    for g, p in zip(gold, pred):
        for s in (g, p):
            if not s.has_tree:
                m = int(np.flatnonzero(s.heads[1:] < 0)[0]) + 1
                raise TreebankFormatError(s.path, s.word_line(m),
                                          f"word {m} has no HEAD (evaluation needs trees)",
                                          where=s.word_where(m))
            check_tree(s, s.format == "conllu" and not (multi_root and s is p),
                       CONLLU_ROOT)
        if g.forms != p.forms:
            where = next((m for m, (a, b) in enumerate(zip(g.forms, p.forms), 1) if a != b),
                         min(len(g), len(p)) + 1)
            raise WordsDiffer(
                f"the words differ: gold {_where(g, where)} has {_word(g, where)!r}, system "
                f"{_where(p, where)} has {_word(p, where)!r} (word {where} of a sentence of "
                f"{counted(len(g), 'word')} in gold, {len(p)} in the system file)")
    if len(gold) != len(pred):
        raise WordsDiffer(f"the gold file ({gold[0].path}) has "
                          f"{counted(len(gold), 'sentence')}, the system file "
                          f"({pred[0].path}) has {len(pred)}")


def _where(sentence: Sentence, m: int) -> str:
    """Where word m is (`Sentence.word_where`), or the sentence when it has fewer words."""
    return sentence.word_where(m) if m <= len(sentence) else sentence.where


def _word(sentence: Sentence, m: int) -> str:
    return sentence.forms[m - 1] if m <= len(sentence) else "<end of sentence>"


def universal_feats(feats: str) -> str:
    """The universal features of a FEATS value, sorted (CoNLL 2018's UFeats)."""
    return "|".join(sorted(f for f in feats.split("|") if f.split("=", 1)[0] in UNIVERSAL_FEATURES))


class Words:
    """One sentence's words as the CoNLL 2018 measures compare them."""

    def __init__(self, s: Sentence):
        self.heads = s.heads
        self.upos, self.xpos, self.lemmas = s.upos, s.xpos, s.lemmas
        self.feats = [universal_feats(f) for f in s.feats]
        self.deprels = [universal(d) for d in s.deprels]
        self.content = [d in CONTENT_DEPRELS for d in self.deprels]
        self.functional = [[] for _ in range(len(s) + 1)]  # functional children, in order
        for m, d in enumerate(self.deprels, 1):
            if d in FUNCTIONAL_DEPRELS:
                self.functional[self.heads[m]].append(m)

    def morphology(self, m: int):
        """MLAS's key of word m: its arc, UPOS, UFeats and its functional children's."""
        return (self.heads[m], self.deprels[m - 1], self.upos[m - 1], self.feats[m - 1],
                [(c, self.deprels[c - 1], self.upos[c - 1], self.feats[c - 1])
                 for c in self.functional[m]])


def _tag_counts(g: Sentence, p: Sentence, total: Counter) -> None:
    """Add one sentence's counts for TAG_MEASURES (gold tokenization: words align one to
    one) to `total`: ``{measure}_ok``, and for the content-word measures ``content_gold``
    and ``content_system``."""
    G, P = Words(g), Words(p)
    for m in range(1, len(g) + 1):
        i = m - 1
        lemma_ok = G.lemmas[i] == "_" or G.lemmas[i] == P.lemmas[i]
        tags = (G.upos[i] == P.upos[i], G.xpos[i] == P.xpos[i], G.feats[i] == P.feats[i])
        total["UPOS_ok"] += tags[0]
        total["XPOS_ok"] += tags[1]
        total["UFeats_ok"] += tags[2]
        total["AllTags_ok"] += all(tags)
        total["Lemmas_ok"] += lemma_ok
        total["content_system"] += P.content[i]
        if G.content[i]:
            total["content_gold"] += 1
            arc_ok = G.heads[m] == P.heads[m] and G.deprels[i] == P.deprels[i]
            total["CLAS_ok"] += arc_ok
            total["MLAS_ok"] += G.morphology(m) == P.morphology(m)
            total["BLEX_ok"] += arc_ok and lemma_ok


def tag_scores(gold: Sequence[Sentence], pred: Sequence[Sentence]) -> dict:
    """``UPOS``, ``XPOS``, ``UFeats`` and ``Lemmas`` of the words of `pred` (tagged and
    lemmatized, with or without trees) against those of `gold` (the same words), in
    percent, as `evaluate` and the CoNLL 2018 script count them; ArborparseError where
    the words differ."""
    total = Counter()
    for g, p in zip(gold, pred, strict=True):
        if g.forms != p.forms:
            raise ArborparseError(f"{g.where}: the tagged words differ from the gold words")
        _tag_counts(g, p, total)
    words = sum(len(g) for g in gold)
    return {m: 100.0 * total[f"{m}_ok"] / words for m in ("UPOS", "XPOS", "UFeats", "Lemmas")
            } if words else {}


def _length_bin(heads: np.ndarray) -> np.ndarray:
    """Index into LENGTH_BINS of each word's arc."""
    m = np.arange(1, len(heads))
    length = np.abs(heads[1:] - m)
    bins = np.where(length <= 2, length, np.where(length <= 6, 3, 4))
    return np.where(heads[1:] == 0, 0, bins)


def _f1(correct_p, total_p, correct_r, total_r):
    p = 100.0 * correct_p / total_p if total_p else 0.0
    r = 100.0 * correct_r / total_r if total_r else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def sentence_counts(gold: Sequence[Sentence], pred: Sequence[Sentence]):
    """Per-sentence numbers of words with a correct head and a correct head and label.

    Returns
    -------
    words, unlabeled, labeled : ndarray of int, shape (sentences,)
    """
    check_aligned(gold, pred)
    words = np.array([len(g) for g in gold])
    unlabeled = np.empty(len(gold), dtype=np.int64)
    labeled = np.empty(len(gold), dtype=np.int64)
    for i, (g, p) in enumerate(zip(gold, pred)):
        head_ok = g.heads[1:] == p.heads[1:]
        label_ok = np.array([universal(a) == universal(b) for a, b in zip(g.deprels, p.deprels)],
                            dtype=bool)
        unlabeled[i] = head_ok.sum()
        labeled[i] = (head_ok & label_ok).sum()
    return words, unlabeled, labeled


def evaluate(gold: Sequence[Sentence], pred: Sequence[Sentence], multi_root: bool = False
             ) -> dict:
    """Scores of a system's trees against gold trees, all in percent.

    Also the CoNLL 2018 shared task's measures (F1 = accuracy on gold tokenization):
    ``UPOS``, ``XPOS``, ``UFeats`` (universal features), ``AllTags`` (UPOS, XPOS and
    UFeats), ``Lemmas`` (a gold ``_`` matches anything), and over content words (F1 of the
    gold and system content relations) ``CLAS`` (labeled attachment), ``MLAS`` (and UPOS,
    UFeats and the functional children's) and ``BLEX`` (and the lemma).

    With `multi_root` the system's trees may have several roots where the CoNLL-U format
    (and the official script) wants one: the dev scores of a parser trained for several.

    Returns a dict with ``UAS``, ``LAS``, ``LAS_full`` (whole DEPREL), ``UAS_nopunct``,
    ``LAS_nopunct``, ``LA`` (label accuracy), ``UCM``, ``LCM`` (complete match),
    ``root_accuracy`` (gold root words predicted as root), ``nonproj_accuracy`` (gold
    non-projective arcs with the right head; None when there are none) and ``nonproj_arcs``, ``words``,
    ``sentences``, ``by_deprel`` (precision/recall/F1 of labeled attachment per universal
    DEPREL) and ``by_length`` (the same for unlabeled attachment by arc length bin).
    """
    check_aligned(gold, pred, multi_root)
    total = Counter()
    label_stats = {}
    length_stats = np.zeros((len(LENGTH_BINS), 4), dtype=np.int64)  # cp, tp, cr, tr
    for g, p in zip(gold, pred):
        gh, ph = g.heads[1:], p.heads[1:]
        glab = [universal(d) for d in g.deprels]
        plab = [universal(d) for d in p.deprels]
        head_ok = gh == ph
        label_ok = np.array([a == b for a, b in zip(glab, plab)], dtype=bool)
        full_ok = np.array([a == b for a, b in zip(g.deprels, p.deprels)], dtype=bool)
        both = head_ok & label_ok
        keep = ~is_punct(g)
        roots = gh == 0
        nonproj = nonprojective_arcs(g.heads)
        counts = dict(
            words=len(g), sentences=1, uas=head_ok.sum(), las=both.sum(),
            las_full=(head_ok & full_ok).sum(), la=label_ok.sum(),
            np_words=keep.sum(), uas_np=head_ok[keep].sum(), las_np=both[keep].sum(),
            ucm=head_ok.all(), lcm=both.all(), roots=roots.sum(),
            root_ok=(roots & (ph == 0)).sum(), nonproj=nonproj.sum(),
            nonproj_ok=(nonproj & head_ok).sum())
        total.update({k: int(v) for k, v in counts.items()})  # numpy booleans do not add up
        _tag_counts(g, p, total)
        for lab_list, is_pred in ((plab, True), (glab, False)):
            for m, lab in enumerate(lab_list):
                stats = label_stats.setdefault(lab, [0, 0, 0, 0])
                k = 0 if is_pred else 2
                stats[k] += int(both[m])
                stats[k + 1] += 1
        gbin, pbin = _length_bin(g.heads), _length_bin(p.heads)
        np.add.at(length_stats[:, 0], pbin, head_ok)
        np.add.at(length_stats[:, 1], pbin, 1)
        np.add.at(length_stats[:, 2], gbin, head_ok)
        np.add.at(length_stats[:, 3], gbin, 1)

    def pct(a, b):
        return 100.0 * a / b if b else 0.0

    words, sentences = total["words"], total["sentences"]
    result = {
        "UAS": pct(total["uas"], words),
        "LAS": pct(total["las"], words),
        "LAS_full": pct(total["las_full"], words),
        "UAS_nopunct": pct(total["uas_np"], total["np_words"]),
        "LAS_nopunct": pct(total["las_np"], total["np_words"]),
        "LA": pct(total["la"], words),
        "UCM": pct(total["ucm"], sentences),
        "LCM": pct(total["lcm"], sentences),
        "root_accuracy": pct(total["root_ok"], total["roots"]),
        "nonproj_accuracy": (pct(total["nonproj_ok"], total["nonproj"]) if total["nonproj"]
                             else None),
        "nonproj_arcs": int(total["nonproj"]),
        **{name: pct(total[f"{name}_ok"], words) for name in TAG_MEASURES[:5]},
        **{name: pct(2 * total[f"{name}_ok"], total["content_gold"] + total["content_system"])
           for name in TAG_MEASURES[5:]},
        "words": int(words),
        "sentences": int(sentences),
    }
    result["by_deprel"] = {
        lab: dict(zip(("precision", "recall", "f1", "gold"), _f1(*s) + (s[3],)))
        for lab, s in sorted(label_stats.items())}
    result["by_length"] = {
        name: dict(zip(("precision", "recall", "f1", "gold"), _f1(*row) + (int(row[3]),)))
        for name, row in zip(LENGTH_BINS, length_stats.tolist())}
    return result


def compare(gold: Sequence[Sentence], a: Sequence[Sentence], b: Sequence[Sentence],
            metric: str = "UAS", samples: int = 10000, seed: int = 0) -> dict:
    """Is system A better than system B? Sentence-level sign test and paired permutation test.

    The sign test counts the sentences where A has more correct words than B and
    vice versa (ties dropped) and gives the two-sided binomial p-value. The permutation
    test swaps A's and B's per-sentence counts at random ``samples`` times and gives the
    two-sided p-value of the difference in correct words.

    Parameters
    ----------
    metric : ``"UAS"`` or ``"LAS"``
    """
    from scipy.stats import binomtest  # imported here: it costs most of the CLI's start-up

    if metric not in ("UAS", "LAS"):
        raise ArborparseError(f"metric must be UAS or LAS, not {metric!r}")
    words, ua, la = sentence_counts(gold, a)
    _, ub, lb = sentence_counts(gold, b)
    ca, cb = (ua, ub) if metric == "UAS" else (la, lb)
    a_wins, b_wins = int((ca > cb).sum()), int((cb > ca).sum())
    sign_p = binomtest(a_wins, a_wins + b_wins).pvalue if a_wins + b_wins else 1.0
    diff = ca - cb
    observed = abs(diff.sum())
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, samples, 1000):
        flips = rng.choice((-1, 1), size=(min(1000, samples - start), len(diff)))
        hits += int((np.abs(flips @ diff) >= observed).sum())
    total = words.sum()
    return {
        "metric": metric,
        "A": 100.0 * ca.sum() / total,
        "B": 100.0 * cb.sum() / total,
        "difference": 100.0 * diff.sum() / total,
        "A_better_sentences": a_wins,
        "B_better_sentences": b_wins,
        "ties": int(len(diff) - a_wins - b_wins),
        "sign_test_p": float(sign_p),
        "permutation_p": (hits + 1) / (samples + 1),
        "samples": samples,
    }
