"""The sharded log-linear objective against the serial one on a real treebank: the value and
gradient at a random weight vector, and the models after the same L-BFGS iterations.

    python bench/distributed_lbfgs.py [TREEBANK] [--shards 4] [--iterations 5]
                                      [--results bench/distributed.jsonl]

A local Dask cluster of 2 worker processes; C = 0.3, 2^20 hashed weights.
"""

import argparse
import datetime
import time

import numpy as np
from common import ROOT, append_result, files, machine
from distributed import Client, LocalCluster

from arborparse.linear.cluster import ShardedLogLinearTrainer
from arborparse.io import read_conllu
from arborparse.linear.loglinear import LogLinearTrainer
from arborparse.linear.model import LinearModel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("treebank", nargs="?", default="UD_Gothic-PROIEL")
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--results", default=str(ROOT / "bench" / "distributed.jsonl"))
    args = ap.parse_args()
    train, dev, _ = files(args.treebank)
    train, dev = read_conllu(train), read_conllu(dev)
    settings = dict(C=0.3, epochs=args.iterations, hash_bits=20, progress=False)
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        serial = LogLinearTrainer("lbfgs", **settings)
        sharded = ShardedLogLinearTrainer(args.shards, client, **settings)
        labels, data = serial._data(train)
        _, shards = sharded._data(train)
        model = LinearModel.hashing(20, labels)
        w = 0.01 * np.random.default_rng(0).standard_normal(len(model.weights))
        start = time.perf_counter()
        value, grad = serial.objective(model, data, w)
        serial_seconds = time.perf_counter() - start
        start = time.perf_counter()
        value_s, grad_s = sharded.objective(model, shards, w)
        sharded_seconds = time.perf_counter() - start
        a = LogLinearTrainer("lbfgs", **settings).fit(train, dev)
        b = ShardedLogLinearTrainer(args.shards, client, **settings).fit(train, dev)
    wa, wb = a.parser_.model.weights, b.parser_.model.weights
    append_result(args.results, {
        "benchmark": "distributed L-BFGS", "treebank": args.treebank, "shards": args.shards,
        "objective_relative_difference": abs(value_s - value) / abs(value),
        "gradient_max_relative_difference": float(np.abs(grad_s - grad).max()
                                                  / np.abs(grad).max()),
        "one_evaluation_seconds": {"serial": serial_seconds, "sharded_2_workers":
                                   sharded_seconds},
        "iterations": args.iterations,
        "final_weights_max_abs_difference": float(np.abs(wa - wb).max()),
        "final_weights_max_abs": float(np.abs(wa).max()),
        "dev_LAS": {"serial": [h["LAS"] for h in a.history_],
                    "sharded": [h["LAS"] for h in b.history_]},
        "date": datetime.date.today().isoformat(), "machine": machine()})


if __name__ == "__main__":
    main()
