"""Two pipelines combined (`arborparse combine`), from raw text: the ensemble against each of
its parsers alone.

    python bench/combine.py FIRST.npz SECOND.npz --dev DEV.conllu --test TEST.conllu
                            [--label LABEL] [--results bench/combine.jsonl]

`arborparse.combine` chooses the first parser's share on DEV (its words, tags predicted);
the combined pipeline then reads the raw text of TEST (rebuilt from its tokens and
``SpaceAfter=No`` as `bench/languages.py` does), and the official CoNLL 2018 script scores
it at the weight chosen and at 1 and 0 (each parser alone on the first pipeline's words
and tags, decoded from its own marginals as the mixture's decoder reads them, a linear
one's arcs pruned by a neural other as in the mixture), with the
seconds each took, beside the first pipeline's own (parsing the same text, compiled first;
best of two, wall and CPU).
The reference of the ensemble's pruning (a neural member's marginals prune a linear
member's arcs, `arborparse.ensemble.parser.PRUNE`): the test text parsed at the weight
chosen with every arc kept (PRUNE = 0), its scores and CPU seconds beside the pruned
parse's (best of two each, alternating). Appends one JSON line to --results.
"""

import argparse
import datetime
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, append_result, machine, official

import arborparse
from arborparse.ensemble import parser as ensemble_parser
from arborparse.ensemble.parser import PRUNE
from arborparse.io import read_conllu, write_conllu
from arborparse.text.tokenizer import paragraphs

REPORTED = ("UAS", "LAS", "MLAS", "BLEX")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("first", type=Path)
    ap.add_argument("second", type=Path)
    ap.add_argument("--dev", type=Path, required=True)
    ap.add_argument("--test", type=Path, required=True)
    ap.add_argument("--label", default="")
    ap.add_argument("--results", type=Path, default=ROOT / "bench" / "combine.jsonl")
    args = ap.parse_args()
    on_dev = {}
    began = time.perf_counter()
    model = arborparse.combine(args.first, args.second, args.dev,
                               report=lambda w, s: on_dev.update({w: s["LAS"]}))
    combine_seconds = time.perf_counter() - began
    print("dev LAS by weight of FIRST: " + ", ".join(f"{w}: {las:.2f}"
                                                    for w, las in on_dev.items()),
          file=sys.stderr)
    chosen = model.parser.weight
    alone = arborparse.load(args.first)
    text = "\n\n".join(p for p, _ in paragraphs(read_conllu(args.test))) + "\n"
    alone.parse_text(text[:2000])  # compiled before it is timed, as the ensemble is below
    first_seconds = first_cpu = float("inf")  # best of two, as the pruning's below
    for _ in range(2):
        began, cpu_began = time.perf_counter(), time.process_time()
        alone.parse_text(text)
        first_seconds = min(first_seconds, time.perf_counter() - began)
        first_cpu = min(first_cpu, time.process_time() - cpu_began)
    scores, seconds = {}, {}
    with tempfile.TemporaryDirectory() as scratch:
        for w in (chosen, 1.0, 0.0):
            model.parser.weight = w
            began = time.perf_counter()
            parsed = model.parse_text(text)
            seconds[w] = time.perf_counter() - began
            path = Path(scratch) / f"test-{w}.conllu"
            write_conllu(parsed, path)
            scores[w] = official(args.test, path)
        model.parser.weight = chosen
        cpu = {PRUNE: [], 0.0: []}
        for _ in range(2):
            for prune in cpu:
                ensemble_parser.PRUNE = prune
                began = time.process_time()
                parsed = model.parse_text(text)
                cpu[prune].append(time.process_time() - began)
        ensemble_parser.PRUNE = PRUNE
        path = Path(scratch) / "test-unpruned.conllu"
        write_conllu(parsed, path)
        unpruned = official(args.test, path)
    print(f"pruned / unpruned CPU seconds: {min(cpu[PRUNE]):.2f} / {min(cpu[0.0]):.2f} = "
          f"{min(cpu[PRUNE]) / min(cpu[0.0]):.2f}; LAS {scores[chosen]['LAS']:.2f} / "
          f"{unpruned['LAS']:.2f}; the first pipeline alone {first_cpu:.2f} CPU seconds "
          f"(the ensemble {min(cpu[PRUNE]) / first_cpu:.2f} times)", file=sys.stderr)
    append_result(args.results, {
        "first": args.first.name, "second": args.second.name, "test": args.test.name,
        "weight": chosen, "dev_LAS": {str(w): round(v, 2) for w, v in on_dev.items()},
        **{f"test_{m}": round(scores[chosen][m], 2) for m in REPORTED},
        "first_alone_LAS": round(scores[1.0]["LAS"], 2),
        "second_alone_LAS": round(scores[0.0]["LAS"], 2),
        "combine_seconds": round(combine_seconds, 1),
        "test_parse_seconds": round(seconds[chosen], 1),
        "first_pipeline_seconds": round(first_seconds, 1),
        "first_pipeline_cpu": round(first_cpu, 2),
        "test_parse_cpu": round(min(cpu[PRUNE]), 2),
        "unpruned_test_parse_cpu": round(min(cpu[0.0]), 2),
        **{f"unpruned_test_{m}": round(unpruned[m], 2) for m in REPORTED},
        "date": str(datetime.date.today()), "machine": machine(), "label": args.label})


if __name__ == "__main__":
    main()
