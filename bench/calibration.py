"""Calibration of HeadProb: expected calibration error on a test set before and after
fitting each model's temperature on dev.

    python bench/calibration.py [--treebanks UD_Gothic-PROIEL ...] [--epochs 10]
                                [--trainers perceptron mira eg loglinear-sgd ...]

Each trainer (the online ones; EG with C = 0.003; log-linear by SGD or L-BFGS and latent
with 2 clusters, C = 0.3) is trained
on train with dev (best dev LAS kept; perceptron, MIRA and EG fit a temperature T on dev,
the log-linear model is already a distribution and is also shown with a fitted T for
comparison). Test is parsed with MAP decoding and the marginals: HeadProb is P(chosen head)
under P(tree) ∝ exp(s / T). ECE: 10 equal-width bins of HeadProb, Σ_b (n_b / N) |accuracy_b
- mean HeadProb_b| over all test words, in percentage points; T = 1 is the model as trained
(before), the fitted T after. Raw results: bench/calibration.jsonl. Prints a Markdown table.
"""

import argparse
import datetime
import json
import sys

import numpy as np
from common import ROOT, files, machine

from arborparse import trees
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


def head_probabilities(parser, sentences):
    """(HeadProb of each word's MAP head, whether that head is right), over all words."""
    probs, right = [], []
    for s in sentences:
        S = parser._scores(parser.model.encoded(s))
        heads, _ = trees.mst(S, single_root=parser.single_root)
        mu = trees.marginals(S, parser.decoder == "eisner", parser.single_root).sum(axis=2)
        m = np.arange(1, len(heads))
        probs.append(mu[heads[1:], m])
        right.append(heads[1:] == s.heads[1:])
    return np.concatenate(probs), np.concatenate(right)


def ece(probs, right, bins=10):
    which = np.minimum((probs * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        inside = which == b
        if inside.any():
            total += inside.mean() * abs(right[inside].mean() - probs[inside].mean())
    return 100 * total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--treebanks", nargs="+", default=["UD_Gothic-PROIEL"])
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--trainers", nargs="+", default=["perceptron", "mira", "eg",
                                                      "loglinear-sgd"])
    args = ap.parse_args()
    print(f"<!-- {' '.join(sys.argv)}; {datetime.date.today()}; {machine()} -->")
    rows = []
    for treebank in args.treebanks:
        train, dev, test = (read_conllu(path) for path in files(treebank))
        for name, make in ((n, trainers(args.epochs)[n]) for n in args.trainers):
            parser = make().fit(train, dev).parser_
            fitted = parser.temperature if parser.temperature != 1.0 else parser.calibrate(dev)
            row = {"treebank": treebank, "trainer": name, "T": fitted,
                   "date": str(datetime.date.today()), "machine": machine()}
            for label, t in (("before", 1.0), ("after", fitted)):
                parser.temperature = t
                probs, right = head_probabilities(parser, test)
                top = probs >= 0.9
                row[label] = {"ECE": ece(probs, right), "UAS": 100 * right.mean(),
                              "share_at_1": 100 * float((probs >= 0.99995).mean()),
                              "accuracy_0.9_1": 100 * float(right[top].mean()) if top.any()
                              else None, "share_0.9_1": 100 * float(top.mean())}
            rows.append(row)
            with open(ROOT / "bench" / "calibration.jsonl", "a") as out:
                out.write(json.dumps(row) + "\n")
            print(f"<!-- {json.dumps(row)} -->", flush=True)
    print("| treebank | trainer | T | ECE before | ECE after | HeadProb = 1.0000 before / after "
          "| accuracy of words with HeadProb ≥ 0.9, before / after |")
    print("|---|---|---:|---:|---:|---|---|")
    def confident(x):
        if x["accuracy_0.9_1"] is None:
            return "— (no word)"
        return f"{x['accuracy_0.9_1']:.1f}% ({x['share_0.9_1']:.0f}% of words)"
    for r in rows:
        b, a = r["before"], r["after"]
        print(f"| {r['treebank'][3:]} | {r['trainer']} | {r['T']:.3g} | {b['ECE']:.2f} | "
              f"{a['ECE']:.2f} | {b['share_at_1']:.1f}% / {a['share_at_1']:.1f}% | "
              f"{confident(b)} / {confident(a)} |")


if __name__ == "__main__":
    main()
