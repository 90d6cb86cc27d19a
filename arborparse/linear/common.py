"""What every trainer of the first-order model shares: checking options, preparing the
gold data, and the epoch bookkeeping (progress bar, dev evaluation, best epoch)."""

from __future__ import annotations

import sys
from collections.abc import Iterable

import numpy as np
from tqdm import tqdm

from arborparse.errors import ArborparseError
from arborparse.eval import evaluate
from arborparse.io.conllu import Sentence
from arborparse.io.validate import check_tree
from arborparse.linear.model import DECODERS, Encoded
from arborparse.linear.parser import Parser
from arborparse.training import keeps_best, save_parser
from arborparse.transforms import projectivize


def check_decoders(decoder: str, train_decoder: str | None) -> str:
    """The training decoder (default: `decoder`); raises for unknown names."""
    for name, value in (("decoder", decoder), ("train_decoder", train_decoder or decoder)):
        if value not in DECODERS:
            raise ArborparseError(f"unknown {name} {value!r}; choose one of {DECODERS}")
    return train_decoder or decoder


def gold_data(train: list[Sentence], single_root: bool, projective: bool = False):
    """(labels, encoded sentences, gold heads, gold label ids) of the training data.

    Every gold tree is checked (single-rooted if asked); with `projective`, non-projective
    trees are replaced by their closest projective trees.
    """
    if not train:
        raise ArborparseError("the training data holds no sentences")
    labels = sorted({d for s in train for d in s.deprels})
    index = {d: i for i, d in enumerate(labels)}
    encoded, heads, ids = [], [], []
    for s in train:
        check_tree(s, single_root)
        if projective:
            s = projectivize(s, single_root)
        encoded.append(Encoded.of(s))
        heads.append(s.heads)
        ids.append(np.array([-1] + [index[d] for d in s.deprels], dtype=np.int64))
    return labels, encoded, heads, ids


class Epochs:
    """The epoch loop's bookkeeping for `trainer`: a progress bar per epoch, the dev scores
    after it, and the trainer's ``history_``, ``best_epoch_`` and ``parser_`` (best dev LAS,
    or the last epoch without dev), kept up to date after every epoch; the best parser is
    saved to `save_best` (a path) as soon as it is best (see `arborparse.training`). With
    `calibrate` (models not trained as distributions: perceptron, MIRA, EG) each best
    parser's temperature is first fitted on dev (`Parser.calibrate`)."""

    def __init__(self, trainer, dev: list[Sentence] | None, save_best=None,
                 calibrate: bool = False):
        self.trainer = trainer
        self.calibrate = calibrate
        self.epochs = trainer.epochs
        self.dev = dev
        self.progress = trainer.progress
        self.save_best = save_best
        trainer.history_, trainer.best_epoch_, trainer.parser_ = [], None, None
        self._best_score = -1.0

    @property
    def history(self) -> list[dict]:
        return self.trainer.history_

    def bar(self, epoch: int, items: Iterable) -> Iterable:
        bar = tqdm(items, desc=f"epoch {epoch}/{self.epochs}", unit="sent",
                   disable=None if self.progress else True, file=sys.stderr, leave=False)
        if self.history and "UAS" in self.history[-1]:
            last = self.history[-1]
            bar.set_postfix_str(f"dev UAS {last['UAS']:.2f} LAS {last['LAS']:.2f}")
        return bar

    def end(self, epoch: int, parser: Parser, record: dict, summary: str) -> None:
        """Evaluate the epoch's parser on dev, keep (and save) it if best, print one line."""
        score = epoch
        if self.dev:
            scores = evaluate(self.dev, parser.parse(self.dev))
            record.update(UAS=scores["UAS"], LAS=scores["LAS"])
            score = scores["LAS"]
        self.history.append({"epoch": epoch, **record})
        best = score > self._best_score
        if best:
            if self.calibrate and self.dev:
                self.history[-1]["temperature"] = parser.calibrate(self.dev)
            if self.save_best is not None:
                save_parser(parser, self.save_best)
            self._best_score = score
            self.trainer.best_epoch_, self.trainer.parser_ = epoch, parser
        if self.progress:
            line = f"epoch {epoch}/{self.epochs}  {summary}"
            if self.dev:
                line += f"  dev UAS {record['UAS']:.2f}  LAS {record['LAS']:.2f}"
                line += "  (best)" if best else ""
                if "temperature" in self.history[-1]:
                    line += f"  T {self.history[-1]['temperature']:.3g}"
            tqdm.write(line, file=sys.stderr)


class ChooseC:
    """Choose the regularization constant C on development data: train ``make(C)`` for each
    C of `grid` and keep the parser with the best development LAS over every C and epoch
    (scikit-learn's grid search, on the dev set).

    After `fit`: ``parser_``, ``C_`` (the chosen C), ``best_epoch_`` (its best epoch),
    ``trainer_`` (its fitted trainer) and ``history_`` (one dict per C: its best dev LAS and
    epoch). With `save_best`, the best parser so far is saved there after each C.
    """

    def __init__(self, make, grid, progress: bool = True):
        self.make = make
        self.grid = tuple(grid)
        self.progress = progress

    @keeps_best
    def fit(self, train: list[Sentence], dev: list[Sentence] | None = None,
            save_best=None) -> ChooseC:
        if not dev:
            raise ArborparseError("choosing C needs development data: give it (--dev), or "
                                  "give C")
        self.history_, best = [], -1.0
        for C in self.grid:
            trainer = self.make(C)
            if self.progress:
                tqdm.write(f"C = {C:g}", file=sys.stderr)
            trainer.fit(train, dev)
            las = max(record["LAS"] for record in trainer.history_)
            self.history_.append({"C": C, "LAS": las, "epoch": trainer.best_epoch_})
            if las > best:
                best, self.C_, self.trainer_ = las, C, trainer
                self.best_epoch_, self.parser_ = trainer.best_epoch_, trainer.parser_
                if save_best is not None:
                    save_parser(self.parser_, save_best)
        if self.progress:
            tried = ", ".join(f"{r['C']:g}: {r['LAS']:.2f}" for r in self.history_)
            tqdm.write(f"chose C = {self.C_:g} (dev LAS by C: {tried})", file=sys.stderr)
        return self
