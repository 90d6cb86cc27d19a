"""What every trainer of the linear model shares: checking options, preparing the gold
data, its epoch loop (calibrated on dev where the model is not a distribution), and
choosing C on dev."""

from __future__ import annotations

import sys

import numpy as np
from tqdm import tqdm

from arborparse.errors import ArborparseError
from arborparse.io.conllu import Sentence
from arborparse.io.validate import MULTI_ROOT, check_tree
from arborparse.linear.model import DECODERS, Encoded
from arborparse.linear.reach import keep_tag_reach
from arborparse.training import Loop, keeps_best, save_parser
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
        check_tree(s, single_root, MULTI_ROOT)
        if projective:
            s = projectivize(s, single_root)
        encoded.append(Encoded.of(s))
        heads.append(s.heads)
        ids.append(np.array([-1] + [index[d] for d in s.deprels], dtype=np.int64))
    return labels, encoded, heads, ids


def loop(trainer, dev: list[Sentence] | None, save_best=None, calibrate: bool = False,
         **settings) -> Loop:
    """The epoch loop (`arborparse.training.Loop`) of a linear trainer. With `calibrate`
    (models not trained as distributions: perceptron, MIRA, EG) each best parser's
    temperatures (heads and labels) are first fitted on dev (`LinearParser.calibrate`)."""

    def on_best(parser, record: dict) -> dict:
        found = keep_tag_reach(parser, dev, record)
        if found.get("tag_reach_dropped"):  # later epochs are scored as the one kept was
            trainer.tag_reach_ = None
        if calibrate:  # over the trees within the reach kept
            found.update(parser.calibrate(dev))
        return found
    return Loop(trainer, dev, save_best, on_best=on_best, **settings)


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
            record = next(r for r in trainer.history_ if r["epoch"] == trainer.best_epoch_)
            las = record["LAS"]
            self.history_.append({"C": C, "LAS": las, "epoch": trainer.best_epoch_})
            if las > best:
                best, self.C_, self.trainer_ = las, C, trainer
                self.best_epoch_, self.parser_ = trainer.best_epoch_, trainer.parser_
                if save_best is not None:
                    save_parser(self.parser_, save_best, {**record, "C": C})
        if self.progress:
            tried = ", ".join(f"{r['C']:g}: {r['LAS']:.2f}" for r in self.history_)
            tqdm.write(f"chose C = {self.C_:g} (dev LAS by C: {tried})", file=sys.stderr)
        return self
