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
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common import ROOT, UD, machine

from arborparse.io import read_conllu

COMMAND = [sys.executable, "-m", "arborparse"]
TREEBANKS = ["UD_Gothic-PROIEL", "UD_Turkish-IMST", "UD_English-EWT"]
TRAINERS = ["perceptron", "mira", "mira-kbest", "mira-factored"]


def run(args):
    """Run a command; return (wall seconds, CPU seconds of the child, stdout, stderr)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=str(ROOT))
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(list(map(str, args)), stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)  # the child's own CPU time
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(map(str, args))} failed:\n{err.read()}")
        return wall, usage.ru_utime + usage.ru_stime, out.read(), err.read()


def files(treebank):
    folder = UD / treebank
    return tuple(next(folder.glob(f"*-ud-{split}.conllu")) for split in ("train", "dev", "test"))


def configuration(treebank, trainer, decoder, epochs, workdir, train_args=()):
    train, dev, test = files(treebank)
    name = f"{treebank}-{trainer}-{decoder}-{'_'.join(train_args)}"
    model = Path(workdir) / f"{name}.npz"
    parsed = Path(workdir) / f"{name}.conllu"
    train_cmd = [*COMMAND, "train", "--train", train, "--dev", dev, "--model", model, "--trainer",
                 trainer, "--decoder", decoder, "--epochs", str(epochs), "--quiet", *train_args]
    train_wall, train_cpu, _, _ = run(train_cmd)
    parse_wall, parse_cpu, _, _ = run([*COMMAND, "parse", "--model", model, test, "-o", parsed])
    scores = run([*COMMAND, "evaluate", test, parsed, "--json"])[2]
    scores = json.loads(scores)
    dev_parsed = Path(workdir) / f"{name}.dev.conllu"
    run([*COMMAND, "parse", "--model", model, dev, "-o", dev_parsed])
    dev_scores = json.loads(run([*COMMAND, "evaluate", dev, dev_parsed, "--json"])[2])
    return {
        "train_args": " ".join(train_args),
        "dev_UAS": dev_scores["UAS"], "dev_LAS": dev_scores["LAS"],
        "treebank": treebank, "trainer": trainer, "decoder": decoder, "epochs": epochs,
        "train_seconds": train_wall, "train_cpu_seconds": train_cpu,
        "parse_seconds": parse_wall, "parse_cpu_seconds": parse_cpu,
        "test_sentences": scores["sentences"], "test_words": scores["words"],
        "model_bytes": model.stat().st_size,
        **{k: scores[k] for k in ("UAS", "LAS", "UAS_nopunct", "LAS_nopunct", "UCM", "LCM")},
        "date": str(datetime.date.today()), "machine": machine(),
    }


def warm_up(trainers, decoders, workdir):
    """Train and parse a few sentences once, so that no measurement includes compiling
    the kernels (numba caches them on disk after the first run)."""
    train, dev, _ = files(TREEBANKS[0])
    tiny = Path(workdir) / "tiny.conllu"
    tiny.write_text("".join(s.to_text() for s in read_conllu(train)[:30]))
    for trainer in trainers:
        for decoder in decoders:
            model = Path(workdir) / "tiny.npz"
            run([*COMMAND, "train", "--train", tiny, "--dev", tiny, "--model", model,
                 "--trainer", trainer, "--decoder", decoder, "--epochs", "1", "--quiet"])
            run([*COMMAND, "parse", "--model", model, tiny, "-o", Path(workdir) / "tiny.out"])


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
    with tempfile.TemporaryDirectory() as workdir, ThreadPoolExecutor(args.jobs) as pool:
        warm_up(args.trainers, args.decoders, workdir)
        futures = [pool.submit(configuration, *c, args.epochs, workdir, args.train_args.split())
                   for c in configs]
        for future in futures:
            result = future.result()
            with open(args.results, "a") as out:
                out.write(json.dumps(result) + "\n")
            print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
