"""The neural family on a treebank: training on this machine's CPU, then the test set parsed
from its words alone (the model predicts UPOS, XPOS, FEATS, lemmas and the tree), scored
with the CoNLL 2018 measures on gold tokenization.

    python bench/neural.py UD_Gothic-PROIEL [--objective crf] [--epochs 40] [--threads 1]
                           [--option hidden=400 ...] [--minutes M] [--raw-text]
                           [--results bench/neural.jsonl]

Trains `arborparse train --model-type neural --components parser` (dev for early stopping
and the epoch kept) with `--threads` threads, records each epoch's dev scores and the time
since the start (dev parsing included), the peak memory of training and the longest
training sentence; parses test with one thread (`arborparse parse`, model load and Python's
start included). The model is kept in bench/runs/. Appends one JSON line to --results.
`--option NAME=VALUE` passes `--NAME VALUE` to the training (e.g. `hidden=400`, `layers=3`);
`--minutes M` stops the training (SIGTERM) after M minutes (it keeps its best epoch). Where
PyTorch sees a GPU, training runs on it (parsing stays on the CPU), and the record names it.
With `--raw-text`, the test set is also parsed from its text (rebuilt from its tokens and
``SpaceAfter=No``, as in `bench/raw_text.py`) by the neural pipeline: a tokenizer trained on
the same files (`arborparse train --components tokenizer`) in front of this parser, the
pipeline `arborparse train --model-type neural` writes with its default components (kept in
bench/runs/ as NAME.text.npz), scored by `arborparse evaluate` (the CoNLL 2018 measures).
"""

import argparse
import datetime
import json
import re
import tempfile
from pathlib import Path

from common import COMMAND, ROOT, append_result, files, machine, run

from arborparse.io import read_conllu, write_conllu
from arborparse.io.conllu import FEATS, LEMMA, UPOS, XPOS

MEASURES = ("UPOS", "XPOS", "UFeats", "AllTags", "Lemmas", "UAS", "LAS", "CLAS", "MLAS",
            "BLEX")
EPOCH = re.compile(r"epoch (\d+)/\d+ .*\[([\d.]+) min\]  dev (.*?)(?:  \(best\))?$")


def history(log: str) -> list[dict]:
    out = []
    for line in log.splitlines():
        match = EPOCH.search(line)
        if match:
            scores = dict(zip(*[iter(match.group(3).split())] * 2))
            out.append({"epoch": int(match.group(1)), "minutes": float(match.group(2)),
                        **{k: float(v) for k, v in scores.items()}})
    return out


def gpu() -> str | None:
    """The GPU PyTorch trains on, or None."""
    import torch

    return torch.cuda.get_device_name() if torch.cuda.is_available() else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("treebank")
    ap.add_argument("--objective", default="crf")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                    help="a training option, e.g. hidden=400")
    ap.add_argument("--minutes", type=float, help="stop the training after this long")
    ap.add_argument("--raw-text", action="store_true",
                    help="also parse the test text with a tokenizer in front")
    ap.add_argument("--results", default=str(ROOT / "bench" / "neural.jsonl"))
    args = ap.parse_args()
    train, dev, test = files(args.treebank)
    gold = read_conllu(test)
    if any("=" not in o for o in args.option):
        ap.error("--option takes NAME=VALUE")
    options = dict(o.split("=", 1) for o in args.option)
    tag = re.sub(r"[^\w.-]", "_", "".join(f"-{k}{v}" for k, v in options.items()))
    runs, name = ROOT / "bench" / "runs", f"neural-{args.objective}{tag}-{args.treebank}"
    kept = runs / f"{name}.npz"  # not with_suffix: a value may hold a dot
    runs.mkdir(parents=True, exist_ok=True)
    kept.unlink(missing_ok=True)  # a training stopped before its first epoch keeps none
    out = {"treebank": args.treebank, "system": f"arborparse neural ({args.objective})",
           "epochs": args.epochs, "threads": args.threads, "options": options,
           "minutes": args.minutes, "gpu": gpu()}
    trained = run([*COMMAND, "train", "--model-type", "neural", "--components", "parser",
                   "--objective", args.objective, "--epochs", args.epochs, "--threads",
                   args.threads, "--train", train, "--dev", dev, "--model", kept, "--force",
                   *(a for k, v in options.items() for a in (f"--{k.replace('_', '-')}", v))],
                  threads=args.threads,
                  stop_after=None if args.minutes is None else args.minutes * 60)
    out.update(train_wall_seconds=trained.wall, train_cpu_seconds=trained.cpu,
               stopped=trained.stopped,
               train_peak_rss_mb=trained.max_rss_mb,
               longest_training_sentence=max(map(len, read_conllu(train))),
               history=history(trained.err))
    with tempfile.TemporaryDirectory() as tmp:
        words_only = Path(tmp) / "words.conllu"
        write_conllu([s.with_columns({c: ["_"] * len(s) for c in (LEMMA, UPOS, XPOS, FEATS)})
                      for s in gold], words_only)
        parsed = run([*COMMAND, "parse", "--model", kept, words_only, "-o",
                      Path(tmp) / "parsed.conllu"])
        out.update(parse_wall_seconds=parsed.wall, parse_cpu_seconds=parsed.cpu,
                   test_sentences=len(gold), parse_peak_rss_mb=parsed.max_rss_mb)
        result = json.loads(run([*COMMAND, "evaluate", test, Path(tmp) / "parsed.conllu",
                                 "--json"]).out)
        out["test"] = {k: result[k] for k in MEASURES}
        # kept for `arborparse compare` between objectives
        (runs / f"{name}.test.conllu").write_text((Path(tmp) / "parsed.conllu").read_text())
        if args.raw_text:
            out["raw_text"] = raw_text(train, dev, test, kept, runs / f"{name}.text.npz",
                                       Path(tmp))
    out.update(date=str(datetime.date.today()), machine=machine())
    append_result(args.results, out)


def raw_text(train, dev, test, parser: Path, pipeline: Path, tmp: Path) -> dict:
    """The test text parsed by a tokenizer trained here in front of `parser` (saved as
    `pipeline`): the CoNLL 2018 scores, with the tokenizer's training and the parse's CPU
    seconds."""
    import arborparse
    from arborparse.pipeline import Pipeline
    from arborparse.text.tokenizer import paragraphs

    text = tmp / "test.txt"
    text.write_text("\n\n".join(p for p, _ in paragraphs(read_conllu(test))) + "\n",
                    encoding="utf-8")
    trained = run([*COMMAND, "train", "--components", "tokenizer", "--train", train, "--dev",
                   dev, "--model", tmp / "tokenizer.npz", "--quiet"])
    Pipeline(parser=arborparse.load(parser).parser,
             tokenizer=arborparse.load(tmp / "tokenizer.npz").tokenizer).save(pipeline,
                                                                              force=True)
    parsed = run([*COMMAND, "parse", "--model", pipeline, "--input-format", "text", text,
                  "-o", tmp / "text.conllu"])
    result = json.loads(run([*COMMAND, "evaluate", test, tmp / "text.conllu", "--json"]).out)
    return {"tokenizer_train_cpu_seconds": trained.cpu, "parse_cpu_seconds": parsed.cpu,
            **{k: result[k]["f1"] if isinstance(result[k], dict) else result[k]
               for k in ("Tokens", "Sentences", "Words", *MEASURES)}}


if __name__ == "__main__":
    main()
