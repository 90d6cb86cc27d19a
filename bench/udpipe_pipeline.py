"""UDPipe 1, tagger and parser, trained here on the same files: the reference of the text
front end (gold tokenization, predicted tags).

    python bench/udpipe_pipeline.py UD_Gothic-PROIEL [--results bench/pipeline.jsonl]

Needs ``pip install ufal.udpipe`` (the ``bench`` extra). UDPipe's default options for its
tagger (MorphoDiTa: UPOS, XPOS, FEATS, lemmas) and parser (Parsito), tokenizer off; model
chosen on dev as UDPipe does. The test set's gold words go in with their tag columns
emptied; the output is scored with `arborparse evaluate` (the CoNLL 2018 measures). Tagging
speed: words per second of the tagger alone on test, one core, model load included.
Appends one JSON line to --results.
"""

import argparse
import datetime
import io
import time

from common import ROOT, append_result, files, machine
from ufal.udpipe import Model, Pipeline, ProcessingError, Trainer
from udpipe_reference import load

from arborparse.eval import evaluate
from arborparse.io import read_conllu
from arborparse.io.conllu import FEATS, LEMMA, UPOS, XPOS


def untagged(path) -> str:
    """The file's sentences with LEMMA, UPOS, XPOS, FEATS, HEAD and DEPREL emptied."""
    return "".join(s.with_columns({c: ["_"] * len(s) for c in (LEMMA, UPOS, XPOS, FEATS)})
                   .to_text() for s in read_conllu(path))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("treebank")
    ap.add_argument("--results", default=str(ROOT / "bench" / "pipeline.jsonl"))
    args = ap.parse_args()
    train, dev, test = files(args.treebank)
    err = ProcessingError()
    start, cpu = time.perf_counter(), time.process_time()
    model_bytes = Trainer.train("morphodita_parsito", load(train), load(dev), "none", "", "",
                                err)
    train_wall, train_cpu = time.perf_counter() - start, time.process_time() - cpu
    if err.occurred():
        raise RuntimeError(err.message)
    text = untagged(test)
    words = sum(len(s) for s in read_conllu(test))
    path = ROOT / "bench" / "runs" / f"udpipe-{args.treebank}.udpipe"  # kept for reruns
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(model_bytes)
    start = time.perf_counter()
    model = Model.load(str(path))  # held in a variable: a Pipeline does not keep it alive
    tagger = Pipeline(model, "conllu", Pipeline.DEFAULT, Pipeline.NONE, "conllu")
    tagger.process(text, err)
    tag_seconds = time.perf_counter() - start
    full = Pipeline(model, "conllu", Pipeline.DEFAULT, Pipeline.DEFAULT, "conllu")
    parsed = full.process(text, err)
    if err.occurred():
        raise RuntimeError(err.message)
    scores = evaluate(read_conllu(test), read_conllu(io.StringIO(parsed)))
    result = {"treebank": args.treebank, "system": "UDPipe 1 tagger+parser",
              "train_seconds": train_wall, "train_cpu_seconds": train_cpu,
              "tagging_words_per_second": words / tag_seconds,
              **{k: scores[k] for k in ("UPOS", "XPOS", "UFeats", "AllTags", "Lemmas", "UAS",
                                        "LAS", "CLAS", "MLAS", "BLEX")},
              "date": str(datetime.date.today()), "machine": machine()}
    append_result(args.results, result)


if __name__ == "__main__":
    main()
