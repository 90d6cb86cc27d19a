"""Koo et al. (2007) Tables 2 and 3 and Smith & Smith (2007) Table 1 on the UD treebanks.

    python bench/marginal_training.py run [--treebanks ...] [--trainers ...] [--C ...]
                                          [--epochs N] [--jobs 2] [--workdir DIR]
                                          [--results FILE]
    python bench/marginal_training.py tables [--results FILE] [--workdir DIR]

`run` trains every (treebank, trainer, training class, C) of the grid below with
`arborparse train` (projective training = Eisner on projectivized trees, non-projective =
MST; the epoch with the best dev LAS kept), then parses dev and test with every decoding
of that class (non-projective models also with Eisner, as Koo et al. tried both on the
validation set; MAP and MBR), keeps the parsed files in --workdir and appends one JSON
line per model to --results. Configurations already in --results are skipped, so a run
can be resumed.

`tables` selects, on dev UAS only, C and the run length (when several were run; the
epoch within a run is the one with the best dev LAS) and, for non-projective models, the
decoder, per (treebank, trainer, class); prints Koo et al.'s Table 2 (test UAS, p and np)
and Table 3 (p or np chosen on dev, and the sentence-level sign test of each marginal-based trainer
against the perceptron over the test sentences of all treebanks, `arborparse compare`),
and Smith & Smith's Table 1 (MIRA vs conditional training x MAP vs MBR, non-projective).
"""

import argparse
import datetime
import json
from functools import partial
from pathlib import Path

from common import (
    COMMAND,
    ROOT,
    TREEBANKS,
    best_epoch,
    files,
    machine,
    parse_and_score,
    record,
    run,
    warm_up,
)

# trainer: (epochs, values of C tried; None = the trainer's default)
GRID = {
    "perceptron": (15, [None]),
    "mira": (10, [None]),
    "loglinear-sgd": (10, [0.1, 0.3, 1.0]),
    "eg": (20, [0.001, 0.003, 0.01]),
}
CLASSES = {"np": "mst", "p": "eisner"}  # training class: its decoder
DECODINGS = {"np": [("map", "mst"), ("map", "eisner"), ("mbr", "mst")],
             "p": [("map", "eisner"), ("mbr", "eisner")]}


def name_of(treebank, trainer, cls, C, epochs):
    return f"{treebank}-{trainer}-{cls}-C{C}-e{epochs}"


def configuration(treebank, trainer, cls, C, epochs, workdir):
    """Train one model; parse and score dev and test with each decoding of its class."""
    train, dev, _ = files(treebank)
    name = name_of(treebank, trainer, cls, C, epochs)
    model = workdir / f"{name}.npz"
    c_args = [] if C is None else ["-C", str(C)]
    trained = run([*COMMAND, "train", "--train", train, "--dev", dev, "--model", model,
                   "--trainer", trainer, "--decoder", CLASSES[cls], "--epochs", str(epochs),
                   *c_args])
    scores = parse_and_score(model, treebank, DECODINGS[cls], workdir / name)
    return {
        "treebank": treebank, "trainer": trainer, "class": cls, "C": C, "epochs": epochs,
        "best_epoch": best_epoch(trained.err),
        "train_seconds": trained.wall, "train_cpu_seconds": trained.cpu,
        "scores": scores, "date": str(datetime.date.today()), "machine": machine(),
    }


def load(path):
    return [json.loads(line) for line in open(path)] if Path(path).exists() else []


def select(rows, treebank, trainer, cls, keys=None):
    """The (row, decoding) with the best dev UAS among the C values and the decodings
    `keys` ("map-mst", ...; default: every MAP decoding of the class)."""
    if keys is None:
        keys = [f"map-{decoder}" for decode, decoder in DECODINGS[cls] if decode == "map"]
    best = None
    for r in rows:
        if (r["treebank"], r["trainer"], r["class"]) != (treebank, trainer, cls):
            continue
        for key in keys:
            if best is None or r["scores"][f"{key}-dev"]["UAS"] > best[0]:
                best = (r["scores"][f"{key}-dev"]["UAS"], r, key)
    if best is None:
        raise SystemExit(f"no results for {treebank} {trainer} {cls}")
    return best[1], best[2]


def test_file(workdir, row, key):
    stem = name_of(row["treebank"], row["trainer"], row["class"], row["C"], row["epochs"])
    return workdir / f"{stem}.{key}.test.conllu"


def compare(workdir, treebanks, a, b):
    """Sign test of system a against b (lists of test files, one per treebank) over the
    sentences of all treebanks together."""
    joined = []
    for label, paths in (("gold", [files(tb)[2] for tb in treebanks]), ("a", a), ("b", b)):
        path = workdir / f"joined-{label}.conllu"
        path.write_text("".join(Path(p).read_text() for p in paths))
        joined.append(path)
    return json.loads(run([*COMMAND, "compare", *joined, "--json"]).out)


def describe(row, key):
    c = "" if row["C"] is None else f"C={row['C']:g}, "
    return f"{c}epoch {row['best_epoch']} of {row['epochs']}, {key}"


def tables(rows, workdir):
    treebanks = [tb for tb in TREEBANKS if any(r["treebank"] == tb for r in rows)]
    short = [tb.removeprefix("UD_") for tb in treebanks]
    koo = ["perceptron", "eg", "loglinear-sgd"]

    print("Koo et al. Table 2: test UAS, projective (p) and non-projective (np) training\n")
    print("| treebank | " + " | ".join(f"{t} {c}" for t in koo for c in ("p", "np")) + " |")
    print("|---" * (1 + 2 * len(koo)) + "|")
    for tb, s in zip(treebanks, short):
        cells = []
        for t in koo:
            for c in ("p", "np"):
                r, key = select(rows, tb, t, c)
                cells.append(f"{r['scores'][f'{key}-test']['UAS']:.2f}")
        print(f"| {s} | " + " | ".join(cells) + " |")
    print("\nSelected on dev (C, best epoch, decoding):\n")
    for tb, s in zip(treebanks, short):
        for t in koo:
            for c in ("p", "np"):
                print(f"- {s} {t} {c}: {describe(*select(rows, tb, t, c))}")

    print("\nKoo et al. Table 3: p or np chosen on dev; test UAS\n")
    print("| trainer | " + " | ".join(short) + " | average |")
    print("|---" * (2 + len(short)) + "|")
    chosen = {}
    for t in koo:
        picks = []
        for tb in treebanks:
            options = [select(rows, tb, t, c) for c in ("p", "np")]
            picks.append(max(options, key=lambda o: o[0]["scores"][f"{o[1]}-dev"]["UAS"]))
        chosen[t] = picks
        uas = [r["scores"][f"{key}-test"]["UAS"] for r, key in picks]
        print(f"| {t} | " + " | ".join(f"{u:.2f}" for u in uas) + f" | {sum(uas) / len(uas):.2f} |")
    print()
    for t in koo[1:]:
        result = compare(workdir, treebanks, [test_file(workdir, *p) for p in chosen[t]],
                         [test_file(workdir, *p) for p in chosen["perceptron"]])
        print(f"- {t} vs perceptron, all test sentences: better on "
              f"{result['A_better_sentences']}, worse on {result['B_better_sentences']}; "
              f"sign test p = {result['sign_test_p']:.3g}, paired permutation p = "
              f"{result['permutation_p']:.3g}")

    print("\nSmith & Smith Table 1: test UAS, non-projective training and decoding; "
          "MAP and MBR each with its C chosen on dev\n")
    print("| training | decoding | " + " | ".join(short) + " |")
    print("|---|---|" + "---|" * len(short))
    notes = []
    for t in ("mira", "loglinear-sgd"):
        picks = {d: [select(rows, tb, t, "np", [f"{d}-mst"]) for tb in treebanks]
                 for d in ("map", "mbr")}
        for decode, chosen_rows in picks.items():
            print(f"| {t} | {decode} | " + " | ".join(
                f"{r['scores'][f'{key}-test']['UAS']:.2f}" for r, key in chosen_rows) + " |")
        result = compare(workdir, treebanks, [test_file(workdir, *p) for p in picks["mbr"]],
                         [test_file(workdir, *p) for p in picks["map"]])
        notes.append(f"- {t}, MBR vs MAP over all test sentences: UAS {result['A']:.2f} vs "
                     f"{result['B']:.2f}; paired permutation p = {result['permutation_p']:.3g}")
    print("\n" + "\n".join(notes))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["run", "tables"])
    parser.add_argument("--treebanks", nargs="+", default=TREEBANKS)
    parser.add_argument("--trainers", nargs="+", default=list(GRID))
    parser.add_argument("--classes", nargs="+", default=list(CLASSES))
    parser.add_argument("--C", nargs="+", type=float,
                        help="values of C instead of the grid's (trainers that take C)")
    parser.add_argument("--epochs", type=int, help="instead of the grid's")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--workdir", default=str(ROOT / "bench" / "runs"),
                        help="models and parsed files (kept for the sign tests)")
    parser.add_argument("--results", default=str(ROOT / "bench" / "marginal_training.jsonl"))
    args = parser.parse_args()
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    rows = load(args.results)
    if args.command == "tables":
        tables(rows, workdir)
        return
    done = {(r["treebank"], r["trainer"], r["class"], r["C"], r["epochs"]) for r in rows}
    configs = [(tb, t, cls, C, args.epochs or GRID[t][0]) for tb in args.treebanks
               for t in args.trainers
               for C in (GRID[t][1] if args.C is None or GRID[t][1] == [None] else args.C)
               for cls in args.classes]
    configs = [c for c in configs if c not in done]
    warm_up(args.trainers, list(CLASSES.values()), workdir)
    record([partial(configuration, *c, workdir) for c in configs], args.jobs, args.results)


if __name__ == "__main__":
    main()
