"""Long sentences: time and peak memory of parsing one n-word sentence.

    python bench/long_sentences.py --model MODEL.npz [--sizes 250 500 1000] [--threads 2]
                                   [--tasks TASK ...]

The model may be of any family: the neural and ISBN ones run the tasks map and (neural)
mbr-marginals, besides the LAPACK reference. A sentence of n words is English-EWT test's
words in order, one after another (UPOS, XPOS, FEATS, LEMMA as in the treebank). Each measurement runs in a fresh process (one thread),
after a warm-up call on a short sentence, so its peak resident memory is its own ("MB it
adds": the peak less the peak before the measured call, Python, numba and the model already
loaded); CPU seconds are the process's, the figure to compare on a shared machine. Tasks:
- score: the arc scores alone;
- map: `parse_one` with the defaults (the best tree, labeled);
- mbr-marginals: `parse_one(decode_as="mbr", marginals=True)`, the MBR tree with each
  word's head and label probabilities and the head marginals of every arc;
- map-threads, mbr-marginals-threads: the same with ``threads=N`` (`--threads`: the arcs
  and labels scored in N threads; compare wall seconds with the one-thread task's);
- map-every-arc, mbr-marginals-every-arc: map and mbr-marginals with the parser's reach
  and tag reach taken away (every arc scored, as models trained before the reach parse;
  compare with map and mbr-marginals: what leaving the arcs out of reach saves);
- the references, measured in the same run: the same compiled scorer walking every word
  between head and modifier for the in-between POS features (what `score_arcs` did before
  counting them per tag), and LAPACK's LU factorization and inverse of an n x n matrix
  (`scipy.linalg`), the dense linear-algebra bound of the Matrix-Tree route.
Prints a Markdown table.
"""

import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[var] = "1"

import argparse  # noqa: E402
import datetime  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from common import UD, machine  # noqa: E402
from numba import njit  # noqa: E402

from arborparse.linear.templates import arc_features, index  # noqa: E402

TASKS = ("score-walk", "score", "map", "mbr-marginals", "map-threads", "mbr-marginals-threads",
         "map-every-arc", "mbr-marginals-every-arc", "lapack-lu-inverse")
FAMILY_TASKS = ("map", "mbr-marginals", "lapack-lu-inverse")  # any family's (ISBN: map)


@njit(cache=True)
def score_walking(attrs, feats_ptr, feats, w, buf):
    """w · f(x, h, m) summed over `arc_features`'s full list (in-between words walked)."""
    N = attrs.shape[0]
    S = np.full((N, N), -np.inf)
    for h in range(N):
        for m in range(1, N):
            if h != m:
                total = 0.0
                for k in range(arc_features(attrs, feats_ptr, feats, h, m, buf)):
                    i = index(buf[k], np.empty(0, dtype=np.uint64), w.shape[0])
                    total += w[i]
                S[h, m] = total
    return S


def long_sentence(n):
    from arborparse.io import read_conllu

    test = read_conllu(UD / "UD_English-EWT" / "en_ewt-ud-test.conllu")
    rows = [s.rows[r] for s in test for r in s.word_rows][:n]
    text = "".join("\t".join([str(i), *cols[1:6], str(i - 1), "dep", "_", "_"]) + "\n"
                   for i, cols in enumerate(rows, 1))
    return read_conllu(io.StringIO(text + "\n"))[0]


def one(model_path, n, task, threads):
    """Run one task on an n-word sentence in this process; print seconds and peak MB."""
    import scipy.linalg

    import arborparse

    loaded = arborparse.load(model_path)
    parser = getattr(loaded, "parser", loaded)  # the model file may hold a pipeline
    model = getattr(parser, "model", None)  # the linear family's (other families: none)
    if model is None and task not in FAMILY_TASKS:
        raise SystemExit(f"{model_path}: task {task} needs a linear model; a "
                         f"{parser.kind} model runs {', '.join(FAMILY_TASKS)}")
    if task.endswith("-every-arc"):
        parser.reach = parser.tag_reach = None

    def run(sentence):
        x = model.encoded(sentence)
        if task == "score-walk":
            return score_walking(x.table.attrs, x.table.feats_ptr, x.table.feats,
                                 model.weights, x.buf)
        if task == "score":
            return model.cluster_scores(x)
        if task == "lapack-lu-inverse":
            M = np.random.default_rng(0).random((len(sentence), len(sentence)))
            return scipy.linalg.inv(M + len(sentence) * np.eye(len(sentence)))
        options = {"threads": threads} if task.endswith("-threads") else {}
        if task.startswith("map"):  # map, map-threads, map-every-arc
            return parser.parse([sentence], **options)
        return parser.parse([sentence], decode_as="mbr", marginals=True, **options)

    run(long_sentence(80))  # compile and warm up (80 words: the threaded path too)
    sentence = long_sentence(n)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start, cpu = time.perf_counter(), time.process_time()
    run(sentence)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"words": n, "task": task, "seconds": seconds, "cpu_seconds": cpu,
                      "peak_mb": peak, "extra_mb": peak - before}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="a model file (arborparse train)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000])
    ap.add_argument("--threads", type=int, default=2, help="threads of the -threads tasks")
    ap.add_argument("--tasks", nargs="+", choices=TASKS, default=list(TASKS),
                    help="the tasks to run (default: all)")
    ap.add_argument("--one", nargs=2, metavar=("N", "TASK"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        one(args.model, int(args.one[0]), args.one[1], args.threads)
        return
    print(f"<!-- {' '.join(sys.argv)}; {datetime.date.today()}; {machine()} -->")
    rows = {}
    for n in args.sizes:
        for task in args.tasks:
            out = subprocess.run([sys.executable, __file__, "--model", args.model, "--one",
                                  str(n), task, "--threads", str(args.threads)],
                                 capture_output=True, text=True)
            if out.returncode:
                raise SystemExit((out.stderr.strip() or "failed").splitlines()[-1])
            rows[n, task] = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"<!-- {out.stdout.strip()} -->", flush=True)
    print("| words | task | seconds | CPU seconds | peak MB | MB it adds | ratio |")
    print("|---:|---|---:|---:|---:|---:|---|")
    for n in args.sizes:
        for task in args.tasks:
            r = rows[n, task]
            ratios = []
            walk, lapack = rows.get((n, "score-walk")), rows.get((n, "lapack-lu-inverse"))
            alone = rows.get((n, task.removesuffix("-threads")))
            every = rows.get((n, task + "-every-arc"))
            if task == "score" and walk:
                ratios.append(f"{walk['cpu_seconds'] / r['cpu_seconds']:.1f}x faster than "
                              "walking")
            if task in ("map", "mbr-marginals") and every:
                ratios.append(f"{every['cpu_seconds'] / r['cpu_seconds']:.1f}x faster than "
                              "every arc")
            if task in ("map", "mbr-marginals") and lapack:
                ratios.append(f"{r['cpu_seconds'] / lapack['cpu_seconds']:.0f}x LAPACK's LU "
                              "inverse")
            if task.endswith("-threads") and alone:
                ratios.append(f"{alone['seconds'] / r['seconds']:.2f}x faster than one "
                              f"thread ({args.threads} threads, wall time)")
            ratio = "; ".join(ratios)
            print(f"| {n} | {task} | {r['seconds']:.2f} | {r['cpu_seconds']:.2f} | "
                  f"{r['peak_mb']:.0f} | {r['extra_mb']:.0f} | {ratio} |")


if __name__ == "__main__":
    main()
