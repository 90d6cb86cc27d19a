"""UDPipe 1 (Parsito), the practical peer: a parser-only model trained on the same gold-tagged
files, timed and scored in the same way as ours.

    python bench/udpipe_reference.py UD_Gothic-PROIEL [--iterations 10]
                                     [--results bench/first_order.jsonl]

Needs ``pip install ufal.udpipe`` (part of the ``bench`` extra). Appends one JSON line to
--results with the same fields as bench/first_order.py.
"""

import argparse
import datetime
import io
import tempfile
import time
from pathlib import Path

from common import ROOT, append_result, machine
from first_order import files
from ufal.udpipe import InputFormat, Model, Pipeline, ProcessingError, Sentence, Sentences, Trainer

from arborparse.eval import evaluate
from arborparse.io import read_conllu


def load(path):
    reader = InputFormat.newConlluInputFormat()
    reader.setText(Path(path).read_text(encoding="utf-8"))
    out, err, sentence = Sentences(), ProcessingError(), Sentence()
    while reader.nextSentence(sentence, err):
        out.append(sentence)
        sentence = Sentence()
    if err.occurred():
        raise RuntimeError(err.message)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("treebank")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--results", default=str(ROOT / "bench" / "first_order.jsonl"))
    args = parser.parse_args()
    train, dev, test = files(args.treebank)
    err = ProcessingError()
    start, cpu = time.perf_counter(), time.process_time()
    model_bytes = Trainer.train("morphodita_parsito", load(train), load(dev), "none", "none",
                                f"iterations={args.iterations}", err)
    train_wall, train_cpu = time.perf_counter() - start, time.process_time() - cpu
    if err.occurred():
        raise RuntimeError(err.message)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.udpipe"
        path.write_bytes(model_bytes)
        start, cpu = time.perf_counter(), time.process_time()
        model = Model.load(str(path))
        load_seconds = time.perf_counter() - start
        pipeline = Pipeline(model, "conllu", Pipeline.NONE, Pipeline.DEFAULT, "conllu")
        parsed = pipeline.process(Path(test).read_text(encoding="utf-8"), err)
        parse_wall, parse_cpu = time.perf_counter() - start, time.process_time() - cpu
    gold = read_conllu(test)
    scores = evaluate(gold, read_conllu(io.StringIO(parsed)))
    result = {
        "treebank": args.treebank, "trainer": f"UDPipe 1 ({args.iterations} it.)",
        "decoder": "transition", "epochs": args.iterations,
        "train_seconds": train_wall, "train_cpu_seconds": train_cpu,
        "parse_seconds": parse_wall, "parse_cpu_seconds": parse_cpu,
        "load_seconds": load_seconds, "test_sentences": scores["sentences"],
        "test_words": scores["words"], "model_bytes": len(model_bytes),
        **{k: scores[k] for k in ("UAS", "LAS", "UAS_nopunct", "LAS_nopunct", "UCM", "LCM")},
        "date": str(datetime.date.today()), "machine": machine(),
    }
    append_result(args.results, result)


if __name__ == "__main__":
    main()
