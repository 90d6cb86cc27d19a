"""Tagging speed against UDPipe 1 on the same file: words per CPU second, model load
included, tagger and lemmatizer only (no parser), one core.

    python bench/tagging_speed.py UD_Gothic-PROIEL [--repeat 3]

Reads the models the pipeline benchmarks kept: `bench/runs/udpipe-TREEBANK.udpipe`
(`bench/udpipe_pipeline.py`) and `bench/runs/pipeline-mira-TREEBANK.npz`
(`bench/pipeline.py`), whose tagger and lemmatizer are saved alone first (what
`arborparse train --components tagger,lemmatizer` writes). Each run loads its model and
tags the test set's words (tag and lemma columns emptied) from CoNLL-U text to CoNLL-U
text; runs interleaved, the fastest of --repeat kept. Needs ``ufal.udpipe``.
"""

import argparse
import io
import time

from common import ROOT, files, machine
from udpipe_pipeline import untagged
from ufal.udpipe import Model, Pipeline, ProcessingError

import arborparse
from arborparse.io import read_conllu
from arborparse.pipeline import Pipeline as Ours


def cpu_seconds(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("treebank")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    runs = ROOT / "bench" / "runs"
    full = arborparse.load(runs / f"pipeline-mira-{args.treebank}.npz")
    ours_path = runs / f"tagger-{args.treebank}.npz"
    Ours(full.tagger, full.lemmatizer).save(ours_path)
    udpipe_path = str(runs / f"udpipe-{args.treebank}.udpipe")
    text = untagged(files(args.treebank)[2])
    words = sum(len(s) for s in read_conllu(io.StringIO(text)))

    def udpipe():
        error = ProcessingError()
        model = Model.load(udpipe_path)
        out = Pipeline(model, "conllu", Pipeline.DEFAULT, Pipeline.NONE, "conllu").process(
            text, error)
        assert not error.occurred() and out

    def ours():
        model = arborparse.load(ours_path)
        out = "".join(s.to_text() for s in model.parse(read_conllu(io.StringIO(text))))
        assert out

    ours()  # compiled functions loaded from the cache once, as any later run finds them
    best = {"UDPipe 1": float("inf"), "arborparse": float("inf")}
    for _ in range(args.repeat):
        for name, fn in (("UDPipe 1", udpipe), ("arborparse", ours)):
            best[name] = min(best[name], cpu_seconds(fn))
    print(f"{args.treebank} test, {words} words; {machine()}")
    for name, seconds in best.items():
        print(f"{name:<12}{seconds:8.2f} CPU s  {words / seconds:>10,.0f} words/s")
    print(f"arborparse / UDPipe 1 speed: {best['UDPipe 1'] / best['arborparse']:.2f}")


if __name__ == "__main__":
    main()
