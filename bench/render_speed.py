"""Rendering a 2,000-sentence file to one HTML page with `arborparse render`, whole command
(Python's start included), against reading the same file alone.

    python bench/render_speed.py [--treebank UD_English-EWT] [--results bench/render.jsonl]

The file is the treebank's first 2,000 training sentences with a HeadProb in every word's
MISC (so every arc is drawn with its probability). The best of 3 runs of each.
"""

import argparse
import datetime
import tempfile
from pathlib import Path

from common import COMMAND, ROOT, append_result, files, machine, run

from arborparse.io import read_conllu, write_conllu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--treebank", default="UD_English-EWT")
    ap.add_argument("--results", default=str(ROOT / "bench" / "render.jsonl"))
    args = ap.parse_args()
    train, _, _ = files(args.treebank)
    sentences = read_conllu(train)[:2000]
    sentences = [s.with_misc([f"HeadProb={0.3 + 0.7 * ((m * 7919) % 100) / 100:.4f}"
                              for m in range(1, len(s) + 1)]) for s in sentences]
    with tempfile.TemporaryDirectory() as folder:
        source, out = Path(folder) / "in.conllu", Path(folder) / "out.html"
        write_conllu(sentences, source)
        render = min(run([*COMMAND, "render", source, "-o", out, "--force"]).wall
                     for _ in range(3))
        read = min(run([*COMMAND, "evaluate", source, source]).wall for _ in range(3))
        size = out.stat().st_size
    append_result(args.results, {
        "benchmark": "render 2,000 sentences to HTML", "treebank": args.treebank,
        "sentences": len(sentences), "words": sum(map(len, sentences)),
        "render_seconds": render, "html_mb": size / 2**20,
        "evaluate_same_file_seconds (reference: reading it twice and scoring)": read,
        "date": datetime.date.today().isoformat(), "machine": machine()})


if __name__ == "__main__":
    main()
