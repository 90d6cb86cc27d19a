"""Accuracy and speed of the first-order parser on the UD treebanks, trainer x decoder.

    python bench/first_order.py [--treebanks UD_Gothic-PROIEL ...] [--trainers perceptron ...]
                                [--decoders mst eisner] [--epochs 10] [--jobs 2]
                                [--results bench/first_order.jsonl]

Each configuration runs the command line as a user would: ``arborparse train`` (model chosen
on dev, feature extraction included in the time) and ``arborparse parse`` on the test set
(model loading included), then ``arborparse evaluate``. One JSON line per configuration is
appended to --results; `--table` prints the Markdown table of a results file.
"""

import argparse
import datetime
import json
import tempfile
from functools import partial
from pathlib import Path

from common import COMMAND, ROOT, TREEBANKS, files, machine, record, run, warm_up

TRAINERS = ["perceptron", "mira", "mira-kbest", "mira-factored"]


def configuration(treebank, trainer, decoder, epochs, workdir, train_args=()):
    train, dev, test = files(treebank)
    name = f"{treebank}-{trainer}-{decoder}-{'_'.join(train_args)}"
    model = Path(workdir) / f"{name}.npz"
    parsed = Path(workdir) / f"{name}.conllu"
    train_cmd = [*COMMAND, "train", "--train", train, "--dev", dev, "--model", model, "--trainer",
                 trainer, "--decoder", decoder, "--epochs", str(epochs), "--order", "1", "--quiet",
                 *train_args]
    trained = run(train_cmd)
    parsing = run([*COMMAND, "parse", "--model", model, test, "-o", parsed])
    scores = json.loads(run([*COMMAND, "evaluate", test, parsed, "--json"]).out)
    dev_parsed = Path(workdir) / f"{name}.dev.conllu"
    run([*COMMAND, "parse", "--model", model, dev, "-o", dev_parsed])
    dev_scores = json.loads(run([*COMMAND, "evaluate", dev, dev_parsed, "--json"]).out)
    return {
        "train_args": " ".join(train_args),
        "dev_UAS": dev_scores["UAS"], "dev_LAS": dev_scores["LAS"],
        "treebank": treebank, "trainer": trainer, "decoder": decoder, "epochs": epochs,
        "train_seconds": trained.wall, "train_cpu_seconds": trained.cpu,
        "parse_seconds": parsing.wall, "parse_cpu_seconds": parsing.cpu,
        "test_sentences": scores["sentences"], "test_words": scores["words"],
        "model_bytes": model.stat().st_size,
        **{k: scores[k] for k in ("UAS", "LAS", "UAS_nopunct", "LAS_nopunct", "UCM", "LCM")},
        "date": str(datetime.date.today()), "machine": machine(),
    }


def table(path):
    rows = [json.loads(line) for line in open(path)]
    print("| treebank | trainer | decoder | UAS | LAS | UAS no punct | LAS no punct | UCM | "
          "train CPU s | parse sent/s (incl. load) | model MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        variant = f" {r['train_args']}" if r.get("train_args") else ""
        print(f"| {r['treebank'].removeprefix('UD_')} | {r['trainer']}{variant} | {r['decoder']} | "
              f"{r['UAS']:.2f} | {r['LAS']:.2f} | {r['UAS_nopunct']:.2f} | "
              f"{r['LAS_nopunct']:.2f} | {r['UCM']:.1f} | {r['train_cpu_seconds']:.0f} | "
              f"{r['test_sentences'] / r['parse_seconds']:.0f} | "
              f"{r['model_bytes'] / 1e6:.1f} |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--treebanks", nargs="+", default=TREEBANKS)
    parser.add_argument("--trainers", nargs="+", default=TRAINERS)
    parser.add_argument("--decoders", nargs="+", default=["mst", "eisner"])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--results", default=str(ROOT / "bench" / "first_order.jsonl"))
    parser.add_argument("--train-args", default="",
                        help="extra options for `arborparse train`, e.g. '--exact-features'")
    parser.add_argument("--table", action="store_true", help="print the table of --results")
    args = parser.parse_args()
    if args.table:
        table(args.results)
        return
    configs = [(tb, tr, de) for tb in args.treebanks for tr in args.trainers
               for de in args.decoders]
    with tempfile.TemporaryDirectory() as workdir:
        warm_up(args.trainers, args.decoders, workdir)
        record([partial(configuration, *c, args.epochs, workdir, args.train_args.split())
                for c in configs], args.jobs, args.results)


if __name__ == "__main__":
    main()
