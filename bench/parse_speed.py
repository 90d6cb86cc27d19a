"""Parsing speed of a model on one core, against a reference checkout in the same run.

    python bench/parse_speed.py MODEL --reference DIR [--treebank UD_English-EWT]
                                [--text] [--repeat 3]

Parses the treebank's test set (a folder's path, or a name under the UD folder) with
`arborparse parse --model MODEL` on one thread, model load and Python's start included,
alternately with this checkout and with the checkout DIR (an earlier commit, e.g. `git
worktree add /tmp/reference COMMIT`), --repeat times each: from its words alone (UPOS,
XPOS, FEATS and LEMMA blanked, as `bench/neural.py` does), or with --text from its raw text
(``--input-format text``: the text rebuilt from the tokens, paragraphs separated by blank
lines, as `bench/raw_text.py` does; a model with a tokenizer). Prints sentences (the
treebank's, from raw text too, whatever the model's splitter finds) per second by wall and
by CPU time (the fastest run of each), the ratios this / reference, and
whether the two parsed files are identical. (Named `bench/neural_speed.py` until the
linear family's order 2 was measured with it.)
"""

import argparse
import datetime
import filecmp
import sys
import tempfile
from pathlib import Path

from common import COMMAND, UD, machine, run, split_files

from arborparse.io import read_conllu, write_conllu
from arborparse.io.conllu import FEATS, LEMMA, UPOS, XPOS
from arborparse.text.tokenizer import paragraphs

BLANKED = (LEMMA, UPOS, XPOS, FEATS)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--reference", required=True, help="another checkout of arborparse")
    ap.add_argument("--treebank", default="UD_English-EWT")
    ap.add_argument("--text", action="store_true", help="from raw text (models with a tokenizer)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    folder = Path(args.treebank) if Path(args.treebank).is_dir() else UD / args.treebank
    found = split_files(folder)
    if "test" not in found:
        raise SystemExit(f"{folder}: needs *-ud-test.conllu")
    gold = read_conllu(found["test"])
    print(f"Command: `python {' '.join(sys.argv)}` — {datetime.date.today()} — {machine()}, "
          f"1 thread, {args.treebank} test ({len(gold)} sentences), "
          f"{'raw text' if args.text else 'words only'}\n")
    with tempfile.TemporaryDirectory() as tmp:
        if args.text:
            source = Path(tmp) / "test.txt"
            source.write_text("\n\n".join(p for p, _ in paragraphs(gold)) + "\n",
                              encoding="utf-8")
            given = ["--input-format", "text", source]
        else:
            source = Path(tmp) / "words.conllu"
            write_conllu([s.with_columns({c: ["_"] * len(s) for c in BLANKED}) for s in gold],
                         source)
            given = [source]
        checkouts = {"this checkout": Path(__file__).resolve().parent.parent,
                     "reference": Path(args.reference).resolve()}
        best = {name: (float("inf"), float("inf")) for name in checkouts}
        for _ in range(args.repeat):
            for name, package in checkouts.items():
                out = Path(tmp) / f"{name}.conllu"
                r = run([*COMMAND, "parse", "--model", args.model, *given, "-o", out],
                        package=package)
                best[name] = (min(best[name][0], r.wall), min(best[name][1], r.cpu))
        same = filecmp.cmp(Path(tmp) / "this checkout.conllu", Path(tmp) / "reference.conllu",
                           shallow=False)
    print("| checkout | sentences/s (wall) | sentences/s (CPU) |")
    print("|---|---|---|")
    for name, (wall, cpu) in best.items():
        print(f"| {name} ({checkouts[name]}) | {len(gold) / wall:.0f} | {len(gold) / cpu:.0f} |")
    (wall, cpu), (ref_wall, ref_cpu) = best.values()
    print(f"| ratio this / reference | {ref_wall / wall:.2f} | {ref_cpu / cpu:.2f} |")
    print(f"\nParsed files identical: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
