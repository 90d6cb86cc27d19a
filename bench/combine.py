"""Two pipelines' parsers combined: what mixing their head marginals would give, from raw text.

    python bench/combine.py FIRST.npz SECOND.npz --dev DEV.conllu --test TEST.conllu
                            [--label LABEL] [--results bench/combine.jsonl]

FIRST's pipeline reads the raw text of DEV and of TEST (rebuilt from their tokens and
``SpaceAfter=No`` as `bench/languages.py` does) and parses it; SECOND's parser parses the
same words. For a weight w of FIRST, each sentence's tree is the one of the highest sum of
w P₁(h → m) + (1 − w) P₂(h → m) (the head marginals of each, at its temperatures; one root
word, any crossing): the tree of the fewest expected wrong heads under the mixture. A word's
label is the one of the member whose own tree gives it that head (FIRST first), else
FIRST's. The weight is the one of the best LAS on DEV (the official CoNLL 2018 script,
weights 0, 0.1, ..., 1); TEST is scored once, with it, and at 0 and 1 (each member alone,
as the mixture's decoder reads it). Appends one JSON line to --results.
"""

import argparse
import datetime
import sys
import tempfile
from pathlib import Path

from common import ROOT, append_result, machine, official

import arborparse
from arborparse.io import read_conllu, write_conllu
from arborparse.text.tokenizer import paragraphs
from arborparse.trees.decode import best_tree

WEIGHTS = tuple(round(0.1 * i, 1) for i in range(11))
REPORTED = ("UAS", "LAS", "MLAS", "BLEX")


def members_of(first, second, gold: Path) -> list[tuple]:
    """(FIRST's parse, SECOND's parse, P₁, P₂) of each sentence of `gold`'s raw text."""
    text = "\n\n".join(p for p, _ in paragraphs(read_conllu(gold))) + "\n"
    found = first.parse_text(text)
    again = second.parser.parse(found)
    return [(a, b, first.parser.head_marginals(a), second.parser.head_marginals(a))
            for a, b in zip(found, again)]


def combined(members: list[tuple], w: float) -> list:
    """Each sentence's tree of the mixture at weight `w` of FIRST, labelled as the module
    says."""
    out = []
    for a, b, p1, p2 in members:
        heads = best_tree(w * p1 + (1 - w) * p2, False, True)
        labels = [a.deprels[m - 1] if heads[m] == a.heads[m] or heads[m] != b.heads[m]
                  else b.deprels[m - 1] for m in range(1, len(heads))]
        out.append(a.with_tree(heads, labels))
    return out


def scored(gold: Path, sentences: list, folder: Path, name: str) -> dict:
    path = folder / f"{name}.conllu"
    write_conllu(sentences, path)
    return official(gold, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("first", type=Path)
    ap.add_argument("second", type=Path)
    ap.add_argument("--dev", type=Path, required=True)
    ap.add_argument("--test", type=Path, required=True)
    ap.add_argument("--label", default="")
    ap.add_argument("--results", type=Path, default=ROOT / "bench" / "combine.jsonl")
    args = ap.parse_args()
    first, second = arborparse.load(args.first), arborparse.load(args.second)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        dev = members_of(first, second, args.dev)
        on_dev = {w: scored(args.dev, combined(dev, w), folder, f"dev-{w}")["LAS"]
                  for w in WEIGHTS}
        print("dev LAS by weight of FIRST: " + ", ".join(f"{w}: {las:.2f}"
                                                        for w, las in on_dev.items()),
              file=sys.stderr)
        chosen = max(WEIGHTS, key=lambda w: (on_dev[w], -abs(w - 0.5)))
        test = members_of(first, second, args.test)
        scores = {w: scored(args.test, combined(test, w), folder, f"test-{w}")
                  for w in sorted({chosen, 0.0, 1.0})}
    append_result(args.results, {
        "first": args.first.name, "second": args.second.name, "test": args.test.name,
        "weight": chosen, "dev_LAS": {str(w): round(v, 2) for w, v in on_dev.items()},
        **{f"test_{m}": round(scores[chosen][m], 2) for m in REPORTED},
        "first_alone_LAS": round(scores[1.0]["LAS"], 2),
        "second_alone_LAS": round(scores[0.0]["LAS"], 2),
        "date": str(datetime.date.today()), "machine": machine(), "label": args.label})


if __name__ == "__main__":
    main()
