"""The ISBN parser on the UD treebanks: accuracy (with the TF / LF / TF-NA ablations, and TF
under the mean-field approximation: MF) and parsing speed against the beam width.

    python bench/isbn.py run --treebank UD_Gothic-PROIEL [--variants tf lf tf-na mf]
                             [--epochs 20] [--components parser] [--workdir DIR]
                             [--results FILE]
    python bench/isbn.py beam --treebank UD_English-EWT --model M.npz
                              [--beams 1 2 5 10 20] [--branching 5] [--plot FILE.png]
    python bench/isbn.py roots --treebank UD_Gothic-PROIEL --model M.npz
    python bench/isbn.py approx --treebank UD_Gothic-PROIEL [--sentences 640]
    python bench/isbn.py table [--results FILE]

`run` trains each variant with `arborparse train --model-type isbn` (dev LAS selects the
epoch), parses the test set with the model's beam and records UAS, LAS, F1 by arc length,
the kept epoch's dev UAS and LAS and the training time per epoch. `beam` parses the dev
set at each beam width (one thread) and prints tokens/second and LAS, and plots them. `roots` scores the dev set parsed with
single-rooted output and with IDP's rule (headless words become roots). `approx` times one
training step (likelihood and gradient) per minibatch of the first training sentences under
the feed-forward and the mean-field approximation (one thread, same batches, FF = 1).
`table` prints the results file.
"""

import argparse
import datetime
import json
import re
import time
from functools import partial
from pathlib import Path

from arborparse.pipeline import info
from common import COMMAND, ROOT, best_epoch, files, machine, record, run

VARIANTS = {"tf": [], "lf": ["--features", "local"], "tf-na": ["--no-latent-links"],
            "mf": ["--approximation", "mf"]}


def train_and_test(treebank, variant, epochs, workdir, components):
    train, dev, test = files(treebank)
    model = workdir / f"isbn-{treebank}-{variant}.npz"
    parsed = workdir / f"isbn-{treebank}-{variant}.test.conllu"
    trained = run([*COMMAND, "train", "--model-type", "isbn", "--train", train, "--dev", dev,
                   "--model", model, "--epochs", str(epochs), *VARIANTS[variant],
                   *(["--components", components] if components else [])])
    seconds = [float(s) for s in re.findall(r"^epoch \d+/\d+\s+([\d.]+)s", trained.err, re.M)]
    parsing = run([*COMMAND, "parse", "--model", model, test, "-o", parsed])
    scores = json.loads(run([*COMMAND, "evaluate", test, parsed, "--json"]).out)
    kept = info(model)["scores"]  # the kept epoch's dev scores
    return {
        "treebank": treebank, "variant": variant, "epochs": epochs,
        "components": components or "default",
        "best_epoch": best_epoch(trained.err),
        "epoch_train_seconds": seconds, "train_seconds": trained.wall,
        "train_max_rss_mb": trained.max_rss_mb, "parse_seconds": parsing.wall,
        "dev_UAS": kept["UAS"], "dev_LAS": kept["LAS"], "test_words": scores["words"],
        **{k: scores[k] for k in ("UAS", "LAS", "UAS_nopunct", "LAS_nopunct")},
        "f1_by_length": {k: v["f1"] for k, v in scores["by_length"].items()},
        "date": str(datetime.date.today()), "machine": machine(),
    }


def beam_speed(treebank, model_path, beams, branching, plot):
    import torch

    from arborparse.eval import evaluate
    from arborparse.io import read_conllu
    from arborparse.isbn.parser import ISBNParser

    torch.set_num_threads(1)
    dev = read_conllu(files(treebank)[1])
    parser = ISBNParser.load(model_path)
    words = sum(len(s) for s in dev)
    rows = []
    print(f"# bench/isbn.py beam {treebank} {model_path} | {datetime.date.today()} | "
          f"{machine()}\n")
    print("| beam | labels per arc | tokens/s | dev UAS | dev LAS |")
    print("|---|---|---|---|---|")
    for beam in beams:
        start = time.perf_counter()
        parsed = parser.parse(dev, beam=beam, branching=branching)
        speed = words / (time.perf_counter() - start)
        scores = evaluate(dev, parsed)
        rows.append((beam, speed, scores["LAS"]))
        print(f"| {beam} | {branching} | {speed:.0f} | {scores['UAS']:.2f} | "
              f"{scores['LAS']:.2f} |", flush=True)
    if plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 3.5))
        ax.plot([r[1] for r in rows], [r[2] for r in rows], "o-")
        for beam, speed, las in rows:
            ax.annotate(str(beam), (speed, las), textcoords="offset points", xytext=(4, 4))
        ax.set_xscale("log")
        ax.set_xlabel("tokens per second (1 thread)")
        ax.set_ylabel("dev LAS")
        ax.set_title(f"ISBN beam width, {treebank.removeprefix('UD_')} dev")
        fig.tight_layout()
        fig.savefig(plot, dpi=120)


def roots(treebank, model_path):
    from arborparse.eval import evaluate
    from arborparse.io import read_conllu
    from arborparse.isbn.parser import ISBNParser

    dev = read_conllu(files(treebank)[1])
    parser = ISBNParser.load(model_path)
    print(f"# bench/isbn.py roots {treebank} {model_path} | {datetime.date.today()}\n")
    print("| output | dev UAS | dev LAS | F1 root | sentences with several roots |")
    print("|---|---|---|---|---|")
    for single_root in (True, False):
        parser.single_root = single_root
        parsed = parser.parse(dev)
        scores = evaluate(dev, parsed)
        several = sum(int((s.heads == 0).sum()) > 1 for s in parsed)
        print(f"| {'single root' if single_root else 'headless words as roots'} | "
              f"{scores['UAS']:.2f} | {scores['LAS']:.2f} | "
              f"{scores['by_length']['root']['f1']:.1f} | {several} |", flush=True)


def approximations(treebank, sentences):
    import torch

    from arborparse.io import read_conllu
    from arborparse.isbn.history import FEATURE_SETS, Derivation, Inputs, Tokens, decisions_of
    from arborparse.isbn.network import Network
    from arborparse.isbn.train import ISBNTrainer
    from arborparse.isbn.vocab import Vocabulary
    from arborparse.transforms import lift

    torch.set_num_threads(1)
    train = [lift(s, "head") for s in read_conllu(files(treebank)[0])[:sentences]]
    vocab = Vocabulary.build(train)
    inputs = Inputs(vocab, FEATURE_SETS["tuned"])
    derivations = [Derivation.of(Tokens.of(s, vocab), inputs, decisions_of(s, vocab))
                   for s in train]
    batches = ISBNTrainer()._batches(derivations)
    print(f"# bench/isbn.py approx {treebank}, first {len(train)} training sentences | "
          f"{datetime.date.today()} | {machine()}\n")
    print("| approximation | ms per sentence (likelihood + gradient) | ratio |")
    print("|---|---|---|")
    reference = None
    for approximation in ("ff", "mf"):
        net = Network(vocab, inputs, approximation=approximation)
        start = time.perf_counter()
        for batch in batches:
            net.zero_grad()
            net.log_likelihood(batch).backward()
        ms = (time.perf_counter() - start) / len(train) * 1000
        reference = reference or ms
        print(f"| {approximation.upper()} | {ms:.1f} | {ms / reference:.1f} |", flush=True)


def table(rows):
    print("| treebank | variant | UAS | LAS | LAS no punct | F1 root | 1 | 2 | 3-6 | >6 | "
          "best epoch | s/epoch |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        f1 = r["f1_by_length"]
        per_epoch = sum(r["epoch_train_seconds"]) / max(len(r["epoch_train_seconds"]), 1)
        print(f"| {r['treebank'].removeprefix('UD_')} | {r['variant'].upper()} | "
              f"{r['UAS']:.2f} | {r['LAS']:.2f} | {r['LAS_nopunct']:.2f} | "
              + " | ".join(f"{f1[k]:.1f}" for k in ("root", "1", "2", "3-6", ">6"))
              + f" | {r['best_epoch']} | {per_epoch:.0f} |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["run", "beam", "roots", "approx", "table"])
    parser.add_argument("--treebank", default="UD_Gothic-PROIEL")
    parser.add_argument("--variants", nargs="+", default=["tf"], choices=list(VARIANTS))
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--components", help="what to train (default: train's default)")
    parser.add_argument("--model")
    parser.add_argument("--beams", nargs="+", type=int, default=[1, 2, 5, 10, 20])
    parser.add_argument("--branching", type=int, default=5)
    parser.add_argument("--plot")
    parser.add_argument("--sentences", type=int, default=640)
    parser.add_argument("--workdir", default=str(ROOT / "bench" / "runs"))
    parser.add_argument("--results", default=str(ROOT / "bench" / "isbn.jsonl"))
    args = parser.parse_args()
    if args.command == "table":
        table([json.loads(line) for line in open(args.results)])
    elif args.command == "approx":
        approximations(args.treebank, args.sentences)
    elif args.command in ("beam", "roots"):
        if not args.model:
            parser.error(f"{args.command} needs --model")
        if args.command == "roots":
            roots(args.treebank, args.model)
        else:
            beam_speed(args.treebank, args.model, args.beams, args.branching, args.plot)
    else:
        workdir = Path(args.workdir)
        workdir.mkdir(parents=True, exist_ok=True)
        record([partial(train_and_test, args.treebank, variant, args.epochs, workdir,
                        args.components)
                for variant in args.variants], 1, args.results)


if __name__ == "__main__":
    main()
