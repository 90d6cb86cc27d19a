"""`SyntaxEnds`: sentence ends chosen with a parser's trees as well as the words.

Two sentences share no arc. Parsed as one text, a paragraph's words should then have few
arcs over the gap where a sentence ends, and many inside a sentence. `crossing` measures
this: it parses overlapping windows of `WINDOW` words (every `STRIDE` words), each as one
sentence whose words may attach to the root in any number (several sentences, several
roots), cut from the paragraph tagged as a whole (`arborparse.pipeline.Pipeline.crossing`),
and takes, for each gap between two words, the expected number of arcs over it under the
parser's tree distribution (the arc marginals, `arborparse.trees`), averaged over the
windows that hold it, each weighted by the gap's distance to the window's nearer edge.

The parser that reads the windows is trained on such windows (`window_parser`): the
training paragraphs cut into windows as `crossing` cuts a paragraph (`spans`), with the
treebank's arcs inside each window and its other words on the root (each sentence's root,
and the words whose head lies outside the window), a first-order linear parser of several
roots. A parser trained on sentences has only seen one root word per sentence and few
arcs to it; this one learns where a window's trees begin and end (Gothic-PROIEL dev, the
expected crossing arcs at a gold sentence end, median, against elsewhere: 0.56 against
1.98, where the pipeline's own parser gave 1.17 against 2.20; dev sentence F1 with two
halves of the paragraph each fitted on the other, mean 36.12 against 30.38).

`SyntaxEnds` weighs this against the word-level splitter's margin
(`arborparse.text.sentences.SentenceSplitter.margins`): a logistic regression over
(margin, crossing, log(crossing + 0.1), 1) fitted on the development paragraphs, its
threshold chosen there for the sentences' F1. `Tokenizer.fit_syntax` keeps it, with its
window parser, only where the development sentences come out better by `GAIN` points of
F1 than with the margin alone, fitted and thresholded on the same paragraphs the same way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

import numpy as np

from arborparse.io.conllu import DEPREL, FEATS, LEMMA, UPOS, XPOS, Sentence
from arborparse.io.model_files import inner, nested
from arborparse.io.plain import words_sentence
from arborparse.text.sentences import sentence_f1

WINDOW, STRIDE = 30, 10  # Gothic-PROIEL dev sentence F1: 30/10 over 20/5, 40/10, 60/15
WINDOW_BITS = 20  # of `window_parser`'s weights (Gothic-PROIEL dev sentence F1 no lower than
# with 23)
WINDOW_EPOCHS = 5  # of `window_parser` (Gothic-PROIEL: dev UAS 77.05 at 5, 77.10 at most in 10)
GAIN = 0.5  # dev sentence F1 over the margin alone, to pay for reading each word 3 times
MARGIN_ONLY = (0, 3)  # the features of the margin-alone model
L2 = 1e-3


def crossing(n: int,
             head_marginals: Callable[[list[tuple[int, int]]], Iterable[np.ndarray]]
             ) -> np.ndarray:
    """The expected number of arcs over the gap after each of a paragraph's `n` words (the
    last: 0), from `head_marginals(spans)`: for each window, the words a..b-1 of the
    paragraph given as (a, b), P(h -> m), a (b-a+1, b-a+1) array with the root at 0, over
    trees with any number of root words."""
    total, weight = np.zeros(n), np.zeros(n)
    if n < 2:
        return total
    cut = spans(n)
    for (a, b), mu in zip(cut, head_marginals(cut), strict=True):
        m = b - a
        mu = np.asarray(mu)[1:, 1:]
        both = mu + mu.T  # arcs between words, either direction
        # over the gap after word g - 1 (g = 1..m-1): arcs from the first g words to the
        # others, both[:g, g:].sum(), from the sums of the first g rows, summed from the end
        rows = np.cumsum(both, axis=0)[:-1]
        over = np.cumsum(rows[:, ::-1], axis=1)[:, ::-1][np.arange(m - 1), np.arange(1, m)]
        near = np.minimum(np.arange(1, m), m - np.arange(1, m))
        total[a:a + m - 1] += near * over
        weight[a:a + m - 1] += near
    return np.divide(total, weight, out=np.zeros(n), where=weight > 0)


def spans(n: int) -> list[tuple[int, int]]:
    """The windows (a, b) of a paragraph of `n` words, its words a..b-1: `WINDOW` words
    every `STRIDE` words, the last ending with the paragraph (all of them, where no more
    than `WINDOW`)."""
    starts = list(range(0, max(n - WINDOW, 0) + 1, STRIDE))
    if starts[-1] + WINDOW < n:
        starts.append(n - WINDOW)
    return [(a, min(a + WINDOW, n)) for a in starts]


def windows(paragraphs: Iterable[list[Sentence]]) -> list[Sentence]:
    """`window_parser`'s training windows of paragraphs (lists of sentences with trees),
    those `crossing` reads (`spans`): each one CoNLL-X sentence (several roots), with its
    words' tags and the treebank's arcs among them; a word whose head is the root or
    outside the window is on the root, as ``root``."""
    out = []
    for group in paragraphs:
        words = [(s.forms[i], *(s.column(c)[i] for c in (UPOS, XPOS, FEATS, LEMMA, DEPREL)))
                 for s in group for i in range(len(s))]
        heads, at = [], 0  # 0-based in the paragraph; -1: the root
        for s in group:
            heads.extend(int(h) - 1 + at if h > 0 else -1 for h in s.heads[1:])
            at += len(s)
        heads = np.array(heads)
        for a, b in spans(len(words)):
            cut = words[a:b]
            inside = (heads[a:b] >= a) & (heads[a:b] < b)
            window = words_sentence([w[0] for w in cut], len(out) + 1).with_columns(
                {c: [w[k] for w in cut] for k, c in enumerate((UPOS, XPOS, FEATS, LEMMA), 1)})
            window = dataclasses.replace(window, format="conllx")
            out.append(window.with_tree(
                np.concatenate([[0], np.where(inside, heads[a:b] - a + 1, 0)]),
                [w[5] if keep else "root" for w, keep in zip(cut, inside)]))
    return out


def window_parser(train: list[Sentence], dev: list[Sentence], seed: int = 0,
                  progress: bool = False):
    """The linear parser of `windows` (first order, several roots, `WINDOW_BITS`,
    `WINDOW_EPOCHS`), trained on the training sentences' windows with their predicted tags,
    its epoch and temperatures chosen on dev's. (Those tags were predicted sentence by
    sentence, where `crossing`'s are the paragraph's, tagged as a whole; and the dev
    sentences that choose its epoch also judge, in `Tokenizer.fit_syntax`, whether the view
    is kept.) `progress`: its epochs' lines on stderr. An interrupt is a KeyboardInterrupt
    (its epochs are its caller's to tell)."""
    from arborparse import registry
    from arborparse.text.tokenizer import grouped
    from arborparse.training import TrainingInterrupted

    table = registry.options_table("linear").of(
        {"order": 1, "multi_root": True, "labeler": False, "tag_reach": False,
         "hash_bits": WINDOW_BITS,
         "epochs": WINDOW_EPOCHS, "seed": seed})
    trainer = registry.trainer("linear", table, dev=True, progress=progress)
    try:
        return trainer.fit(windows(grouped(train)), windows(grouped(dev))).parser_
    except TrainingInterrupted:
        raise KeyboardInterrupt from None


class SyntaxEnds:
    """Sentence ends from the splitter's margins and the crossing arcs of `parser` (a
    `window_parser`; see the module docstring): `weights` of (margin / scale, crossing,
    log(crossing + 0.1), 1), `threshold`."""

    def __init__(self, weights=(0.0,) * 4, threshold: float = 0.0, scale: float = 1.0,
                 parser=None):
        self.weights = np.asarray(weights, dtype=float)
        self.threshold = float(threshold)
        self.scale = float(scale)
        self.parser = parser

    def _features(self, margins: np.ndarray, crossings: np.ndarray) -> np.ndarray:
        return np.stack([margins / self.scale, crossings,
                         np.log(np.maximum(crossings, 0) + 0.1), np.ones(len(margins))], 1)

    def ends(self, margins: np.ndarray, crossings: np.ndarray) -> np.ndarray:
        """Whether a sentence ends at each token of a paragraph (the last always)."""
        out = self._features(margins, crossings) @ self.weights > self.threshold
        if len(out):
            out[-1] = True
        return out

    @classmethod
    def fit(cls, margins: list[np.ndarray], crossings: list[np.ndarray],
            ends: list[np.ndarray], use: tuple[int, ...] = (0, 1, 2, 3)
            ) -> tuple[SyntaxEnds, float]:
        """Fitted on paragraphs (each token's margin, crossing and gold end; the last token
        of a paragraph, always an end, left out of the regression) with the features `use`
        (the others' weights 0): the model and its sentence F1 on these paragraphs."""
        from scipy.optimize import minimize  # here: training only (a slow import)

        scale = float(np.mean(np.abs(np.concatenate(margins)))) or 1.0
        model = cls(scale=scale)
        X = np.concatenate([model._features(m, c)[:-1] for m, c in zip(margins, crossings)])
        X = X[:, list(use)]
        y = np.concatenate([e[:-1] for e in ends]).astype(float)

        def loss(w):
            p = 1.0 / (1.0 + np.exp(-(X @ w)))
            value = -np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))
            return value + L2 * w @ w, X.T @ (p - y) / len(y) + 2 * L2 * w

        model.weights = np.zeros(4)
        model.weights[list(use)] = minimize(loss, np.zeros(len(use)), jac=True,
                                            method="L-BFGS-B").x
        gold = np.concatenate(ends)

        def f1(threshold):
            model.threshold = threshold
            return sentence_f1(np.concatenate([model.ends(m, c) for m, c in
                                               zip(margins, crossings)]), gold)

        best = max((f1(t), -abs(t), t) for t in np.linspace(-3, 3, 61))
        model.threshold = float(best[2])
        return model, best[0]

    def parts(self) -> tuple[dict, dict]:
        if self.parser is None:
            raise ValueError("a view of sentence ends is saved with its parser: give it one")
        header, arrays = self.parser.parts()
        return ({"weights": self.weights.tolist(), "threshold": self.threshold,
                 "scale": self.scale, "parser": header}, nested("parser", arrays))

    @classmethod
    def from_parts(cls, header: dict, arrays: dict, path) -> SyntaxEnds:
        """Raises KeyError, TypeError or ValueError for invalid parts (the parser's own
        problems, `arborparse.io.model_files.ModelFileError`)."""
        from arborparse import registry

        weights = [float(w) for w in header["weights"]]
        if len(weights) != 4:
            raise ValueError(f"{len(weights)} weights, not 4")
        parser = registry.parser_class("linear").from_parts(header["parser"],
                                                            inner("parser", arrays), path)
        return cls(weights, float(header["threshold"]), float(header["scale"]), parser)
