"""Calibration of HeadProb and LabelProb: expected calibration error on a test set before and
after fitting each model's temperatures on dev.

    python bench/calibration.py [--treebanks UD_Gothic-PROIEL ...] [--epochs 10]
                                [--trainers perceptron mira eg loglinear-sgd ...]
    python bench/calibration.py --models UD_English-EWT=MODEL.npz ...

Each trainer (the online ones; EG with C = 0.003; log-linear by SGD or L-BFGS and latent
with 2 clusters, C = 0.3) is trained
on train with dev (best dev LAS kept; perceptron, MIRA and EG fit the temperatures T and
T_l on dev, the log-linear model is already a distribution and is also shown with fitted
temperatures for comparison). Test is parsed with the model's decoder and the marginals:
HeadProb is P(chosen head), LabelProb P(chosen label | chosen head) (`LinearParser`).
ECE: 10 equal-width bins, Σ_b (n_b / N) |accuracy_b - mean probability_b|, in percentage
points, of HeadProb over all test words and of LabelProb over the words whose head is right;
T = T_l = 1 is the model as trained (before), the fitted temperatures after.

With `--models`, each pipeline model (a linear parser behind a tagger, say the table's of
`bench/languages.py`) tags the treebank's dev and test sets itself (gold words, its own
tags), and the rows compare the temperatures stored in the file (before) with those
`calibrate` fits on the retagged dev set (after; the second-stage labeler's too, whose
LabelProb is the model's where its temperature is not stored), on dev and test, with the
minimum Bayes-risk trees' UAS and LAS beside. Raw results: bench/calibration.jsonl. Prints
a Markdown table.
"""

import argparse
import datetime
import json
import sys

import numpy as np
from common import ROOT, files, machine

import arborparse
from arborparse.eval import evaluate
from arborparse.io import read_conllu
from arborparse.linear.eg import EGTrainer
from arborparse.linear.loglinear import LogLinearTrainer
from arborparse.linear.online import OnlineTrainer


def trainers(epochs):
    online = {name: (lambda name=name: OnlineTrainer(name, epochs=epochs, progress=False,
                                                     extend=0))
              for name in ("perceptron", "mira", "mira-kbest", "mira-factored")}
    return {**online,
            "eg": lambda: EGTrainer(0.003, epochs, progress=False),
            "loglinear-sgd": lambda: LogLinearTrainer("sgd", 0.3, epochs, progress=False),
            "loglinear": lambda: LogLinearTrainer("lbfgs", 0.3, epochs, progress=False),
            "latent": lambda: LogLinearTrainer("sgd", 0.3, epochs, progress=False, clusters=2,
                                               init_noise=0.01)}


def probabilities(parser, gold, given=None):
    """(HeadProb, whether the head is right) over all words and (LabelProb, whether the
    label is right) over the words whose head is right, `given` (default: `gold`) parsed
    with the marginals and scored against `gold`."""
    found = {"head": ([], []), "label": ([], [])}
    for g, parsed in zip(gold, parser.parse(gold if given is None else given,
                                            marginals=True)):
        for m, row in enumerate(parsed.word_rows, 1):
            misc = dict(entry.split("=", 1) for entry in parsed.rows[row][9].split("|"))
            right = parsed.heads[m] == g.heads[m]
            found["head"][0].append(float(misc["HeadProb"]))
            found["head"][1].append(right)
            if right:
                found["label"][0].append(float(misc["LabelProb"]))
                found["label"][1].append(parsed.deprels[m - 1] == g.deprels[m - 1])
    return {k: (np.array(p), np.array(r, dtype=bool)) for k, (p, r) in found.items()}


def summary(parser, gold, given=None) -> dict:
    found = probabilities(parser, gold, given)
    (head, right), (label, label_right) = found["head"], found["label"]
    top = head >= 0.9
    return {"ECE": ece(head, right), "UAS": 100 * right.mean(),
            "HeadProb": 100 * head.mean(), "label_ECE": ece(label, label_right),
            "LabelProb": 100 * label.mean(), "label_accuracy": 100 * label_right.mean(),
            "share_at_1": 100 * float((head >= 0.99995).mean()),
            "accuracy_0.9_1": 100 * float(right[top].mean()) if top.any() else None,
            "share_0.9_1": 100 * float(top.mean())}


def ece(probs, right, bins=10):
    which = np.minimum((probs * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        inside = which == b
        if inside.any():
            total += inside.mean() * abs(right[inside].mean() - probs[inside].mean())
    return 100 * total


def trained_rows(args):
    for treebank in args.treebanks:
        train, dev, test = (read_conllu(path) for path in files(treebank))
        for name, make in ((n, trainers(args.epochs)[n]) for n in args.trainers):
            parser = make().fit(train, dev).parser_
            fitted = {"temperature": parser.temperature,
                      "label_temperature": parser.label_temperature}
            if parser.temperature == 1.0:  # not fitted while training
                fitted = parser.calibrate(dev)
            row = {"treebank": treebank, "trainer": name, "T": fitted["temperature"],
                   "T_l": fitted["label_temperature"]}
            after = (fitted["temperature"], fitted["label_temperature"])
            for label, temperatures in (("before", (1.0, 1.0)), ("after", after)):
                parser.temperature, parser.label_temperature = temperatures
                row[label] = summary(parser, test)
            yield row


def model_rows(args):
    for pair in args.models:
        treebank, path = pair.split("=", 1)
        nlp = arborparse.load(path)
        parser = nlp.parser
        labeler = parser.labeler  # its temperature None: LabelProb is the model's
        row = {"treebank": treebank, "trainer": f"pipeline {path}",
               "stored": [parser.temperature, parser.label_temperature,
                          None if labeler is None else labeler.temperature]}
        sets = {}
        for part, path in zip(("dev", "test"), files(treebank)[1:]):
            gold = read_conllu(path)
            blank = [s.with_columns({c: ["_"] * len(s) for c in (2, 3, 4, 5)}) for s in gold]
            sets[part] = gold, nlp.parse(blank)  # the pipeline's own tags
        dev, tagged = sets["dev"]
        for label in ("before", "after"):
            if label == "after":
                fitted = parser.calibrate([t.with_tree(g.heads, g.deprels)
                                           for g, t in zip(dev, tagged)])
                row["T"], row["T_l"] = fitted["temperature"], fitted["label_temperature"]
                row["T_labeler"] = fitted.get("labeler_temperature")
            for part, (gold, given) in sets.items():
                row[f"{label} {part}"] = {**summary(parser, gold, given), **{
                    f"MBR {k}": v for k, v in evaluate(gold, parser.parse(
                        given, decode_as="mbr")).items() if k in ("UAS", "LAS")}}
        yield row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--treebanks", nargs="+", default=["UD_Gothic-PROIEL"])
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--trainers", nargs="+", default=["perceptron", "mira", "eg",
                                                      "loglinear-sgd"])
    ap.add_argument("--models", nargs="+", metavar="TREEBANK=MODEL",
                    help="trained pipelines to measure instead of training parsers")
    args = ap.parse_args()
    print(f"<!-- {' '.join(sys.argv)}; {datetime.date.today()}; {machine()} -->")
    rows = []
    for row in (model_rows if args.models else trained_rows)(args):
        row.update(date=str(datetime.date.today()), machine=machine())
        rows.append(row)
        with open(ROOT / "bench" / "calibration.jsonl", "a") as out:
            out.write(json.dumps(row) + "\n")
        print(f"<!-- {json.dumps(row)} -->", flush=True)
    if args.models:
        def told(temperatures):
            return ", ".join("—" if t is None else f"{t:.3g}" for t in temperatures)
        print("| treebank | set | T, T_l, labeler's T stored → fitted | HeadProb − UAS | ECE | "
              "LabelProb − "
              "label accuracy | label ECE | MBR UAS / LAS |")
        print("|---|---|---|---|---|---|---|---|")
        for r in rows:
            for part in ("dev", "test"):
                b, a = r[f"before {part}"], r[f"after {part}"]
                print(f"| {r['treebank'][3:]} | {part} | {told(r['stored'])} → "
                      f"{told((r['T'], r['T_l'], r['T_labeler']))} | "
                      f"{b['HeadProb'] - b['UAS']:+.2f} → {a['HeadProb'] - a['UAS']:+.2f} | "
                      f"{b['ECE']:.2f} → {a['ECE']:.2f} | "
                      f"{b['LabelProb'] - b['label_accuracy']:+.2f} → "
                      f"{a['LabelProb'] - a['label_accuracy']:+.2f} | "
                      f"{b['label_ECE']:.2f} → {a['label_ECE']:.2f} | "
                      f"{b['MBR UAS']:.2f} / {b['MBR LAS']:.2f} → "
                      f"{a['MBR UAS']:.2f} / {a['MBR LAS']:.2f} |")
        return
    print("| treebank | trainer | T, T_l | ECE before | ECE after | label ECE before | "
          "label ECE after | HeadProb = 1.0000 before / after "
          "| accuracy of words with HeadProb ≥ 0.9, before / after |")
    print("|---|---|---:|---:|---:|---:|---:|---|---|")

    def confident(x):
        if x["accuracy_0.9_1"] is None:
            return "— (no word)"
        return f"{x['accuracy_0.9_1']:.1f}% ({x['share_0.9_1']:.0f}% of words)"
    for r in rows:
        b, a = r["before"], r["after"]
        print(f"| {r['treebank'][3:]} | {r['trainer']} | {r['T']:.3g}, {r['T_l']:.3g} | "
              f"{b['ECE']:.2f} | {a['ECE']:.2f} | {b['label_ECE']:.2f} | "
              f"{a['label_ECE']:.2f} | {b['share_at_1']:.1f}% / {a['share_at_1']:.1f}% | "
              f"{confident(b)} / {confident(a)} |")


if __name__ == "__main__":
    main()
