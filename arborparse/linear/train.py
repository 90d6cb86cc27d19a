"""The linear family's trainer, as its option table (`LinearOptions`) describes it: the
online trainers, log-linear (L-BFGS, SGD, hidden clusters) and EG, C chosen on dev where
asked (`ChooseC`), and the cluster trainers (`cluster`) given a Dask client; then, with dev
data, the decoder chosen on it and the second-stage labeler (`OnDev`)."""

from __future__ import annotations

import math
import sys

from tqdm import tqdm

from arborparse.errors import ArborparseError
from arborparse.io.conllu import Sentence
from arborparse.linear import eg, loglinear
from arborparse.linear.common import ChooseC
from arborparse.linear.labeler import Labeler
from arborparse.linear.online import OnlineTrainer
from arborparse.linear.options import (DECODER_MARGIN, DECODERS, DISTRIBUTED, LATENT, ONLINE,
                                       LinearOptions)
from arborparse.linear.reach import keep_tag_reach
from arborparse.training import interrupt_says, save_parser


def trainer(options: LinearOptions, *, dev: bool, progress: bool = True, checkpoint=None,
            resume: bool = False, client=None):
    """The trainer of `options` (its ``fit(train, dev, save_best)`` gives ``parser_``),
    followed, with `dev`, by the choice of the decoder where `options` gives none and the
    second-stage labeler where `options.labeler` asks for it.
    """
    fit = _trainer(options, dev=dev, progress=progress, checkpoint=checkpoint, resume=resume,
                   client=client)
    choose = options.decoder is None
    return OnDev(fit, options.seed, progress, choose, options.labeler) \
        if dev and (choose or options.labeler) else fit


class OnDev:
    """A linear trainer, then, on dev: the decoder of the best parser chosen (where
    `decoder` asks: the other decoder where its dev LAS is higher by more than
    `DECODER_MARGIN` points, ``decoder`` in the record; the temperature and the tag reach
    chosen again for it), and the second-stage labeler
    (`arborparse.linear.labeler`, where `labeler` asks) trained on the gold trees of the
    training data and attached to the best parser with the weight that dev chooses
    (`LinearParser.fit_labeler`; ``labeler`` in the record: the weight, None where dev left
    the labeler out). The parser is then saved again, its record's dev scores those of the
    parser as it now is. Otherwise the trainer's own: ``parser_``, ``best_epoch_``,
    ``history_``."""

    def __init__(self, trainer, seed: int = 0, progress: bool = True, decoder: bool = False,
                 labeler: bool = True):
        self.trainer = trainer
        self.seed = seed
        self.progress = progress
        self.decoder, self.labeler = decoder, labeler

    def __getattr__(self, name):
        if name == "trainer":  # not set yet (a copy being made)
            raise AttributeError(name)
        return getattr(self.trainer, name)

    def fit(self, train: list[Sentence], dev: list[Sentence] | None = None, save_best=None):
        path = getattr(save_best, "path", save_best)
        kept = {}

        def keep(parser, record):  # the best parser's record, as the trainer saves it
            kept["record"] = record
            if save_best is not None:
                save_parser(parser, save_best, record)
        keep.path = path

        self.trainer.fit(train, dev, keep)
        if not dev:
            return self
        parser, epoch = self.trainer.parser_, self.trainer.best_epoch_
        what = " and ".join(["choosing the decoder"] * self.decoder +
                            ["training the second-stage labeler"] * self.labeler)
        with interrupt_says(f"training interrupted while {what}, after the parser's epochs" +
                            (f": {path} holds epoch {epoch}, the best, as trained"
                             if path is not None else ""), epoch, path):
            # the record the trainer saved; a resumed run that found no better epoch saved
            # none: its best epoch's, from the history
            record = kept.get("record") or next(
                (r for r in self.trainer.history_ if r.get("epoch") == epoch), {})
            if self.decoder:
                record = {**record, **self._choose_decoder(parser, dev, record)}
            if self.labeler:
                labeler = Labeler.fit(train, parser.model.labels, seed=self.seed)
                scores = parser.fit_labeler(labeler, dev)
                record = {**record, **{k: scores[k] for k in ("UAS", "LAS")},
                          "labeler": None if parser.labeler is None else
                          parser.labeler.joint_weight}
            if save_best is not None:  # atomic: interrupted, the file holds what it held
                save_parser(parser, save_best, record)
        if self.progress and self.labeler:
            said = ("left out (the model's labels do as well)" if parser.labeler is None else
                    f"joint weight {parser.labeler.joint_weight:.3g}, temperature "
                    f"{parser.labeler.temperature:.3g}")
            tqdm.write(f"second-stage labeler: {said}; dev LAS {record['LAS']:.2f}",
                       file=sys.stderr)
        return self

    def _choose_decoder(self, parser, dev, record: dict) -> dict:
        """The record's entries of the decoder dev chooses for `parser` (set on it)."""
        from arborparse.eval import evaluate

        other = next(d for d in DECODERS if d != parser.decoder)
        scores = evaluate(dev, parser.parse(dev, decoder=other),
                          multi_root=not parser.single_root)
        better = scores["LAS"] > record["LAS"] + DECODER_MARGIN
        if self.progress:
            tqdm.write(f"decoder: dev LAS {parser.decoder} {record['LAS']:.2f}, {other} "
                       f"{scores['LAS']:.2f}: {other if better else parser.decoder} kept",
                       file=sys.stderr)
        if not better:
            return {"decoder": parser.decoder}
        parser.decoder = other
        found = {"decoder": other, **{k: scores[k] for k in ("UAS", "LAS")}}
        if "temperature" in record:  # fitted over the other decoder's class of trees
            found.update(parser.calibrate(dev))
        return {**found, **keep_tag_reach(parser, dev, found)}


def _trainer(options: LinearOptions, *, dev: bool, progress: bool, checkpoint, resume,
             client):
    """The trainer of `options` without what `OnDev` adds (the decoder's choice, the
    second-stage labeler).

    `dev`: development data will be given (``C=None`` then means "choose C on it"); with a
    Dask `client`, the perceptron and MIRA train by parameter mixing and loglinear sums its
    gradient over shards; `checkpoint` and `resume` as the trainers take them."""
    o = options
    name, C = o.trainer, o.C
    common = dict(epochs=o.epochs, decoder=o.decoder or DECODERS[0],
                  train_decoder=o.train_decoder,
                  single_root=not o.multi_root, hash_bits=o.hash_bits, order=o.order,
                  second_order=o.second_order, tag_reach=o.tag_reach, progress=progress)
    if client is not None:
        if name not in DISTRIBUTED:
            raise ArborparseError(f"on a cluster the linear family trains with "
                                  f"{', '.join(DISTRIBUTED)}, not {name}")
        if C == "auto" or (C is None and dev and name == "loglinear"):
            raise ArborparseError("on a cluster give C (-C): choosing it on dev trains one "
                                  "model per value, one after another")
    if name in ONLINE:
        online = OnlineTrainer(name, extend=o.extend, seed=o.seed,
                               exact_features=o.exact_features, k=o.k,
                               C=math.inf if C is None else C, checkpoint=checkpoint,
                               resume=resume, **common)
        if client is None:
            return online
        from arborparse.linear.cluster import MixingTrainer

        return MixingTrainer(online, o.shards or _workers(client), client)
    if name in ("loglinear", "latent-lbfgs", "eg") or C == "auto" or (C is None and dev):
        if resume:
            raise ArborparseError(f"the linear trainer {name} cannot resume when it runs "
                                  "L-BFGS, EG or chooses C on dev; start it again")
        checkpoint = None  # nothing could go on from one
    family = eg if name == "eg" else loglinear

    def make(C_value):
        if name == "eg":
            return eg.EGTrainer(C_value, learning_rate=o.learning_rate, average=o.average,
                                extend=o.extend, **common)
        latent = name in LATENT
        settings = dict(clusters=o.clusters if latent else 1,
                        init_noise=o.init_noise if latent else 0.0, squeeze=o.squeeze,
                        seed=o.seed, **common)
        rate = loglinear.LEARNING_RATE if o.learning_rate is None else o.learning_rate
        if client is not None:
            from arborparse.linear.cluster import ShardedLogLinearTrainer

            return ShardedLogLinearTrainer(o.shards or _workers(client), client, C=C_value,
                                           learning_rate=rate, **settings)
        optimizer = "sgd" if name in ("loglinear-sgd", "latent") else "lbfgs"
        return loglinear.LogLinearTrainer(optimizer, C_value, learning_rate=rate,
                                          checkpoint=checkpoint, resume=resume, **settings)

    if C == "auto" or (C is None and dev):
        return ChooseC(make, family.GRID, progress=progress)
    if C is None:
        C = family.DEFAULT_C
        if progress:
            tqdm.write(f"no dev data: C = {C:g}, the default (give dev data to choose it)",
                       file=sys.stderr)
    return make(C)


def _workers(client) -> int:
    return len(client.scheduler_info()["workers"])
