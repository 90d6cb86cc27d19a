"""`Tagger`: UPOS, XPOS and FEATS from the words of a sentence, trained on any treebank.

Three averaged perceptrons (`arborparse.text.classifier`), each decoding left to right:
UPOS over every UPOS; then XPOS and FEATS (whole bundles), each reading the word's UPOS.
XPOS candidates are the XPOS seen with that UPOS in training; FEATS candidates the bundles
seen with the word and its UPOS together with a suffix guess: those seen with the UPOS and
the longest suffix (4 to 1 characters) seen with at least `GUESSES` of them, else with the
UPOS alone (measured on Turkish-IMST dev: UFeats 84.7, against 81.5 for the word's own
bundles alone and 84.2, five times slower, for every bundle of the UPOS). A bundle's score
is its own weights' and those of its features (`features_of`), which it shares with every
bundle that has them (dev UFeats from the predicted UPOS, gold words, 10 epochs: Turkish-IMST
83.79 -> 84.53, Finnish-TDT 81.06 -> 81.34, German-GSD 73.93 -> 75.49, Russian-GSD 77.46
-> 78.14, Gothic-PROIEL 86.56 -> 87.44, Hungarian-Szeged 89.86 -> 89.82; suffix guesses of
up to 6 characters instead of 4 changed these by -0.12 to +0.34). In training the
second-level taggers read the gold UPOS; each tagger keeps the epoch with the
best development accuracy (the last without development data).
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
VERSION = 4  # of the tagger inside a model file (4: the classes of a feature side by side)
SUFFIXES = (4, 3, 2, 1)
GUESSES = 5  # a suffix guesses FEATS when it was seen with at least this many bundles


def features_of(bundle: str) -> list[str]:
    """The features of a FEATS bundle (``Case=Dat|Number=Sing``), which it shares with the
    other bundles that have them; ``_`` has none."""
    return [] if bundle == "_" else bundle.split("|")


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
        upos_count, xpos_count, feats_count = Counter(), Counter(), Counter()
        for s in train:
            for form, u, x, f in zip(s.forms, s.upos, s.xpos, s.feats):
                tags[form.lower()].add(u)
                frequency[form.lower()] += 1
                upos_count[u] += 1
                xpos_count[x] += 1
                feats_count[f] += 1
        # words seen once have no ambiguity class, so that training meets words without
        # one as tagging new text does
        self.ambiguity = {w: "|".join(sorted(t)) for w, t in tags.items()
                          if frequency[w] > 1}
        self.upos = Classifier(sorted(upos_count), self.bits)
        self.xpos = Classifier(sorted(xpos_count), self.bits)
        self.feats = Classifier(sorted(feats_count), self.bits, parts=features_of)
        u_id = {u: i for i, u in enumerate(self.upos.classes)}
        x_id = {x: i for i, x in enumerate(self.xpos.classes)}
        f_id = {f: i for i, f in enumerate(self.feats.classes)}
        xpos_by_upos, by_word, by_suffix, by_upos = (defaultdict(set) for _ in range(4))
        for s in train:
            for form, u, x, f in zip(s.forms, s.upos, s.xpos, s.feats):
                lower, ui = form.lower(), u_id[u]
                xpos_by_upos[ui].add(x_id[x])
                by_word[ui, lower].add(f_id[f])
                by_upos[ui].add(f_id[f])
                for k in SUFFIXES:
                    if len(lower) >= k:
                        by_suffix[ui, lower[-k:]].add(f_id[f])
        self.xpos_by_upos = {k: sorted(v) for k, v in xpos_by_upos.items()}
        self.feats_by_word = {k: sorted(v) for k, v in by_word.items()}
        self.feats_by_suffix = {k: sorted(v) for k, v in by_suffix.items()}
        self.feats_by_upos = {k: sorted(v) for k, v in by_upos.items()}

    # ------------------------------------------------------------------ arrays

    def _static(self, sentences: list[Sentence]):
        """Static features of all words and the sentence bounds."""
        return (word_features([s.forms for s in sentences], self.ambiguity),
                offsets([len(s) for s in sentences]))

    def _candidates(self, lowers: list[str], upos: np.ndarray, column: str):
        """(cptr, cand): the candidate XPOS or FEATS ids of each word given its UPOS id."""
        if column == "xpos":
            lists = [self.xpos_by_upos.get(u, []) for u in upos.tolist()]
        else:
            found = {}
            lists = [found[key] if key in found else found.setdefault(key, self._feats(*key))
                     for key in zip(lowers, upos.tolist())]
        return candidate_arrays(lists)

    def _feats(self, lower: str, u: int) -> list[int]:
        """The candidate FEATS bundles of a word (lowercased) with UPOS id u."""
        guess = None
        for k in SUFFIXES:
            guess = self.feats_by_suffix.get((u, lower[-k:])) if len(lower) >= k else None
            if guess and len(guess) >= GUESSES:
                break
        guess = guess or self.feats_by_upos.get(u, [])
        seen = self.feats_by_word.get((u, lower))
        return sorted(set(seen) | set(guess)) if seen else guess

    @staticmethod
    def _ids(classifier: Classifier, values: Iterable[str]) -> np.ndarray:
        index = {c: i for i, c in enumerate(classifier.classes)}
        return np.array([index.get(v, -1) for v in values], dtype=np.int64)

    # ------------------------------------------------------------------ training, tagging

    def fit(self, train: list[Sentence], dev: list[Sentence] | None = None) -> Tagger:
        """Train the three taggers on `train`, each keeping its best epoch on `dev`."""
        if not train:
            raise ArborparseError("the training data holds no sentences")
        self._learn_dictionaries(train)
        X, bounds = self._static(train)
        lowers = [w.lower() for s in train for w in s.forms]
        gold_upos = self._ids(self.upos, (u for s in train for u in s.upos))
        dev_data = None
        if dev:
            dX, dbounds = self._static(dev)
            dlowers = [w.lower() for s in dev for w in s.forms]
            dev_gold = {c: self._ids(getattr(self, c), (v for s in dev
                                                        for v in getattr(s, c)))
                        for c in COLUMNS}
            dev_data = (dX, dbounds, dlowers, dev_gold)
        self.history_ = {}
        none = np.full(len(gold_upos), -1, dtype=np.int64)
        empty = (np.zeros(len(gold_upos) + 1, dtype=np.int64), np.empty(0, dtype=np.int64))
        for column in COLUMNS:
            classifier = getattr(self, column)
            gold = gold_upos if column == "upos" else self._ids(
                classifier, (v for s in train for v in getattr(s, column)))
            given = none if column == "upos" else gold_upos
            cptr, cand = empty if column == "upos" else self._candidates(lowers, gold_upos,
                                                                         column)
            choose = None if dev_data is None else self._dev_accuracy(column, dev_data)
            self.history_[column] = classifier.fit(
                (X, bounds, gold, given, cptr, cand), self.epochs, self.seed, choose,
                self.progress, column)
        return self

    @property
    def best_epoch_(self) -> int:
        """The latest of the three taggers' kept epochs: how long to train on data like
        this without development data (jackknifing)."""
        return max(getattr(self, c).best_epoch_ for c in COLUMNS)

    def _dev_accuracy(self, column, dev_data):
        dX, dbounds, dlowers, dev_gold = dev_data
        given = np.full(len(dlowers), -1, dtype=np.int64) if column == "upos" else \
            np.maximum(dev_gold["upos"], 0)
        if column == "upos":
            cptr, cand = np.zeros(len(dlowers) + 1, dtype=np.int64), np.empty(0, np.int64)
        else:
            cptr, cand = self._candidates(dlowers, given, column)

        def accuracy(classifier):
            predicted = classifier.predict(dX, dbounds, given, cptr, cand)
            return 100.0 * float((predicted == dev_gold[column]).mean())
        return accuracy

    def predict(self, sentences: list[Sentence]) -> dict[str, list[list[str]]]:
        """The predicted UPOS, XPOS and FEATS of every word: {column: [[tag, ...], ...]}."""
        X, bounds = self._static(sentences)
        lowers = [w.lower() for s in sentences for w in s.forms]
        none = np.full(len(lowers), -1, dtype=np.int64)
        cptr0 = np.zeros(len(lowers) + 1, dtype=np.int64)
        upos = self.upos.predict(X, bounds, none, cptr0, np.empty(0, dtype=np.int64))
        ids = {"upos": upos}
        for column in ("xpos", "feats"):
            cptr, cand = self._candidates(lowers, upos, column)
            ids[column] = getattr(self, column).predict(X, bounds, upos, cptr, cand)
        out = {}
        for column, values in ids.items():
            names = getattr(self, column).classes
            flat = [names[i] for i in values.tolist()]
            out[column] = [flat[bounds[k]:bounds[k + 1]] for k in range(len(sentences))]
        return out

    # ------------------------------------------------------------------ model files

    def parts(self) -> tuple[dict, dict]:
        """(header, arrays) for a model file: the dictionaries (JSON) and the weights."""
        def keyed(mapping):
            return {"\t".join(map(str, k)) if isinstance(k, tuple) else str(k): v
                    for k, v in mapping.items()}
        header = {"ambiguity": self.ambiguity,
                  "classes": {c: getattr(self, c).classes for c in COLUMNS},
                  "xpos_by_upos": keyed(self.xpos_by_upos),
                  "feats_by_word": keyed(self.feats_by_word),
                  "feats_by_suffix": keyed(self.feats_by_suffix),
                  "feats_by_upos": keyed(self.feats_by_upos)}
        return header, {c: getattr(self, c).weights for c in COLUMNS}

    @classmethod
    def from_parts(cls, header: dict, arrays: dict, path) -> Tagger:
        from arborparse.io.model_files import ModelFileError

        tagger = cls(progress=False)
        try:
            tagger.ambiguity = dict(header["ambiguity"])
            for c in COLUMNS:
                setattr(tagger, c, Classifier(header["classes"][c], weights=arrays[c],
                                              parts=features_of if c == "feats" else None))

            def pairs(mapping):
                return {(int(k.split("\t", 1)[0]), k.split("\t", 1)[1]): v
                        for k, v in mapping.items()}
            tagger.xpos_by_upos = {int(k): v for k, v in header["xpos_by_upos"].items()}
            tagger.feats_by_upos = {int(k): v for k, v in header["feats_by_upos"].items()}
            tagger.feats_by_word = pairs(header["feats_by_word"])
            tagger.feats_by_suffix = pairs(header["feats_by_suffix"])
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ModelFileError(f"{path}: the tagger in the model file is invalid ({e})") from e
        return tagger

    def tag(self, sentences: Iterable[Sentence]) -> list[Sentence]:
        """The sentences with UPOS, XPOS and FEATS predicted; nothing else changes."""
        sentences = list(sentences)
        tags = self.predict(sentences)
        return [s.with_columns({UPOS: u, XPOS: x, FEATS: f})
                for s, u, x, f in zip(sentences, tags["upos"], tags["xpos"], tags["feats"])]
