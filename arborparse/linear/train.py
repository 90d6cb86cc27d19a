"""The linear family's trainer, as its option table (`LinearOptions`) describes it: the
online trainers, log-linear (L-BFGS, SGD, hidden clusters) and EG, C chosen on dev where
asked (`ChooseC`), and the cluster trainers (`cluster`) given a Dask client; then, with dev
data, the second-stage labeler (`Relabeling`)."""

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
from arborparse.linear.options import DISTRIBUTED, LATENT, ONLINE, LinearOptions
from arborparse.training import interrupt_says, save_parser


def trainer(options: LinearOptions, *, dev: bool, progress: bool = True, checkpoint=None,
            resume: bool = False, client=None):
    """The trainer of `options` (its ``fit(train, dev, save_best)`` gives ``parser_``),
    followed by the second-stage labeler where `options.labeler` and `dev` ask for it.
    """
    fit = _trainer(options, dev=dev, progress=progress, checkpoint=checkpoint, resume=resume,
                   client=client)
    return Relabeling(fit, options.seed, progress) if options.labeler and dev else fit


class Relabeling:
    """A linear trainer, then the second-stage labeler (`arborparse.linear.labeler`):
    trained on the gold trees of the training data and attached to the best parser with
    the weight that dev chooses (`LinearParser.fit_labeler`); the parser is then saved
    again, its record's dev scores those of the parser with its labeler (``labeler``: the
    weight chosen, None where dev left the labeler out). Otherwise the trainer's own:
    ``parser_``, ``best_epoch_``, ``history_``."""

    def __init__(self, trainer, seed: int = 0, progress: bool = True):
        self.trainer = trainer
        self.seed = seed
        self.progress = progress

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
        with interrupt_says("training interrupted while training the second-stage labeler, "
                            "after the parser's epochs" + (f": {path} holds epoch {epoch}, "
                                                           "the best, without it"
                                                           if path is not None else ""),
                            epoch, path):
            labeler = Labeler.fit(train, parser.model.labels, seed=self.seed)
            scores = parser.fit_labeler(labeler, dev)
            # the record the trainer saved; a resumed run that found no better epoch saved
            # none: its best epoch's, from the history
            record = kept.get("record") or next(
                (r for r in self.trainer.history_ if r.get("epoch") == epoch), {})
            record = {**record, **{k: scores[k] for k in ("UAS", "LAS")},
                      "labeler": None if parser.labeler is None else
                      parser.labeler.joint_weight}
            if save_best is not None:  # atomic: interrupted, the file holds what it held
                save_parser(parser, save_best, record)
        if self.progress:
            said = ("left out (the model's labels do as well)" if parser.labeler is None else
                    f"joint weight {parser.labeler.joint_weight:.3g}")
            tqdm.write(f"second-stage labeler: {said}; dev LAS {record['LAS']:.2f}",
                       file=sys.stderr)
        return self


def _trainer(options: LinearOptions, *, dev: bool, progress: bool, checkpoint, resume,
             client):
    """The trainer of `options` without the second-stage labeler.

    `dev`: development data will be given (``C=None`` then means "choose C on it"); with a
    Dask `client`, the perceptron and MIRA train by parameter mixing and loglinear sums its
    gradient over shards; `checkpoint` and `resume` as the trainers take them."""
    o = options
    name, C = o.trainer, o.C
    common = dict(epochs=o.epochs, decoder=o.decoder, train_decoder=o.train_decoder,
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
        online = OnlineTrainer(name, extend=o.extend, seed=o.seed, exact_features=o.exact_features, k=o.k,
                               C=math.inf if C is None else C, checkpoint=checkpoint,
                               resume=resume, **common)
        if client is None:
            return online
        from arborparse.linear.cluster import MixingTrainer

        return MixingTrainer(online, o.shards or _workers(client), client)
    if resume and (name in ("loglinear", "latent-lbfgs", "eg") or C == "auto" or
                   (C is None and dev)):
        raise ArborparseError(f"the linear trainer {name} cannot resume when it runs L-BFGS, "
                              "EG or chooses C on dev; start it again")
    family = eg if name == "eg" else loglinear

    def make(C_value):
        if name == "eg":
            return eg.EGTrainer(C_value, learning_rate=o.learning_rate, average=o.average,
                                **common)
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
