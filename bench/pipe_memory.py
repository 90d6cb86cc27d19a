"""Memory of `nlp.pipe` over a long stream: the resident memory of the process every 10,000
sentences while 100,000 sentences of raw text go through a pipeline (tokenizer, tagger,
linear parser) one document at a time, lazily.

    python bench/pipe_memory.py [--sentences 100000] [--results bench/pipe_memory.jsonl]

The pipeline is trained in the benchmark on English-EWT dev (small, one epoch: the point is
memory, not accuracy); the stream cycles through the raw text of EWT test's paragraphs.
Prints and appends one JSON line: RSS (MB) after loading and at every checkpoint, and the
growth from the first checkpoint to the last. The reference is the first checkpoint: a
flat stream grows by about nothing after it.
"""

import argparse
import datetime
import itertools
import json
import resource
import time

from common import UD, append_result, machine

import arborparse
from arborparse.io import read_conllu


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sentences", type=int, default=100_000)
    ap.add_argument("--every", type=int, default=10_000)
    ap.add_argument("--results", default="bench/pipe_memory.jsonl")
    args = ap.parse_args()
    ewt = UD / "UD_English-EWT"
    nlp = arborparse.train(ewt / "en_ewt-ud-dev.conllu", components="tokenizer,tagger,parser",
                           progress=False, trainer="perceptron", epochs=1, folds=2,
                           hash_bits=20)
    texts = [next(c[9:] for c in s.comments if c.startswith("# text = "))
             for s in read_conllu(ewt / "en_ewt-ud-test.conllu")]
    stream = itertools.cycle(texts)  # one sentence's text a document
    loaded = rss_mb()
    marks, done, start = [], 0, time.perf_counter()
    for doc in nlp.pipe(itertools.islice(stream, args.sentences)):
        done += 1
        if done % args.every == 0:
            marks.append({"sentences": done, "rss_mb": round(rss_mb(), 1),
                          "seconds": round(time.perf_counter() - start, 1)})
            print(json.dumps(marks[-1]), flush=True)
    row = {"benchmark": "nlp.pipe memory", "date": datetime.date.today().isoformat(),
           "machine": machine(), "command": "python bench/pipe_memory.py "
           f"--sentences {args.sentences}", "documents": done, "rss_after_load_mb":
           round(loaded, 1), "checkpoints": marks,
           "growth_first_to_last_mb": round(marks[-1]["rss_mb"] - marks[0]["rss_mb"], 1)}
    append_result(args.results, row)


if __name__ == "__main__":
    main()
