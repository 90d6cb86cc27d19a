"""Training speed of every trainer on one treebank (default EWT-train), the perceptron the
reference, all in the same run:

    python bench/training_speed.py [--treebank UD_English-EWT] [--sentences N]

One pass over the training sentences each (the trainer's own per-pass clock: feature
encoding, the initial EG weights and dev evaluation are not included; the L-BFGS row is
one full gradient, which is what one of its iterations costs), non-projective training,
one thread. Also prints the memory the EG dual parameters θ hold on this treebank.
"""

import argparse
import datetime
import os
import sys
import time

for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(name, "1")

from common import UD, machine  # noqa: E402

from arborparse.io import read_conllu  # noqa: E402
from arborparse.linear.online import OnlineTrainer  # noqa: E402
from arborparse.linear.eg import EGTrainer  # noqa: E402
from arborparse.linear.loglinear import LogLinearTrainer  # noqa: E402
from arborparse.linear.model import LinearModel  # noqa: E402

TRAINERS = {
    "perceptron": lambda: OnlineTrainer("perceptron", 1, progress=False),
    "mira": lambda: OnlineTrainer("mira", 1, progress=False),
    "mira-kbest (k=5)": lambda: OnlineTrainer("mira-kbest", 1, progress=False),
    "mira-factored": lambda: OnlineTrainer("mira-factored", 1, progress=False),
    "loglinear-sgd": lambda: LogLinearTrainer("sgd", epochs=1, progress=False),
    "eg": lambda: EGTrainer(C=0.003, epochs=1, progress=False),
    "latent, 2 clusters": lambda: LogLinearTrainer("sgd", epochs=1, progress=False,
                                                   clusters=2, init_noise=0.01),
    "latent, 16 clusters": lambda: LogLinearTrainer("sgd", epochs=1, progress=False,
                                                    clusters=16, init_noise=0.01),
}


def lbfgs_pass(train):
    """Seconds of one full objective and gradient of the batch log-linear trainer."""
    trainer = LogLinearTrainer("lbfgs", progress=False)
    labels, data = trainer._data(train)
    model = LinearModel.hashing(trainer.hash_bits, labels)
    start = time.perf_counter()
    trainer.objective(model, data, model.weights)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--treebank", default="UD_English-EWT")
    parser.add_argument("--sentences", type=int, help="only the first N training sentences")
    args = parser.parse_args()
    train = read_conllu(next((UD / args.treebank).glob("*-ud-train.conllu")))[:args.sentences]
    print(f"# {' '.join(sys.argv)} | {datetime.date.today()} | {machine()}")
    print(f"{args.treebank}: {len(train)} training sentences, one pass each\n")
    warm = train[:20]
    for make in TRAINERS.values():  # compile every kernel before timing
        make().fit(warm)
    lbfgs_pass(warm)
    seconds = {}
    for name, make in TRAINERS.items():
        fitted = make().fit(train)
        seconds[name] = fitted.history_[0]["seconds"]
        if name == "eg":
            dual_mb = fitted.dual_bytes_ / 2**20
    seconds["loglinear (L-BFGS), one gradient"] = lbfgs_pass(train)
    print("| trainer | seconds per pass | sentences/s | speed vs perceptron |")
    print("|---|---|---|---|")
    for name, s in seconds.items():
        print(f"| {name} | {s:.1f} | {len(train) / s:.0f} | "
              f"{seconds['perceptron'] / s:.2f} |")
    print(f"\nEG dual parameters θ (float32, one (n+1, n+1, L) array per sentence): "
          f"{dual_mb:.0f} MB")


if __name__ == "__main__":
    main()
