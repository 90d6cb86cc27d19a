"""Peak memory of one neural training step (forward and backward, the tree CRF) on the
longest training sentence of a treebank and on a 250-word sentence, each in a fresh process.

    python bench/neural_memory.py UD_English-EWT bench/runs/neural-crf-UD_English-EWT.npz
                                  [--objective crf] [--results bench/neural_memory.jsonl]

The 250-word sentence repeats the longest training sentence's words and tree (the roots of
the later copies, and words whose head was cut off, attached to word 1). Prints and appends one JSON line: the peak RSS (MB) of
each process after loading the model and after the step.
"""

import argparse
import datetime
import json
import os
import subprocess
import sys

from common import ROOT, append_result, files, machine

STEP = """
import json, resource, sys
import numpy as np
import torch
import arborparse
from arborparse.io import read_conllu
from arborparse.neural.network import Batch
from arborparse.neural.train import NeuralTrainer

train, model, objective, words = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
torch.set_num_threads(1)
parser = arborparse.load(model)
parser = getattr(parser, "parser", None) or parser
longest = max(read_conllu(train), key=len)
sentence = longest
if words:
    n, copies = len(longest), -(-words // len(longest))
    heads = np.concatenate([[-1]] + [np.where(longest.heads[1:] == 0, 0 if c == 0 else 1,
                                              longest.heads[1:] + c * n) for c in range(copies)])
    heads = np.where(heads > words, 1, heads)  # into the cut last copy: to word 1
    rows = [[str(i + 1), *row[1:6], str(int(heads[i + 1])), row[7], "_", "_"]
            for i, row in enumerate([longest.rows[r] for r in longest.word_rows] * copies)]
    text = "".join("\\t".join(r) + "\\n" for r in rows[:words])
    sentence = read_conllu(__import__("io").StringIO(text + "\\n"))[0]
loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
net, vocab = parser.network, parser.vocab
net.train()
batch = Batch.of(vocab, [sentence], [vocab.targets(sentence)])
loss, n = NeuralTrainer(objective).loss(net, batch)
(loss / n).backward()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"words": len(sentence), "loaded_mb": loaded, "peak_mb": peak}))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("treebank")
    ap.add_argument("model")
    ap.add_argument("--objective", default="crf")
    ap.add_argument("--results", default=str(ROOT / "bench" / "neural_memory.jsonl"))
    args = ap.parse_args()
    train = files(args.treebank)[0]
    out = {"treebank": args.treebank, "objective": args.objective}
    for name, words in (("longest", 0), ("250 words", 250)):
        proc = subprocess.run([sys.executable, "-c", STEP, train, args.model, args.objective,
                               str(words)], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT),
                                   "OMP_NUM_THREADS": "1"})
        out[name] = json.loads(proc.stdout)
    out.update(date=str(datetime.date.today()), machine=machine())
    append_result(args.results, out)


if __name__ == "__main__":
    main()
