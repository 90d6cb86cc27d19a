"""Iterative parameter mixing on a Dask cluster against serial training (gold tags).

    python bench/distributed_train.py TREEBANK [--trainer mira] [--epochs 10]
                                      [--shards 2 4 8] [--results bench/distributed.jsonl]

Trains the first-order parser serially and with `--scheduler local --workers 2 --shards S`
for each S, the same number of epochs and no dev selection (the last epoch is the model),
then parses dev and test and scores UAS/LAS with `arborparse evaluate`. Reported: the
scores, the differences to serial, and the wall time of training.
"""

import argparse
import datetime
import json
import tempfile
from pathlib import Path

from common import COMMAND, ROOT, append_result, files, machine, run


def scores(model, gold, folder) -> dict:
    parsed = Path(folder) / "parsed.conllu"
    run([*COMMAND, "parse", "--model", model, gold, "-o", parsed, "--force"])
    result = json.loads(run([*COMMAND, "evaluate", gold, parsed, "--json"]).out)
    return {k: result[k] for k in ("UAS", "LAS")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("treebank")
    ap.add_argument("--trainer", default="mira")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--shards", type=int, nargs="+", default=[2, 4, 8])
    ap.add_argument("--results", default=str(ROOT / "bench" / "distributed.jsonl"))
    args = ap.parse_args()
    train, dev, test = files(args.treebank)
    row = {"benchmark": "distributed training", "treebank": args.treebank,
           "trainer": args.trainer, "epochs": args.epochs}
    with tempfile.TemporaryDirectory() as folder:
        for shards in [None, *args.shards]:
            model = Path(folder) / "m.npz"
            command = [*COMMAND, "train", "--trainer", args.trainer, "--epochs", args.epochs,
                       "--components", "parser", "--train", train, "--model", model,
                       "--force", "--quiet"]
            if shards:
                command += ["--scheduler", "local", "--workers", 2, "--shards", shards]
            trained = run(command)
            name = f"shards-{shards}" if shards else "serial"
            row[name] = {"train_seconds": trained.wall, "dev": scores(model, dev, folder),
                         "test": scores(model, test, folder)}
            if shards:
                row[name]["minus_serial"] = {
                    split: {k: row[name][split][k] - row["serial"][split][k]
                            for k in ("UAS", "LAS")} for split in ("dev", "test")}
            print(name, row[name], flush=True)
    row["date"] = datetime.date.today().isoformat()
    row["machine"] = machine()
    append_result(args.results, row)


if __name__ == "__main__":
    main()
