"""How EG max-margin training converges: per pass, the dual objective, the primal objective,
the duality gap and the dev scores.

    python bench/eg_convergence.py [--treebank UD_Gothic-PROIEL] [-C 0.003] [--passes 20]
                                   [--learning-rate ETA] [--decoder mst]
"""

import argparse
import datetime
import os
import sys

for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(name, "1")

from common import UD, machine  # noqa: E402

from arborparse.io import read_conllu  # noqa: E402
from arborparse.linear.eg import EGTrainer  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--treebank", default="UD_Gothic-PROIEL")
    parser.add_argument("-C", type=float, default=0.003)
    parser.add_argument("--passes", type=int, default=20)
    parser.add_argument("--learning-rate", type=float)
    parser.add_argument("--decoder", default="mst")
    args = parser.parse_args()
    folder = UD / args.treebank
    train = read_conllu(next(folder.glob("*-ud-train.conllu")))
    dev = read_conllu(next(folder.glob("*-ud-dev.conllu")))
    print(f"# {' '.join(sys.argv)} | {datetime.date.today()} | {machine()}\n")
    fitted = EGTrainer(args.C, args.passes, decoder=args.decoder, progress=False, primal=True,
                       learning_rate=args.learning_rate).fit(train, dev)
    print("| pass | η | dual | primal | gap | gap / primal | dev UAS | dev LAS |")
    print("|---|---|---|---|---|---|---|---|")
    for h in fitted.history_:
        print(f"| {h['epoch']} | {h['learning_rate']:.3g} | {h['dual_objective']:.2f} | "
              f"{h['primal_objective']:.2f} | {h['duality_gap']:.2f} | "
              f"{h['duality_gap'] / h['primal_objective']:.3f} | {h['UAS']:.2f} | "
              f"{h['LAS']:.2f} |")


if __name__ == "__main__":
    main()
