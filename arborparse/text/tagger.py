"""`Tagger`: UPOS, XPOS and FEATS from the words of a sentence, trained on any treebank.

Three averaged perceptrons (`arborparse.text.classifier`), each decoding left to right:
UPOS over every UPOS; XPOS reading the word's UPOS, its candidates the XPOS seen with that
UPOS in training; and FEATS decided together with a UPOS of its own, over the (UPOS, FEATS)
pairs of training, as one class (its UPOS is not kept: the UPOS tagger's is the better on
most treebanks). A pair's candidates are those seen with the word together with a suffix
guess: the pairs seen with the longest suffix (4 to 1 characters) seen with at least
`GUESSES` of them, else every pair. A pair's score is its own weights' and those of its
parts (`pair_parts`: its UPOS and each of its features), which it shares with every pair
that has them, so that a bundle seen rarely learns from the common features it is made of.
Against FEATS over the bundles of the UPOS tagger's UPOS (dev UFeats, gold words, 10
epochs): Turkish-IMST 84.63 -> 85.22, Finnish-TDT 82.21 -> 83.33, German-GSD 75.09 ->
76.13, Russian-GSD 77.75 -> 78.73, Gothic-PROIEL 87.42 -> 87.70, Hungarian-Szeged 90.01 ->
90.47, English-EWT 95.07 -> 95.30: a wrong UPOS no longer rules out the right bundle
(`GUESSES` 20 instead of 10: mean -0.09, and slower). In training XPOS reads the gold UPOS;
each tagger keeps the epoch with the best development accuracy (the last without
development data).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

import numpy as np

from arborparse.errors import ArborparseError
from arborparse.io.conllu import FEATS, UPOS, XPOS, Sentence
from arborparse.text.classifier import Classifier, Trained, candidate_arrays, offsets
from arborparse.text.features import word_features

COLUMNS = ("upos", "xpos", "feats")
VERSION = 5  # of the tagger inside a model file (5: FEATS decided with a UPOS of its own)
SUFFIXES = (4, 3, 2, 1)
GUESSES = 10  # a suffix guesses (UPOS, FEATS) pairs when it was seen with at least this many


def features_of(bundle: str) -> list[str]:
    """The features of a FEATS bundle (``Case=Dat|Number=Sing``); ``_`` has none."""
    return [] if bundle == "_" else bundle.split("|")


def pair(upos: str, feats: str) -> str:
    """The FEATS classifier's class of a UPOS and a FEATS bundle (a tab between: neither
    column can hold one)."""
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
    epochs : passes over the training data for each of the three taggers
    bits : log2 of each tagger's hashed weight vector
    seed : order of the training sentences
    progress : one line per epoch on stderr
    """

    kind = "tagger"

    # ------------------------------------------------------------------ dictionaries

    def _learn_dictionaries(self, train: list[Sentence]) -> None:
        tags, frequency = defaultdict(set), Counter()
        upos_count, xpos_count, pairs_count = Counter(), Counter(), Counter()
        for s in train:
            for form, u, x, f in zip(s.forms, s.upos, s.xpos, s.feats):
                tags[form.lower()].add(u)
                frequency[form.lower()] += 1
                upos_count[u] += 1
                xpos_count[x] += 1
                pairs_count[pair(u, f)] += 1
        # words seen once have no ambiguity class, so that training meets words without
        # one as tagging new text does
        self.ambiguity = {w: "|".join(sorted(t)) for w, t in tags.items()
                          if frequency[w] > 1}
        self.upos = Classifier(sorted(upos_count), self.bits)
        self.xpos = Classifier(sorted(xpos_count), self.bits)
        self.feats = Classifier(sorted(pairs_count), self.bits, parts=pair_parts)
        u_id = {u: i for i, u in enumerate(self.upos.classes)}
        x_id = {x: i for i, x in enumerate(self.xpos.classes)}
        p_id = {p: i for i, p in enumerate(self.feats.classes)}
        xpos_by_upos, by_word, by_suffix = (defaultdict(set) for _ in range(3))
        for s in train:
            for form, u, x, f in zip(s.forms, s.upos, s.xpos, s.feats):
                lower, pi = form.lower(), p_id[pair(u, f)]
                xpos_by_upos[u_id[u]].add(x_id[x])
                by_word[lower].add(pi)
                for k in SUFFIXES:
                    if len(lower) >= k:
                        by_suffix[lower[-k:]].add(pi)
        self.xpos_by_upos = {k: sorted(v) for k, v in xpos_by_upos.items()}
        self.feats_by_word = {k: sorted(v) for k, v in by_word.items()}
        self.feats_by_suffix = {k: sorted(v) for k, v in by_suffix.items()}

    # ------------------------------------------------------------------ arrays

    def _static(self, sentences: list[Sentence]):
        """Static features of all words and the sentence bounds."""
        return (word_features([s.forms for s in sentences], self.ambiguity),
                offsets([len(s) for s in sentences]))

    def _candidates(self, lowers: list[str], upos: np.ndarray | None, column: str):
        """(cptr, cand): the candidate XPOS ids of each word given its UPOS id, or its
        candidate (UPOS, FEATS) ids (none: every pair)."""
        if column == "xpos":
            lists = [self.xpos_by_upos.get(u, []) for u in upos.tolist()]
        else:
            found = {}
            lists = [found[w] if w in found else found.setdefault(w, self._feats(w))
                     for w in lowers]
        return candidate_arrays(lists)

    def _feats(self, lower: str) -> list[int]:
        """The candidate (UPOS, FEATS) ids of a word (lowercased); none: every pair."""
        guess = None
        for k in SUFFIXES:
            guess = self.feats_by_suffix.get(lower[-k:]) if len(lower) >= k else None
            if guess and len(guess) >= GUESSES:
                break
        if not guess:
            return []
        seen = self.feats_by_word.get(lower)
        return sorted(set(seen) | set(guess)) if seen else guess

    @staticmethod
    def _ids(classifier: Classifier, values: Iterable[str]) -> np.ndarray:
        index = {c: i for i, c in enumerate(classifier.classes)}
        return np.array([index.get(v, -1) for v in values], dtype=np.int64)

    def _gold(self, column: str, sentences: list[Sentence]) -> np.ndarray:
        """The ids of the column's classes in the sentences (-1 where unknown); FEATS:
        the (UPOS, FEATS) pairs."""
        if column == "feats":
            values = (pair(u, f) for s in sentences for u, f in zip(s.upos, s.feats))
        else:
            values = (v for s in sentences for v in getattr(s, column))
        return self._ids(getattr(self, column), values)

    def _inputs(self, column: str, lowers: list[str], upos: np.ndarray):
        """(given, cptr, cand) of a column's tagger: the UPOS ids that XPOS reads (-1 for
        the others) and the candidates (`_candidates`; every UPOS)."""
        if column == "upos":
            return (np.full(len(lowers), -1, dtype=np.int64),
                    np.zeros(len(lowers) + 1, dtype=np.int64), np.empty(0, dtype=np.int64))
        given = upos if column == "xpos" else np.full(len(lowers), -1, dtype=np.int64)
        return (given, *self._candidates(lowers, upos, column))

    # ------------------------------------------------------------------ training, tagging

    def fit(self, train: list[Sentence], dev: list[Sentence] | None = None) -> Tagger:
        """Train the three taggers on `train`, each keeping its best epoch on `dev`."""
        if not train:
            raise ArborparseError("the training data holds no sentences")
        self._learn_dictionaries(train)
        X, bounds = self._static(train)
        lowers = [w.lower() for s in train for w in s.forms]
        gold_upos = self._gold("upos", train)
        dev_data = None
        if dev:
            dX, dbounds = self._static(dev)
            dlowers = [w.lower() for s in dev for w in s.forms]
            dev_gold = {c: self._gold(c, dev) for c in COLUMNS}
            dev_data = (dX, dbounds, dlowers, dev_gold)
        self.history_ = {}
        for column in COLUMNS:
            choose = None if dev_data is None else self._dev_accuracy(column, dev_data)
            self.history_[column] = getattr(self, column).fit(
                (X, bounds, self._gold(column, train),
                 *self._inputs(column, lowers, gold_upos)),
                self.epochs, self.seed, choose, self.progress, column)
        return self

    @property
    def best_epoch_(self) -> int:
        """The latest of the three taggers' kept epochs: how long to train on data like
        this without development data (jackknifing)."""
        return max(getattr(self, c).best_epoch_ for c in COLUMNS)

    def _dev_accuracy(self, column, dev_data):
        dX, dbounds, dlowers, dev_gold = dev_data
        given, cptr, cand = self._inputs(column, dlowers, np.maximum(dev_gold["upos"], 0))

        def accuracy(classifier):
            predicted = classifier.predict(dX, dbounds, given, cptr, cand)
            return 100.0 * float((predicted == dev_gold[column]).mean())
        return accuracy

    def predict(self, sentences: list[Sentence]) -> dict[str, list[list[str]]]:
        """The predicted UPOS, XPOS and FEATS of every word: {column: [[tag, ...], ...]}."""
        X, bounds = self._static(sentences)
        lowers = [w.lower() for s in sentences for w in s.forms]
        upos = None
        out = {}
        for column in COLUMNS:
            ids = getattr(self, column).predict(X, bounds, *self._inputs(column, lowers, upos))
            upos = ids if column == "upos" else upos
            names = getattr(self, column).classes
            flat = [names[i] for i in ids.tolist()]
            if column == "feats":  # the FEATS of the (UPOS, FEATS) pairs
                flat = [p.split("\t", 1)[1] for p in flat]
            out[column] = [flat[bounds[k]:bounds[k + 1]] for k in range(len(sentences))]
        return out

    # ------------------------------------------------------------------ model files

    def parts(self) -> tuple[dict, dict]:
        """(header, arrays) for a model file: the dictionaries (JSON) and the weights."""
        header = {"ambiguity": self.ambiguity,
                  "classes": {c: getattr(self, c).classes for c in COLUMNS},
                  "xpos_by_upos": {str(k): v for k, v in self.xpos_by_upos.items()},
                  "feats_by_word": self.feats_by_word,
                  "feats_by_suffix": self.feats_by_suffix}
        return header, {c: getattr(self, c).weights for c in COLUMNS}

    @classmethod
    def from_parts(cls, header: dict, arrays: dict, path) -> Tagger:
        from arborparse.io.model_files import ModelFileError

        tagger = cls(progress=False)
        try:
            tagger.ambiguity = dict(header["ambiguity"])
            for c in COLUMNS:
                setattr(tagger, c, Classifier(header["classes"][c], weights=arrays[c],
                                              parts=pair_parts if c == "feats" else None))
            tagger.xpos_by_upos = {int(k): v for k, v in header["xpos_by_upos"].items()}
            tagger.feats_by_word = dict(header["feats_by_word"])
            tagger.feats_by_suffix = dict(header["feats_by_suffix"])
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ModelFileError(f"{path}: the tagger in the model file is invalid ({e})") from e
        return tagger

    def tag(self, sentences: Iterable[Sentence]) -> list[Sentence]:
        """The sentences with UPOS, XPOS and FEATS predicted; nothing else changes."""
        sentences = list(sentences)
        tags = self.predict(sentences)
        return [s.with_columns({UPOS: u, XPOS: x, FEATS: f})
                for s, u, x, f in zip(sentences, tags["upos"], tags["xpos"], tags["feats"])]
