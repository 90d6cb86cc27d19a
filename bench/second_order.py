"""Second-order parsing: inference speed, and first against second order with everything
else equal.

    python bench/second_order.py inference [--n 40] [--results bench/second_order.jsonl]
    python bench/second_order.py accuracy --family linear|neural [--treebanks ...]
                                 [--seeds 0 1 2] [--epochs N] [--variants ...]
                                 [--workdir bench/runs/second_order] [--results FILE]
    python bench/second_order.py table [--results FILE]

`inference` times, on random scores of one n-word sentence, second-order MAP (Eisner with
siblings; with siblings and grandparents) against second-order inside-outside (log Z and
every part's marginal) and against the non-projective approximation (MAP, then the hill
climb of `--decoder mst`), with the first-order Eisner and inside-outside of the same
sentence as the reference, each the fastest of interleaved repeats on one core; and the
batched torch back end's tensor route (a GPU's: MAP and inside-outside by autograd of the inside)
on a batch of copies of the sentence.

`accuracy` trains, for each treebank and seed, one model per variant (linear: `--order 1`
and `--order 2`; neural: `--objective crf` and `crf2o`) with the family's defaults
otherwise, after one warm-up training of each variant on 30 sentences (numba compiles once)
(`arborparse train --components parser`: the linear parser reads the gold tags,
the neural one predicts its own), measuring training CPU time; parses test and scores it with the official CoNLL 2018
script; and measures the parse speed (`speed`: sentences per CPU second of one process on
one thread, after the model is loaded and 50 sentences parsed once). Models and parsed files stay in
--workdir; finished configurations in --results are skipped, so a run resumes.

`table` prints, per family and treebank, each variant's test UAS/LAS (mean over seeds), the
difference, the sentence-level sign and permutation tests of `arborparse compare` (first
seed's pair), training CPU and parse speed; then the average over treebanks.
"""

import argparse
import datetime
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))  # `common`, also for `speed` run
# by `run` (PYTHONSAFEPATH leaves the script's folder out)

import numpy as np  # noqa: E402
from common import (  # noqa: E402
    COMMAND,
    ROOT,
    TREEBANKS,
    append_result,
    best_times,
    files,
    machine,
    official,
    run,
)

from arborparse import trees  # noqa: E402
from arborparse.io import read_conllu  # noqa: E402
from arborparse.trees import second_order  # noqa: E402

VARIANTS = {"linear": {"order1": ["--order", "1"], "order2": ["--order", "2"],
                       "order2g": ["--order", "2", "--second-order", "siblings+grandparents"]},
            "neural": {"crf": ["--objective", "crf"], "crf2o": ["--objective", "crf2o"]}}
DEFAULT_VARIANTS = {"linear": ["order1", "order2"], "neural": ["crf", "crf2o"]}
RESULTS = ROOT / "bench" / "second_order.jsonl"


def inference(args):
    print(" ".join(sys.argv), "|", machine(), "| one thread")
    rng = np.random.default_rng(0)
    N = args.n + 1
    S = rng.normal(size=(N, N))
    sib = rng.normal(size=(N, N, N))
    grand = rng.normal(size=(N, N, N))
    fns = {
        "first-order MAP": lambda: trees.eisner(S),
        "first-order inside-outside": lambda: trees.log_partition_and_marginals(S, True),
        "siblings MAP": lambda: second_order.eisner(S, sib),
        "siblings inside-outside": lambda: second_order.log_partition_and_marginals(S, sib),
        "grandparents MAP": lambda: second_order.eisner(S, sib, grand),
        "grandparents inside-outside":
            lambda: second_order.log_partition_and_marginals(S, sib, grand),
        "siblings approximate": lambda: second_order.approximate(S, sib),
        "grandparents approximate": lambda: second_order.approximate(S, sib, grand),
    }
    models = ["first-order", "siblings", "grandparents"]
    try:
        import torch

        from arborparse.trees import batch_second_order
    except ImportError:  # the torch extra is not installed
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
        lengths = torch.full((args.batch,), args.n)
        St = torch.tensor(S).expand(args.batch, N, N).contiguous()
        sibt = torch.tensor(sib).expand(args.batch, N, N, N).contiguous()
        # the tensors' route (a GPU's; on the CPU the batch functions run the compiled
        # kernels above, a sentence at a time)
        fns[f"torch siblings MAP, batch of {args.batch}"] = \
            lambda: batch_second_order._tensor_eisner(St, sibt, lengths, True)
        fns[f"torch siblings inside-outside, batch of {args.batch}"] = \
            lambda: batch_second_order._tensor_marginals(St, sibt, lengths, True)
        models.append("torch siblings")
    for fn in fns.values():  # compile
        fn()
    best = best_times(fns, repeat=args.repeat)
    for name, seconds in best.items():
        print(f"{name:45s} {1000 * seconds:9.3f} ms")
    suffix = {m: f", batch of {args.batch}" if m.startswith("torch") else "" for m in models}
    ratios = {m: best[f"{m} MAP{suffix[m]}"] / best[f"{m} inside-outside{suffix[m]}"]
              for m in models}
    for model, ratio in ratios.items():
        print(f"{model}: inside-outside runs at {ratio:.2f} of MAP's speed")
    for model in ("siblings", "grandparents"):
        slower = {task: best[f"{model} {task}"] / best[f"first-order {task}"]
                  for task in ("MAP", "inside-outside")}
        print(f"{model}: MAP takes {slower['MAP']:.1f}x, inside-outside "
              f"{slower['inside-outside']:.1f}x the first order's time; the non-projective "
              f"approximation (MAP, then the hill climb) "
              f"{best[f'{model} approximate'] / best[f'{model} MAP']:.1f}x its MAP's")
    append_result(args.results, {
        "bench": "inference", "n": args.n, "date": datetime.date.today().isoformat(),
        "machine": machine(), "ms": {k: round(1000 * v, 4) for k, v in best.items()},
        "inside_outside_speed_over_map": {k: round(v, 3) for k, v in ratios.items()}})


def done(results):
    if not Path(results).exists():
        return set()
    rows = [json.loads(line) for line in open(results)]
    return {(r["family"], r["treebank"], r["seed"], r["variant"], r["epochs"])
            for r in rows if r.get("bench") == "accuracy"}


def configuration(family, treebank, seed, variant, epochs, workdir):
    train, dev, test = files(treebank)
    stem = Path(workdir) / f"{family}-{treebank}-{variant}-seed{seed}"
    model = stem.with_suffix(".npz")
    extra = ["--epochs", str(epochs)] if epochs else []
    trained = run([*COMMAND, "train", "--model-type", family, "--components", "parser",
                   "--train", train, "--dev", dev, "--model", model, "--seed", str(seed),
                   "--quiet", "--force", *VARIANTS[family][variant], *extra])
    parsed = stem.with_suffix(".test.conllu")
    run([*COMMAND, "parse", "--model", model, test, "-o", parsed])
    scores = official(test, parsed)
    speed = json.loads(run([sys.executable, __file__, "speed", model, test]).out)
    return {"bench": "accuracy", "family": family, "treebank": treebank, "seed": seed,
            "variant": variant, "epochs": epochs, "options": VARIANTS[family][variant],
            "date": datetime.date.today().isoformat(), "machine": machine(),
            "train_cpu_s": round(trained.cpu, 1), "train_wall_s": round(trained.wall, 1),
            "parse_sentences_per_cpu_s": speed["sentences_per_cpu_s"],
            "test_UAS": round(scores["UAS"], 2), "test_LAS": round(scores["LAS"], 2),
            "parsed": str(parsed)}


def warm_up(family, variants, workdir):
    """Train and parse 30 sentences once with each variant, so that no measurement includes
    compiling the kernels (numba caches them on disk after the first run)."""
    train = files(TREEBANKS[0])[0]
    tiny = Path(workdir) / "tiny.conllu"
    tiny.write_text("".join(s.to_text() for s in read_conllu(train)[:30]))
    for variant in variants:
        model = Path(workdir) / "tiny.npz"
        run([*COMMAND, "train", "--model-type", family, "--components", "parser", "--train",
             tiny, "--dev", tiny, "--model", model, "--epochs", "1", "--quiet", "--force",
             *VARIANTS[family][variant]])
        run([*COMMAND, "parse", "--model", model, tiny, "-o", Path(workdir) / "tiny.out"])


def speed(args):
    """One JSON line: the parse speed of a model on a treebank, in sentences per CPU second
    of this process (one thread), after parsing 50 sentences once (loading and compiling
    excluded)."""
    from arborparse import load

    nlp = load(args.model)
    sentences = read_conllu(args.treebank)
    list(nlp.iter_parse(sentences[:50]))
    start = time.process_time()
    for _ in nlp.iter_parse(sentences):
        pass
    seconds = time.process_time() - start
    print(json.dumps({"sentences": len(sentences), "cpu_s": round(seconds, 3),
                      "sentences_per_cpu_s": round(len(sentences) / seconds, 1)}))


def accuracy(args):
    variants = args.variants or DEFAULT_VARIANTS[args.family]
    Path(args.workdir).mkdir(parents=True, exist_ok=True)
    warm_up(args.family, variants, args.workdir)
    finished = done(args.results)
    for seed in args.seeds:
        for treebank in args.treebanks:
            for variant in variants:
                if (args.family, treebank, seed, variant, args.epochs) in finished:
                    continue
                append_result(args.results, configuration(args.family, treebank, seed,
                                                          variant, args.epochs, args.workdir))


def significance(treebank, a, b, metric):
    test = files(treebank)[2]
    out = run([*COMMAND, "compare", test, a, b, "--metric", metric, "--json"]).out
    result = json.loads(out)
    return result["sign_test_p"], result["permutation_p"]


def table(args):
    rows = [json.loads(line) for line in open(args.results)]
    rows = [r for r in rows if r.get("bench") == "accuracy"]
    for family in sorted({r["family"] for r in rows}):
        base, *others = DEFAULT_VARIANTS[family] + [
            v for v in VARIANTS[family] if v not in DEFAULT_VARIANTS[family]]
        metric = "UAS" if family == "linear" else "LAS"
        tags = "gold tags" if family == "linear" else "tags predicted by the model"
        print(f"\n{family} ({metric} compared; test, {tags}, CoNLL 2018 script; mean over "
              "seeds)")
        for other in others:
            gains = []
            for treebank in TREEBANKS:
                mine = {v: [r for r in rows if r["family"] == family
                            and r["treebank"] == treebank and r["variant"] == v]
                        for v in (base, other)}
                if not mine[base] or not mine[other]:
                    continue
                mean = {v: {m: statistics.mean(r[f"test_{m}"] for r in mine[v])
                            for m in ("UAS", "LAS")} for v in mine}
                cpu = {v: statistics.mean(r["train_cpu_s"] for r in mine[v]) for v in mine}
                speed = {v: statistics.mean(r["parse_sentences_per_cpu_s"] for r in mine[v])
                         for v in mine}
                gain = mean[other][metric] - mean[base][metric]
                gains.append(gain)
                sign_p, perm_p = significance(treebank, mine[other][0]["parsed"],
                                              mine[base][0]["parsed"], metric)
                print(f"{treebank:18s} seeds {len(mine[base])}/{len(mine[other])}  "
                      f"{base} {mean[base]['UAS']:.2f}/{mean[base]['LAS']:.2f}  "
                      f"{other} {mean[other]['UAS']:.2f}/{mean[other]['LAS']:.2f}  "
                      f"gain {gain:+.2f} (sign p {sign_p:.3g}, permutation p {perm_p:.3g})  "
                      f"train CPU {cpu[base]:.0f}s -> {cpu[other]:.0f}s "
                      f"({cpu[other] / cpu[base]:.2f}x)  parse {speed[base]:.0f} -> "
                      f"{speed[other]:.0f} sentences/s")
            if gains:
                print(f"{other} - {base}: mean gain {statistics.mean(gains):+.2f} {metric} "
                      f"over {len(gains)} treebanks")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("inference")
    p.add_argument("--n", type=int, default=40)
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--batch", type=int, default=32, help="sentences of the torch back end")
    p.add_argument("--results", default=str(RESULTS))
    p = sub.add_parser("accuracy")
    p.add_argument("--family", choices=sorted(VARIANTS), required=True)
    p.add_argument("--treebanks", nargs="+", default=TREEBANKS)
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--epochs", type=int, default=None)
    p.add_argument("--variants", nargs="+", default=None)
    p.add_argument("--workdir", default=str(ROOT / "bench" / "runs" / "second_order"))
    p.add_argument("--results", default=str(RESULTS))
    p = sub.add_parser("speed")
    p.add_argument("model")
    p.add_argument("treebank")
    p = sub.add_parser("table")
    p.add_argument("--results", default=str(RESULTS))
    args = ap.parse_args()
    {"inference": inference, "accuracy": accuracy, "speed": speed,
     "table": table}[args.command](args)


if __name__ == "__main__":
    main()
