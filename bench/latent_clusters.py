"""Smith & Smith (2007) Table 2: conditional training with hidden arc clusters.

    python bench/latent_clusters.py run --treebank UD_Gothic-PROIEL -C 1 [--clusters 1 2 16 32]
                                        [--epochs 10] [--hash-bits 25] [--jobs 2]
                                        [--workdir DIR] [--results FILE]
    python bench/latent_clusters.py run ... --squeeze    # the "squeeze" experiment
    python bench/latent_clusters.py features --treebank UD_Gothic-PROIEL
    python bench/latent_clusters.py table [--results FILE]

Non-projective training and decoding, as in the paper. One cluster is the plain
log-linear model (`--trainer loglinear-sgd`), more are `--trainer latent --clusters K`
(seeded noise at the start, the epoch with the best dev LAS kept); every model is parsed
with map, mbr and max-z (the same as map without clusters). C is given per treebank:
the value chosen on dev for the plain model (bench/marginal_training.py). All models of
a run share --hash-bits, so that more clusters do not mean fewer collisions. The peak
memory of training is recorded. One JSON line per model is appended to --results.
With --squeeze every model (one cluster too) drops the arc templates pairing both words
and the POS four-grams (§5.2); `features` counts the distinct arc features of the gold
training trees with and without them.
"""

import argparse
import datetime
import json
from functools import partial
from pathlib import Path

from common import COMMAND, ROOT, best_epoch, files, machine, parse_and_score, record, run, warm_up

DECODES = ["map", "mbr", "max-z"]


def configuration(treebank, clusters, C, epochs, hash_bits, squeeze, workdir):
    train, dev, _ = files(treebank)
    name = f"{treebank}-K{clusters}-C{C:g}-b{hash_bits}{'-squeeze' if squeeze else ''}"
    model = workdir / f"{name}.npz"
    trainer = ["loglinear-sgd"] if clusters == 1 and not squeeze else \
        ["latent", "--clusters", str(clusters)] + (["--squeeze"] if squeeze else [])
    trained = run([*COMMAND, "train", "--train", train, "--dev", dev, "--model", model,
                   "--trainer", *trainer, "-C", str(C), "--epochs", str(epochs),
                   "--hash-bits", str(hash_bits)])
    decodes = DECODES[:2] if clusters == 1 else DECODES
    scores = parse_and_score(model, treebank, [(d, "mst") for d in decodes], workdir / name)
    return {
        "treebank": treebank, "clusters": clusters, "C": C, "epochs": epochs,
        "hash_bits": hash_bits, "squeeze": squeeze,
        "best_epoch": best_epoch(trained.err),
        "train_seconds": trained.wall, "train_cpu_seconds": trained.cpu,
        "train_max_rss_mb": trained.max_rss_mb, "scores": scores,
        "date": str(datetime.date.today()), "machine": machine(),
    }


def table(rows):
    print("| treebank | clusters | decoding | dev UAS | test UAS | test LAS | best epoch | "
          "train CPU s | peak MB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        for decode in DECODES:
            key = f"{decode}-mst"
            if f"{key}-test" not in r["scores"]:
                continue
            label = "map = max-z" if r["clusters"] == 1 and decode == "map" else decode
            clusters = "none" if r["clusters"] == 1 else str(r["clusters"])
            if r.get("squeeze"):
                clusters += ", squeezed"
            print(f"| {r['treebank'].removeprefix('UD_')} | {clusters} | {label} | "
                  f"{r['scores'][f'{key}-dev']['UAS']:.2f} | "
                  f"{r['scores'][f'{key}-test']['UAS']:.2f} | "
                  f"{r['scores'][f'{key}-test']['LAS']:.2f} | {r['best_epoch']} | "
                  f"{r['train_cpu_seconds']:.0f} | {r['train_max_rss_mb']:.0f} |")


def feature_counts(treebank):
    from arborparse.io import read_conllu
    from arborparse.linear.model import Encoded, gold_feature_keys

    train = read_conllu(files(treebank)[0])
    encoded = [Encoded.of(s) for s in train]
    heads = [s.heads for s in train]
    full, squeezed = (len(gold_feature_keys(encoded, heads, squeeze)[0]) for squeeze in
                      (False, True))
    print(f"{treebank}: {full} distinct arc features on the gold training trees, "
          f"{squeezed} squeezed: {full / squeezed:.1f}x fewer")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["run", "features", "table"])
    parser.add_argument("--treebank")
    parser.add_argument("-C", type=float)
    parser.add_argument("--clusters", nargs="+", type=int, default=[1, 2, 16, 32])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--hash-bits", type=int, default=25)
    parser.add_argument("--squeeze", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--workdir", default=str(ROOT / "bench" / "runs"))
    parser.add_argument("--results", default=str(ROOT / "bench" / "latent_clusters.jsonl"))
    args = parser.parse_args()
    if args.command == "table":
        table([json.loads(line) for line in open(args.results)])
        return
    if args.command == "features":
        feature_counts(args.treebank or "UD_Gothic-PROIEL")
        return
    if args.treebank is None or args.C is None:
        parser.error("run needs --treebank and -C")
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    warm_up(["loglinear-sgd", "latent"], ["mst"], workdir)
    record([partial(configuration, args.treebank, k, args.C, args.epochs, args.hash_bits,
                    args.squeeze, workdir) for k in args.clusters], args.jobs, args.results)


if __name__ == "__main__":
    main()
