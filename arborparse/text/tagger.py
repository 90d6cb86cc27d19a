"""`Tagger`: UPOS, XPOS and FEATS from the words of a sentence, trained on any treebank.

Averaged perceptrons (`arborparse.text.classifier`). UPOS and FEATS are decided together:
the classes are the (UPOS, FEATS) pairs of training (`pair`), the candidates for a word
those seen with its longest suffix (4 to 1 characters) seen with at least `GUESSES` of
them, else with its last letter, or every pair where even that was never seen (a training
word's own pairs are among those of each of its suffixes); where training has at most `FEW`
pairs (FEATS all but absent: Chinese, Japanese, Vietnamese), every pair for every word, as
a UPOS tagger scores every UPOS. A pair's score is its own weights' and those of its parts
(`pair_parts`: its UPOS and each of its features), which it shares with every pair that has
them, so that a bundle seen rarely learns from the common features it is made of. Another
perceptron then decides XPOS reading the word's UPOS, its candidates the XPOS seen with
that UPOS in training (the gold UPOS in training). Each keeps the epoch with the best
development accuracy (the last without development data). Each reads the stem of a word
too (`arborparse.text.features.Stems`): its longest prefix that is the lemma of another
training word (or the beginning that word shares with its lemma, `stems_of`), what follows
it and its first characters, the UPOS of that stem's words and the features they share.

The pairs are scored twice, by a perceptron that reads each sentence left to right and one
that reads it right to left, each trained alone and with its own history (the pairs it gave
the words before, or after); a word's pair is the one with the highest sum of the two
scores. Against left to right alone (dev, gold words, 10 epochs; UFeats / UPOS / both
right): Turkish-IMST 85.22 -> 85.87 / 90.25 -> 90.50 / 82.25 -> 82.90, Finnish-TDT 83.33
-> 84.76 / 87.96 -> 89.27, German-GSD 76.13 -> 76.61 / 91.59 -> 91.47 / 73.65 -> 74.29,
Gothic-PROIEL 87.70 -> 88.10 / 94.98 -> 95.28, Russian-GSD 78.73 -> 78.83 / 92.62 -> 93.25,
Hungarian-Szeged 90.47 -> 90.93 / 94.06 -> 94.50, English-EWT 95.30 -> 95.49 / 94.95 ->
95.23, Chinese-GSD 97.96 -> 97.66 / 81.94 -> 82.52, Japanese-GSD UPOS 91.69 -> 91.85,
Vietnamese-VTB 85.08 -> 85.40: both right up on all ten. Weighting the right-to-left
scores 0.5 or 2 instead of 1 (Turkish-IMST, English-EWT, Gothic-PROIEL, German-GSD,
Finnish-TDT, Russian-GSD): UFeats lower on four and on five of six. The pairs take twice as
long to train and to tag.

Against a UPOS tagger over every UPOS followed by FEATS over the bundles of its UPOS (dev,
gold words, 10 epochs; UPOS / UFeats / both right): Turkish-IMST 90.15 -> 90.25 / 84.63 ->
85.22 / 81.93 -> 82.25, German-GSD 92.43 -> 91.59 / 75.09 -> 76.13 / 72.61 -> 73.65,
Finnish-TDT 87.84 -> 87.96 / 82.21 -> 83.33, Russian-GSD 92.86 -> 92.62 / 77.75 -> 78.73,
Gothic-PROIEL 94.83 -> 94.98 / 87.42 -> 87.70, Hungarian-Szeged 94.16 -> 94.06 / 90.01 ->
90.47, English-EWT 94.77 -> 94.95 / 95.07 -> 95.30: a wrong UPOS no longer rules out the
right bundle, and the two agree (FEATS decided apart from the UPOS tagger's UPOS: Turkish
both right 80.85). XPOS -0.40 to +0.18 (German-GSD the loss). Training takes 1.1-1.8 times
as long (English-EWT 17 -> 28 CPU s), tagging English-EWT's test words 1.4 times (0.22 ->
0.31 s). Tried on the same dev sets: `GUESSES` 20 (UFeats -0.09 on average, and slower), a
pair of every UPOS among the candidates (German UFeats -1.7), suffixes of up to 5 or 6
characters (-0.06 to -0.48), 15 epochs (the same: every kept epoch is at most the ninth), the
previous words' UPOS instead of their pairs in three of the history features (both right
-0.83 to +0.40, mean -0.21), ambiguity classes of pairs instead of UPOS (-0.44 to +0.04).
Where the pairs are few, the last letter's pairs ruled out the right UPOS (dev UPOS
Japanese-GSD 92.39 -> 90.18, Chinese-GSD UFeats 97.18 -> 95.67); every pair there: 91.69
and 97.96, Vietnamese-VTB UPOS 84.88 -> 85.08 (85.28 before). Every pair for any word no
suffix guesses, in every treebank: both right -0.15 to -0.92 on five of the seven above;
the most common pair of each UPOS added to such a word's: -0.05 to -0.69.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from os.path import commonprefix

import numpy as np
from numba import njit

from arborparse.errors import ArborparseError
from arborparse.io.conllu import FEATS, UPOS, XPOS, Sentence
from arborparse.text.classifier import Classifier, Trained, candidate_arrays, offsets
from arborparse.text.features import (STEM, STEM_BEFORE_PREFIXES, Stems, combined, stem_key,
                                      word_features)

TAGGERS = ("upos_feats", "upos_feats_backward", "xpos")
ONE_WAY = ("upos_feats", "xpos")  # without `backward`: the pairs left to right alone
# what each perceptron's lines of progress say it is (its dev accuracy: on its own)
SHOWN = {"upos_feats": "UPOS+FEATS, left to right:", "upos_feats_backward":
         "UPOS+FEATS, right to left:", "xpos": "XPOS given the gold UPOS:"}
PAIRS = TAGGERS[:2]  # the two that score the (UPOS, FEATS) pairs, one in each direction
VERSION = 9  # of the tagger inside a model file (6: the pairs scored in both directions;
# 7: the shapes of words without case; 8: the stems of words, `stems`; 9: the first
# characters of what follows a stem, `stem_columns`)
OLDEST = 7
SUFFIXES = (4, 3, 2, 1)
GUESSES = 10  # a suffix guesses (UPOS, FEATS) pairs when seen with at least this many
FEW = 50  # with at most this many pairs in training, every pair is a candidate of every word
COMMON = 3  # the shortest beginning of a form and its lemma kept as a stem (`stems_of`)


def reversed_order(bounds: np.ndarray) -> np.ndarray:
    """The words of the sentences (`bounds`: where each starts) with each sentence read
    right to left: position j holds the word ``order[j]`` (its own inverse)."""
    n = int(bounds[-1])
    starts = np.repeat(bounds[:-1], np.diff(bounds))
    ends = np.repeat(bounds[1:], np.diff(bounds))
    return starts + ends - 1 - np.arange(n)


def reordered(cptr: np.ndarray, cand: np.ndarray, order: np.ndarray):
    """(cptr, cand) of `candidate_arrays` with the items in `order` (item j: ``order[j]``)."""
    counts = np.diff(cptr)[order]
    ptr = offsets(counts)
    return ptr, cand[np.repeat(cptr[:-1][order] - ptr[:-1], counts) + np.arange(ptr[-1])]


@njit(cache=True, nogil=True)
def best_of_sums(ahead, sptr, behind, bptr, order, cptr, cand):
    """Each word's candidate with the highest sum of its two scores (the first on ties):
    word i's candidates score ``ahead[sptr[i]:]`` left to right and ``behind[bptr[order[i]]:]``
    right to left, in the order of ``cand[cptr[i]:cptr[i + 1]]`` (every class where that is
    empty)."""
    out = np.empty(sptr.shape[0] - 1, dtype=np.int64)
    for i in range(out.shape[0]):
        best, best_score, b = 0, -np.inf, bptr[order[i]]
        for j in range(sptr[i + 1] - sptr[i]):
            score = ahead[sptr[i] + j] + behind[b + j]
            if score > best_score:
                best, best_score = j, score
        out[i] = cand[cptr[i] + best] if cptr[i + 1] > cptr[i] else best
    return out


def features_of(bundle: str) -> list[str]:
    """The features of a FEATS bundle (``Case=Dat|Number=Sing``); ``_`` has none."""
    return [] if bundle == "_" else bundle.split("|")


def _stems(value, width) -> Stems | None:
    """The `Tagger.stems` of a model file and how many `STEM` columns they give, checked
    (None in a version 7 file, whose tagger reads no stems, and for a treebank without
    lemmas; `width` None in a version 8 file, whose stems give `STEM_BEFORE_PREFIXES`)."""
    if value is None:
        if width is not None:
            raise ValueError(f"it gives {width!r} stem columns but has no stems")
        return None
    if width is None:
        width = STEM_BEFORE_PREFIXES
    if type(width) is not int or width not in (STEM_BEFORE_PREFIXES, len(STEM)):
        raise ValueError(f"its stems give {width!r} columns, not {STEM_BEFORE_PREFIXES} (a "
                         f"version 8 file) or {len(STEM)}")
    if not isinstance(value, dict) or not all(
            isinstance(forms, dict) and all(isinstance(v, str) and v.count("\t") == 1
                                            for v in forms.values())
            for forms in value.values()):
        raise ValueError("its stems are not lemmas with their forms' UPOS and features")
    return Stems(value, width)


def stems_of(form: str, lemma: str) -> list[str]:
    """The stems a training form gives its lemma (both as `stem_key` writes them): the
    lemma, and the beginning they share where it is shorter than the lemma and at least
    `COMMON` characters long (``macht``, ``machen``: ``mach``), so that a lemma that is not
    a prefix of its forms (an infinitive) gives a stem too."""
    n = len(commonprefix([form, lemma]))
    return [lemma, lemma[:n]] if COMMON <= n < len(lemma) else [lemma]


def pair(upos: str, feats: str) -> str:
    """The first tagger's class of a UPOS and a FEATS bundle (a tab between: neither column
    can hold one)."""
    return f"{upos}\t{feats}"


def pair_parts(joint: str) -> list[str]:
    """The parts of a (UPOS, FEATS) class (`pair`), which it shares with every class that
    has them: its UPOS (after a tab, so that it is told from a feature) and its features."""
    upos, feats = joint.split("\t")
    return ["\t" + upos, *features_of(feats)]


class Tagger(Trained):
    """UPOS, XPOS and FEATS tagger.

    Parameters
    ----------
    epochs : passes over the training data for each perceptron
    bits : log2 of each perceptron's hashed weight vector
    seed : order of the training sentences
    progress : one line per epoch on stderr
    backward : score the pairs right to left too (without: left to right alone, in half
        the time: the jackknife's taggers, `arborparse.trainer`)
    """

    kind = "tagger"

    def __init__(self, epochs: int = 10, bits: int = 22, seed: int = 0, progress: bool = True,
                 backward: bool = True):
        super().__init__(epochs, bits, seed, progress)
        self.backward = backward

    def _taggers(self) -> tuple[str, ...]:
        """The perceptrons this tagger trains and holds, in the order it trains them."""
        return TAGGERS if self.backward else ONE_WAY

    # ------------------------------------------------------------------ dictionaries

    def _learn_dictionaries(self, train: list[Sentence]) -> None:
        tags, frequency = defaultdict(set), Counter()
        xpos_count, pairs_count = Counter(), Counter()
        stems = defaultdict(lambda: defaultdict(list))  # stem -> form -> its (UPOS, FEATS)
        for s in train:
            for form, lemma, u, x, f in zip(s.forms, s.lemmas, s.upos, s.xpos, s.feats):
                tags[form.lower()].add(u)
                if lemma != "_":
                    key = stem_key(form)
                    for stem in stems_of(key, stem_key(lemma)):
                        stems[stem][key].append((u, f))
                frequency[form.lower()] += 1
                xpos_count[x] += 1
                pairs_count[pair(u, f)] += 1
        # words seen once have no ambiguity class, so that training meets words without
        # one as tagging new text does
        self.ambiguity = {w: "|".join(sorted(t)) for w, t in tags.items()
                          if frequency[w] > 1}
        self.stems = Stems({stem: {form: "\t".join(combined(tags)) for form, tags in forms.items()}
                            for stem, forms in stems.items()}) if stems else None
        for tagger in self._taggers()[:-1]:
            setattr(self, tagger, Classifier(sorted(pairs_count), self.bits, parts=pair_parts))
        self.xpos = Classifier(sorted(xpos_count), self.bits)
        self._index_upos()
        x_id = {x: i for i, x in enumerate(self.xpos.classes)}
        p_id = {p: i for i, p in enumerate(self.upos_feats.classes)}
        xpos_by_upos, by_suffix = defaultdict(set), defaultdict(set)
        for s in train:
            for form, u, x, f in zip(s.forms, s.upos, s.xpos, s.feats):
                lower, pi = form.lower(), p_id[pair(u, f)]
                xpos_by_upos[int(self.upos_of[pi])].add(x_id[x])
                for k in SUFFIXES:
                    if len(lower) >= k:
                        by_suffix[lower[-k:]].add(pi)
        self.xpos_by_upos = {k: sorted(v) for k, v in xpos_by_upos.items()}
        self.pairs_by_suffix = {k: sorted(v) for k, v in by_suffix.items()}

    def _index_upos(self) -> None:
        """The UPOS of training (`upos`, sorted), the UPOS id (`upos_of`) and the FEATS
        (`feats_of`) of each pair."""
        split = [p.split("\t") for p in self.upos_feats.classes]
        self.upos = sorted({u for u, _ in split})
        index = {u: i for i, u in enumerate(self.upos)}
        self.upos_of = np.array([index[u] for u, _ in split], dtype=np.int64)
        self.feats_of = [f for _, f in split]

    # ------------------------------------------------------------------ arrays

    def _static(self, sentences: list[Sentence]):
        """Static features of all words, read left to right and right to left (each
        sentence reversed; None without `backward`), and the sentence bounds."""
        forms = [s.forms for s in sentences]
        bounds = offsets([len(s) for s in sentences])
        X = word_features(forms, self.ambiguity)
        X_backward = word_features([f[::-1] for f in forms], self.ambiguity) \
            if self.backward else None
        if self.stems:  # a word's stem columns, the same in both directions
            stems = self.stems.columns(forms)
            X = np.hstack([X, stems])
            if self.backward:
                X_backward = np.hstack([X_backward, stems[reversed_order(bounds)]])
        return X, X_backward, bounds

    def _pairs(self, lower: str) -> list[int]:
        """The candidate (UPOS, FEATS) ids of a word (lowercased), from its suffixes; none:
        every pair (always where the pairs are `FEW`)."""
        if len(self.upos_feats.classes) <= FEW:
            return []
        guess = None
        for k in SUFFIXES:
            guess = self.pairs_by_suffix.get(lower[-k:]) if len(lower) >= k else None
            if guess and len(guess) >= GUESSES:
                break
        return guess or []

    def _inputs(self, tagger: str, lowers: list[str], upos: np.ndarray | None):
        """(given, cptr, cand) of a tagger over the words (in its direction's order): the
        UPOS ids XPOS reads (-1 for the pairs) and each word's candidates
        (`candidate_arrays`)."""
        if tagger == "xpos":
            return (upos, *candidate_arrays([self.xpos_by_upos.get(u, [])
                                             for u in upos.tolist()]))
        found = {}
        lists = [found[w] if w in found else found.setdefault(w, self._pairs(w))
                 for w in lowers]
        return (np.full(len(lowers), -1, dtype=np.int64), *candidate_arrays(lists))

    def _data(self, tagger: str, sentences: list[Sentence], static):
        """(X, bounds, gold, given, cptr, cand) of a tagger over the sentences, the words
        in its direction's order (XPOS reads the gold UPOS); `static`: `_static`'s."""
        X, X_backward, bounds = static
        lowers = [w.lower() for s in sentences for w in s.forms]
        gold = self._gold(tagger, sentences)
        if tagger == "upos_feats_backward":  # the left-to-right candidates, reordered
            order = reversed_order(bounds)
            given, cptr, cand = self._inputs("upos_feats", lowers, None)
            return (X_backward, bounds, gold[order], given, *reordered(cptr, cand, order))
        upos = self._gold_upos(sentences) if tagger == "xpos" else None
        return (X, bounds, gold, *self._inputs(tagger, lowers, upos))

    def _gold(self, tagger: str, sentences: list[Sentence]) -> np.ndarray:
        """The ids of a tagger's classes in the sentences (-1 where unknown)."""
        classifier = getattr(self, tagger)
        index = {c: i for i, c in enumerate(classifier.classes)}
        values = (pair(u, f) for s in sentences for u, f in zip(s.upos, s.feats)) \
            if tagger in PAIRS else (x for s in sentences for x in s.xpos)
        return np.array([index.get(v, -1) for v in values], dtype=np.int64)

    def _gold_upos(self, sentences: list[Sentence]) -> np.ndarray:
        """The UPOS ids of the words (0 where unknown: XPOS reads a UPOS)."""
        index = {u: i for i, u in enumerate(self.upos)}
        return np.array([index.get(u, 0) for s in sentences for u in s.upos], dtype=np.int64)

    # ------------------------------------------------------------------ training, tagging

    def fit(self, train: list[Sentence], dev: list[Sentence] | None = None) -> Tagger:
        """Train the perceptrons on `train`, each keeping its best epoch on `dev`."""
        if not train:
            raise ArborparseError("the training data holds no sentences")
        self._learn_dictionaries(train)
        static = self._static(train)
        dev_static = self._static(dev) if dev else None
        self.history_ = {}
        for tagger in self._taggers():
            classifier = getattr(self, tagger)
            if len(classifier.classes) == 1:  # one tag to give (XPOS of a treebank without
                # them: "_"): nothing to learn, nor to show
                classifier.best_epoch_, self.history_[tagger] = 1, []
                continue
            choose = None if not dev else self._dev_accuracy(tagger, dev, dev_static)
            self.history_[tagger] = classifier.fit(
                self._data(tagger, train, static), self.epochs, self.seed, choose,
                self.progress, SHOWN[tagger])
        self.scores_ = self.accuracy(dev, dev_static) if dev else {}
        return self

    def accuracy(self, sentences: list[Sentence], static=None) -> dict[str, float]:
        """UPOS, XPOS and UFeats of the sentences' words as tagged now, in % (XPOS from
        the predicted UPOS; none where the training treebank had none, only ``_``);
        `static`: their `_static` arrays, where already computed."""
        tags = self.predict(sentences, static)
        words = sum(len(s) for s in sentences)
        scored = ("UPOS", "upos"), ("XPOS", "xpos"), ("UFeats", "feats")
        return {name: 100.0 * sum(g == p for s, predicted in zip(sentences, tags[column])
                                  for g, p in zip(getattr(s, column), predicted)) / words
                for name, column in scored if name != "XPOS" or self.xpos.classes != ["_"]}

    @property
    def best_epoch_(self) -> int:
        """The later of the left-to-right pairs' and XPOS's kept epochs: how long to train
        on data like this without development data (the jackknife's taggers, which score
        the pairs left to right alone)."""
        return max(getattr(self, t).best_epoch_ for t in ONE_WAY)

    def _dev_accuracy(self, tagger: str, dev: list[Sentence], static):
        """How many of the dev words a tagger gets right on its own (XPOS from the gold
        UPOS), in %; `static`: the dev set's `_static` arrays."""
        X, bounds, gold, *inputs = self._data(tagger, dev, static)

        def accuracy(classifier):
            return 100.0 * float((classifier.predict(X, bounds, *inputs) == gold).mean())
        return accuracy

    def predict(self, sentences: list[Sentence], static=None) -> dict[str, list[list[str]]]:
        """The predicted UPOS, XPOS and FEATS of every word: {column: [[tag, ...], ...]};
        `static`: the sentences' `_static` arrays, where already computed."""
        X, X_backward, bounds = static or self._static(sentences)
        lowers = [w.lower() for s in sentences for w in s.forms]
        given, cptr, cand = self._inputs("upos_feats", lowers, None)
        if self.backward:
            order = reversed_order(bounds)
            ahead, sptr = self.upos_feats.scores(X, bounds, given, cptr, cand)
            behind, bptr = self.upos_feats_backward.scores(X_backward, bounds, given,
                                                           *reordered(cptr, cand, order))
            pairs = best_of_sums(ahead, sptr, behind, bptr, order, cptr, cand)
        else:
            pairs = self.upos_feats.predict(X, bounds, given, cptr, cand)
        upos = self.upos_of[pairs]
        xpos = self.xpos.predict(X, bounds, *self._inputs("xpos", lowers, upos))
        flat = {"upos": [self.upos[u] for u in upos.tolist()],
                "xpos": [self.xpos.classes[x] for x in xpos.tolist()],
                "feats": [self.feats_of[p] for p in pairs.tolist()]}
        return {column: [values[bounds[k]:bounds[k + 1]] for k in range(len(sentences))]
                for column, values in flat.items()}

    # ------------------------------------------------------------------ model files

    def parts(self) -> tuple[dict, dict]:
        """(header, arrays) for a model file: the dictionaries (JSON) and the weights."""
        header = {"ambiguity": self.ambiguity,
                  "stems": self.stems.entries if self.stems else None,
                  "stem_columns": self.stems.width if self.stems else None,
                  "classes": {t: getattr(self, t).classes for t in self._taggers()},
                  "xpos_by_upos": {str(k): v for k, v in self.xpos_by_upos.items()},
                  "pairs_by_suffix": self.pairs_by_suffix}
        return header, {t: getattr(self, t).weights for t in self._taggers()}

    @classmethod
    def from_parts(cls, header: dict, arrays: dict, path) -> Tagger:
        from arborparse.io.model_files import ModelFileError

        try:
            tagger = cls(progress=False, backward=PAIRS[1] in header["classes"])
            tagger.ambiguity = dict(header["ambiguity"])
            tagger.stems = _stems(header.get("stems"), header.get("stem_columns"))
            for t in tagger._taggers():
                setattr(tagger, t, Classifier(header["classes"][t], weights=arrays[t],
                                              parts=pair_parts if t in PAIRS else None))
            tagger._index_upos()
            tagger.xpos_by_upos = {int(k): v for k, v in header["xpos_by_upos"].items()}
            tagger.pairs_by_suffix = dict(header["pairs_by_suffix"])
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ModelFileError(f"{path}: the tagger in the model file is invalid ({e})") from e
        return tagger

    def tag(self, sentences: Iterable[Sentence]) -> list[Sentence]:
        """The sentences with UPOS, XPOS and FEATS predicted; nothing else changes."""
        sentences = list(sentences)
        tags = self.predict(sentences)
        return [s.with_columns({UPOS: u, XPOS: x, FEATS: f})
                for s, u, x, f in zip(sentences, tags["upos"], tags["xpos"], tags["feats"])]
