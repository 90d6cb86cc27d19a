"""`SentenceSplitter`: where sentences end in a paragraph's tokens, from the words around.

The tokenizer's character classifier sees a few characters and the chunks beside them; in a
text without punctuation (Gothic, classical languages, transcripts) that is too little to
find a sentence's end. This second, word-level classifier reads each token with the three
tokens on either side: their forms, suffixes, prefixes and shapes, and the pairs of
neighbours, and decides, token after token, whether a sentence ends there (the averaged
perceptron of `arborparse.text.classifier`, with the two decisions before as history). The
tokenizer keeps it where it finds the development set's sentences better than the
character classifier does. (A word's place in the training sentences, first or last,
overfits as a feature: Gothic-PROIEL dev sentence ends 57.5 F1 with it, 61.4 without.)
"""

from __future__ import annotations

import numpy as np

from arborparse.text.classifier import Classifier, Trained, candidate_arrays, offsets
from arborparse.text.features import LOWER, WORD, mix, word_features

LABELS = ("on", "end")
ON, END = range(2)
PREFIX3, SHAPE = WORD.index("p3"), WORD.index("shape")
# columns beyond `word_features`: w-3, w+3, (w+1, w+2), (w-2, w-1), p3+1, (shape+1, shape)
EXTRA = 6


def _far(column: np.ndarray, k: int, lengths: list[int]) -> np.ndarray:
    """The values of `column` k places away within each paragraph (a stand-in beyond)."""
    out = np.full(column.shape, 0x5EED + k, dtype=np.uint64)
    start = 0
    for n in lengths:
        part = column[start:start + n]
        if abs(k) < n:
            if k > 0:
                out[start:start + n - k] = part[k:]
            else:
                out[start - k:start + n] = part[:n + k]
        start += n
    return out


def token_features(paragraphs: list[list[str]]) -> np.ndarray:
    """(tokens, columns) uint32 hashes: `word_features` over each paragraph read as one
    sequence (without ambiguity classes), and the farther context."""
    near = word_features(paragraphs, {}).astype(np.uint64)
    lengths = [len(p) for p in paragraphs]
    lower, prefix, look = near[:, LOWER], near[:, PREFIX3], near[:, SHAPE]
    far = [(_far(lower, -3, lengths),), (_far(lower, 3, lengths),),
           (_far(lower, 1, lengths), _far(lower, 2, lengths)),
           (_far(lower, -2, lengths), _far(lower, -1, lengths)),
           (_far(prefix, 1, lengths),), (_far(look, 1, lengths), look)]
    out = np.empty((len(lower), near.shape[1] + EXTRA), dtype=np.uint32)
    out[:, :near.shape[1]] = near
    out[:, near.shape[1]:] = mix(900, far)
    return out


class SentenceSplitter(Trained):
    """Decides, for each token of a paragraph, whether its sentence ends there.

    Parameters as in `arborparse.text.classifier.Trained`.
    """

    kind = "sentences"

    def _arrays(self, paragraphs: list[list[str]]):
        X = token_features(paragraphs)
        lengths = [len(p) for p in paragraphs]
        # the last token of a paragraph ends its sentence
        lists = [[END] if k == n - 1 else [ON, END] for n in lengths for k in range(n)]
        return X, offsets(lengths), *candidate_arrays(lists)

    def fit(self, paragraphs: list[list[str]], ends: list[np.ndarray],
            dev: tuple[list[list[str]], list[np.ndarray]] | None = None) -> SentenceSplitter:
        """Learn from paragraphs (lists of token forms) and where their sentences end
        (boolean arrays); keep the epoch, and the shift of the sentence ends' bias, whose
        dev sentences are best (`sentence_f1`)."""
        X, bounds, cptr, cand = self._arrays(paragraphs)
        gold = np.concatenate(ends).astype(np.int64)
        self.classifier = Classifier(list(LABELS), self.bits)
        f1 = None
        if dev:
            dX, dbounds, dcptr, dcand = self._arrays(dev[0])
            dgold = np.concatenate(dev[1])

            def f1(classifier):
                return sentence_f1(classifier.predict(dX, dbounds, np.full(len(dX), -1),
                                                      dcptr, dcand) == END, dgold)
        self.history_ = self.classifier.fit((X, bounds, gold, np.full(len(gold), -1), cptr,
                                             cand), self.epochs, self.seed, f1,
                                            self.progress, "sentences", "sentence F1")
        if dev:
            self.bias_ = shift_bias(self.classifier, X[0, 0], END, lambda: f1(self.classifier))
        return self

    def ends(self, tokens: list[str]) -> np.ndarray:
        """Whether a sentence ends at each token of one paragraph (the last always)."""
        if not tokens:
            return np.zeros(0, dtype=bool)
        X, bounds, cptr, cand = self._arrays([tokens])
        return self.classifier.predict(X, bounds, np.full(len(X), -1), cptr, cand) == END

    def margins(self, tokens: list[str]) -> np.ndarray:
        """How much more each token of one paragraph scores a sentence end than not (what
        `ends` decides by; `arborparse.text.syntax` weighs it against a window parser's
        crossing arcs)."""
        X, bounds, cptr, cand = self._arrays([tokens])
        return self.classifier.margins(X, bounds, np.full(len(X), -1), cptr, cand, END, ON)

    def parts(self) -> tuple[dict, dict]:
        return {}, {"weights": self.classifier.weights}

    @classmethod
    def from_parts(cls, header: dict, arrays: dict) -> SentenceSplitter:
        splitter = cls(progress=False)
        splitter.classifier = Classifier(list(LABELS), weights=arrays["weights"])
        return splitter


def sentence_f1(predicted: np.ndarray, gold: np.ndarray) -> float:
    """F1 (in %) of the sentences that sentence ends (boolean arrays over the same tokens)
    make: a sentence is found when both its ends are, as the CoNLL 2018 measure counts."""
    def spans(ends):
        last = np.flatnonzero(ends)
        return set(zip(np.concatenate([[0], last[:-1] + 1]).tolist(), last.tolist()))
    p, g = spans(predicted), spans(gold)
    return 200.0 * len(p & g) / max(len(p) + len(g), 1)


def shift_bias(classifier: Classifier, bias_feature: int, label: int, f1) -> int:
    """Shift the weight of the bias feature for `label` by the multiple of the mean weight
    that makes `f1()` (a development score) best, and return the multiple (ties: the
    smaller shift). A text without punctuation (Gothic) gets too few sentence ends from
    the perceptron alone."""
    weights = classifier.weights
    k = classifier.weight_index(bias_feature, label)
    learned = weights[weights != 0]
    if not len(learned):  # it learned nothing (no sentence ends to learn): nothing to shift
        return 0
    base, unit = weights[k], np.abs(learned).mean()
    tried = []
    for times in (0, -1, 1, -2, 2, -4, 4, 8, 12, 16):
        weights[k] = base + times * unit
        tried.append((f1(), -abs(times), times))
    best = max(tried)[2]
    weights[k] = base + best * unit
    return best
