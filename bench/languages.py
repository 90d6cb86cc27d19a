"""Many languages from raw text: our default pipeline against UDPipe 1, each trained here on
the same files, scored with the official CoNLL 2018 script.

    python bench/languages.py run FOLDER [FOLDER ...] [--model-type linear|neural|ensemble]
                              [--train-options "--order 2"] [--systems arborparse udpipe]
                              [--workdir bench/runs/languages] [--results bench/languages.jsonl]
    python bench/languages.py table [--results bench/languages.jsonl]

FOLDER is any UD treebank folder (``*-ud-{train,dev,test}.conllu``), inside or outside
ARBORPARSE_UD. A folder without a train file (the copies this machine could fetch lack the
larger files) trains on its dev set instead: the first five sixths of its sentences train,
the last sixth picks the epoch; the row says ``"trained_on": "dev"``. Both systems get the
same two files, so the comparison stays fair and the figures stay below a full training's.

Ours: ``arborparse train --train T --dev D --model M [--model-type neural|ensemble]``, nothing else
(the defaults, the same for every language; `--train-options` adds options, named in the
row's system), then ``arborparse parse --input-format text``
on the test set's text (rebuilt from its tokens and ``SpaceAfter=No``, paragraphs separated
by blank lines). UDPipe 1: ``ufal.udpipe`` trained with its default options (tokenizer,
MorphoDiTa tagger and lemmatizer, Parsito parser), the same text through its tokenizer,
tagger and parser. CPU seconds of training and parsing (one thread). Appends one JSON line
per treebank and system; a (treebank, system) already in --results is skipped, so a run
resumes.

`table` prints, per treebank, the ten CoNLL 2018 F1 scores of each system and ours minus
UDPipe's LAS.
"""

import argparse
import datetime
import json
import re
import shlex
import sys
import time
from pathlib import Path

from common import (COMMAND, ROOT, append_result, machine, official, run, split_files,
                    train_dev)

from arborparse.io import read_conllu
from arborparse.text.tokenizer import paragraphs

REPORTED = ("Tokens", "Words", "Sentences", "UPOS", "UFeats", "Lemmas", "UAS", "LAS", "MLAS",
            "BLEX")
RESULTS = ROOT / "bench" / "languages.jsonl"


def training_files(folder: Path, workdir: Path) -> tuple[Path, Path, Path, str]:
    """(train, dev, test, trained_on) of a treebank folder; without a train file, the dev
    set's first 5/6 and last 1/6 written to `workdir`."""
    found = split_files(folder)
    if "dev" not in found or "test" not in found:
        raise SystemExit(f"{folder}: needs *-ud-dev.conllu and *-ud-test.conllu")
    if "train" in found:
        return found["train"], found["dev"], found["test"], "train"
    train, dev, _ = train_dev(folder)
    stem = found["dev"].name.replace("-ud-dev.conllu", "")
    parts = []
    for name, part in (("train", train), ("dev", dev)):
        path = workdir / f"{stem}-ud-{name}.conllu"
        path.write_text("".join(s.to_text() for s in part), encoding="utf-8")
        parts.append(path)
    print(f"{folder.name}: no train file; training on dev's first {len(train)} sentences, "
          f"tuning on its last {len(dev)}", file=sys.stderr)
    return parts[0], parts[1], found["test"], "dev"


def ours(train, dev, text: Path, out: Path, workdir: Path, name: str, options: list[str]
         ) -> dict:
    model = workdir / f"{slug(name)}.npz"
    trained = run([*COMMAND, "train", "--train", train, "--dev", dev, "--model", model,
                   "--quiet", "--force", *options])
    parsed = run([*COMMAND, "parse", "--model", model, "--input-format", "text", text, "-o",
                  out, "--force"])
    return {"train_cpu_s": round(trained.cpu, 1), "parse_cpu_s": round(parsed.cpu, 2)}


def udpipe(train, dev, text: Path, out: Path, workdir: Path, name: str, options: list[str]
           ) -> dict:
    from udpipe_reference import load
    from ufal.udpipe import Model, Pipeline, ProcessingError, Trainer

    err = ProcessingError()
    start = time.process_time()
    trained = Trainer.train("morphodita_parsito", load(train), load(dev), "", "", "", err)
    if err.occurred():
        raise RuntimeError(err.message)
    train_cpu = time.process_time() - start
    path = workdir / "udpipe.udpipe"
    path.write_bytes(trained)
    start = time.process_time()
    model = Model.load(str(path))  # held in a variable: a Pipeline does not keep it alive
    result = Pipeline(model, "tokenize", Pipeline.DEFAULT, Pipeline.DEFAULT, "conllu").process(
        text.read_text(encoding="utf-8"), err)
    if err.occurred():
        raise RuntimeError(err.message)
    parse_cpu = time.process_time() - start
    out.write_text(result, encoding="utf-8")
    return {"train_cpu_s": round(train_cpu, 1), "parse_cpu_s": round(parse_cpu, 2)}


SYSTEMS = {"arborparse": ours, "udpipe": udpipe}


def name_of(system: str, model_type: str, extra: str) -> str:
    return "UDPipe 1" if system == "udpipe" else \
        " ".join(["arborparse", model_type, *shlex.split(extra)])


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")


def done(results: Path) -> set:
    if not results.exists():
        return set()
    return {(r["treebank"], r["system"]) for r in map(json.loads, results.open())}


def run_all(args):
    results = Path(args.results)
    for folder in args.folders:
        workdir = Path(args.workdir) / folder.name
        workdir.mkdir(parents=True, exist_ok=True)
        train, dev, test, trained_on = training_files(folder, workdir)
        text = workdir / "test.txt"
        text.write_text("\n\n".join(p for p, _ in paragraphs(read_conllu(test))) + "\n",
                        encoding="utf-8")
        for system in args.systems:
            name = name_of(system, args.model_type, args.train_options)
            if (folder.name, name) in done(results):
                continue
            out = workdir / f"{slug(name)}.conllu"
            options = ["--model-type", args.model_type, *shlex.split(args.train_options)]
            facts = SYSTEMS[system](train, dev, text, out, workdir, name, options)
            scores = official(test, out)
            append_result(results, {
                "treebank": folder.name, "system": name, "trained_on": trained_on,
                "train_sentences": len(read_conllu(train)), **facts,
                **{m: round(scores[m], 2) for m in REPORTED},
                "date": str(datetime.date.today()), "machine": machine()})


def table(args):
    rows = [json.loads(line) for line in open(args.results)]
    by_treebank = {}
    for row in rows:
        by_treebank.setdefault(row["treebank"], {})[row["system"]] = row
    print("| treebank | trained on | system | " + " | ".join(REPORTED)
          + " | ΔLAS | train CPU s |")
    print("|---" * (len(REPORTED) + 5) + "|")
    for treebank, systems in sorted(by_treebank.items()):
        reference = systems.get("UDPipe 1")
        for name, row in sorted(systems.items(), key=lambda kv: kv[0] == "UDPipe 1"):
            delta = ("" if reference is None or row is reference
                     else f"{row['LAS'] - reference['LAS']:+.2f}")
            print(f"| {treebank.removeprefix('UD_')} | {row['trained_on']} "
                  f"({row['train_sentences']}) | {name} | "
                  + " | ".join(f"{row[m]:.2f}" for m in REPORTED)
                  + f" | {delta} | {_number(row.get('train_cpu_s'))} |")
    gains = {}
    for systems in by_treebank.values():
        for name, row in systems.items():
            if name != "UDPipe 1" and "UDPipe 1" in systems:
                gains.setdefault(name, []).append(row["LAS"] - systems["UDPipe 1"]["LAS"])
    for name, found in sorted(gains.items()):
        print(f"\n{name} against UDPipe 1: LAS {sum(found) / len(found):+.2f} on average over "
              f"{len(found)} treebanks, {sum(g >= 3 for g in found)} of them +3 or more")


def _number(value) -> str:
    return "—" if value is None else f"{value:.0f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run")
    p.add_argument("folders", nargs="+", type=Path)
    p.add_argument("--model-type", choices=("linear", "neural", "ensemble"), default="linear")
    p.add_argument("--train-options", default="", help="more arborparse train options")
    p.add_argument("--systems", nargs="+", choices=sorted(SYSTEMS),
                   default=["arborparse", "udpipe"])
    p.add_argument("--workdir", default=str(ROOT / "bench" / "runs" / "languages"))
    p.add_argument("--results", default=str(RESULTS))
    p.set_defaults(fn=run_all)
    p = sub.add_parser("table")
    p.add_argument("--results", default=str(RESULTS))
    p.set_defaults(fn=table)
    args = ap.parse_args()
    args.fn(args)


if __name__ == "__main__":
    main()
