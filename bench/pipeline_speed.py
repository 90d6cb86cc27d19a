"""Speed of the default pipeline against UDPipe 1, in one run: raw text to CoNLL-U (words
per CPU second, one core, everything included), and the pipeline on gold tokens
(sentences per CPU second).

    python bench/pipeline_speed.py UD_English-EWT --model PIPELINE.npz [--repeat 3]
                                   [--udpipe-options "epochs=1;iterations=1;iterations=1"]
                                   [--runs bench/runs] [--results bench/pipeline_speed.jsonl]

Ours: `--model`, a pipeline `arborparse train` wrote with its defaults (tokenizer, tagger,
lemmatizer, parser). From raw text: ``arborparse parse --input-format text`` on the test
set's text (rebuilt from its tokens and ``SpaceAfter=No`` as in `bench/raw_text.py`); on
gold tokens: ``arborparse parse`` on the test set's words with tags and lemmas emptied (as
in `bench/pipeline.py`). Each command is timed whole (CPU seconds of the process, one
thread): Python's start, the imports and the model load count. UDPipe 1: one model
(tokenizer, tagger, parser) trained here on the same files (kept in --runs for reruns),
loaded and run from the same raw text to CoNLL-U in this process (its CPU seconds).
``--udpipe-options`` (tokenizer; tagger; parser options) trains it with fewer iterations
for a quick run: its size, and so its speed, do not depend on them (its accuracy does; it
is not scored here). Runs interleaved, the fastest of --repeat kept. Prints the figures and
ratios; appends one JSON line to --results.
"""

import argparse
import datetime
import tempfile
import time
from pathlib import Path

from common import COMMAND, ROOT, append_result, files, machine, run
from udpipe_pipeline import untagged
from udpipe_reference import load
from ufal.udpipe import Model, Pipeline, ProcessingError, Trainer

from arborparse.io import read_conllu
from arborparse.text.tokenizer import paragraphs


def udpipe_model(treebank: str, options: str, runs: Path) -> Path:
    """UDPipe 1's tokenizer, tagger and parser trained on the treebank (once: kept in
    `runs`, named by the options)."""
    tokenizer, tagger, parser = options.split(";") if options else ("", "", "")
    kept = runs / f"udpipe-full-{treebank}{'-' + options if options else ''}.udpipe"
    if not kept.exists():
        train, dev, _ = files(treebank)
        err = ProcessingError()
        model = Trainer.train("morphodita_parsito", load(train), load(dev), tokenizer, tagger,
                              parser, err)
        if err.occurred():
            raise RuntimeError(err.message)
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_bytes(model)
    return kept


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("treebank")
    ap.add_argument("--model", required=True, help="our pipeline (arborparse train)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--udpipe-options", default="",
                    help='UDPipe 1 training options "TOKENIZER;TAGGER;PARSER" (default: its '
                         "defaults)")
    ap.add_argument("--runs", default=str(ROOT / "bench" / "runs"))
    ap.add_argument("--results", default=str(ROOT / "bench" / "pipeline_speed.jsonl"))
    args = ap.parse_args()
    test = files(args.treebank)[2]
    gold = read_conllu(test)
    words, sentences = sum(len(s) for s in gold), len(gold)
    text = "\n\n".join(p for p, _ in paragraphs(gold)) + "\n"
    reference = udpipe_model(args.treebank, args.udpipe_options, Path(args.runs))

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "test.txt").write_text(text, encoding="utf-8")
        (tmp / "untagged.conllu").write_text(untagged(test), encoding="utf-8")

        def ours_text():
            return run([*COMMAND, "parse", "--model", args.model, "--input-format", "text",
                        tmp / "test.txt", "-o", tmp / "text.conllu"]).cpu

        def ours_tokens():
            return run([*COMMAND, "parse", "--model", args.model, tmp / "untagged.conllu",
                        "-o", tmp / "tokens.conllu"]).cpu

        def udpipe():
            start, err = time.process_time(), ProcessingError()
            model = Model.load(str(reference))  # held: a Pipeline does not keep it alive
            out = Pipeline(model, "tokenize", Pipeline.DEFAULT, Pipeline.DEFAULT,
                           "conllu").process(text, err)
            if err.occurred() or not out:
                raise RuntimeError(err.message)
            return time.process_time() - start

        ours_text()  # compiled functions loaded from numba's cache once, as later runs find
        best = {"arborparse text": float("inf"), "UDPipe 1 text": float("inf"),
                "arborparse gold tokens": float("inf")}
        for _ in range(args.repeat):
            for name, fn in (("arborparse text", ours_text), ("UDPipe 1 text", udpipe),
                             ("arborparse gold tokens", ours_tokens)):
                best[name] = min(best[name], fn())
    out = {"treebank": args.treebank, "words": words, "sentences": sentences,
           "udpipe_options": args.udpipe_options, "cpu_seconds": best,
           "arborparse_text_words_per_second": words / best["arborparse text"],
           "udpipe_text_words_per_second": words / best["UDPipe 1 text"],
           "text_speed_ratio": best["UDPipe 1 text"] / best["arborparse text"],
           "arborparse_gold_tokens_sentences_per_second":
               sentences / best["arborparse gold tokens"],
           "date": str(datetime.date.today()), "machine": machine()}
    print(f"{args.treebank} test: {words} words, {sentences} sentences; {machine()}")
    print(f"raw text   arborparse {out['arborparse_text_words_per_second']:>8,.0f} words/s   "
          f"UDPipe 1 {out['udpipe_text_words_per_second']:>8,.0f} words/s   "
          f"ratio {out['text_speed_ratio']:.2f}")
    print(f"gold tokens arborparse {out['arborparse_gold_tokens_sentences_per_second']:>7,.0f}"
          " sentences/s")
    append_result(args.results, out)


if __name__ == "__main__":
    main()
