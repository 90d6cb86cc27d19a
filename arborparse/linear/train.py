"""The linear family's trainer, as its option table (`LinearOptions`) describes it: the
online trainers, log-linear (L-BFGS, SGD, hidden clusters) and EG, C chosen on dev where
asked (`ChooseC`), and the cluster trainers (`cluster`) given a Dask client."""

from __future__ import annotations

import math
import sys

from tqdm import tqdm

from arborparse.errors import ArborparseError
from arborparse.linear import eg, loglinear
from arborparse.linear.common import ChooseC
from arborparse.linear.online import OnlineTrainer
from arborparse.linear.options import DISTRIBUTED, LATENT, ONLINE, LinearOptions


def trainer(options: LinearOptions, *, dev: bool, progress: bool = True, checkpoint=None,
            resume: bool = False, client=None):
    """The trainer of `options` (its ``fit(train, dev, save_best)`` gives ``parser_``).

    `dev`: development data will be given (``C=None`` then means "choose C on it"); with a
    Dask `client`, the perceptron and MIRA train by parameter mixing and loglinear sums its
    gradient over shards; `checkpoint` and `resume` as the trainers take them."""
    o = options
    name, C = o.trainer, o.C
    common = dict(epochs=o.epochs, decoder=o.decoder, train_decoder=o.train_decoder,
                  single_root=not o.multi_root, hash_bits=o.hash_bits, order=o.order,
                  second_order=o.second_order, progress=progress)
    if client is not None:
        if name not in DISTRIBUTED:
            raise ArborparseError(f"on a cluster the linear family trains with "
                                  f"{', '.join(DISTRIBUTED)}, not {name}")
        if C == "auto" or (C is None and dev and name == "loglinear"):
            raise ArborparseError("on a cluster give C (-C): choosing it on dev trains one "
                                  "model per value, one after another")
    if name in ONLINE:
        online = OnlineTrainer(name, seed=o.seed, exact_features=o.exact_features, k=o.k,
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
