"""Raw text to sentences and tokens: our tokenizer against UDPipe 1's, trained on the same
files and scored with the official CoNLL 2018 script.

    python bench/tokenization.py FOLDER [FOLDER ...] [--train-split train|dev]
                                 [--results bench/tokenization.jsonl]

FOLDER is any UD treebank folder (``*-ud-{train,dev,test}.conllu``), inside or outside
ARBORPARSE_UD. The test set's text is rebuilt from its tokens and ``SpaceAfter=No``,
paragraphs separated by blank lines. Ours: `Tokenizer().fit(train, dev)` (the model
`arborparse train --components tokenizer` writes), with the choice it made between its
character and word-level sentence ends. UDPipe 1: its tokenizer trained with default options
(``ufal.udpipe``). ``--train-split dev`` trains both on the dev set (and tunes on it), for a
treebank whose train file is not at hand: the comparison stays fair, the figures are lower
than a full training's. Each output gets every word attached to the first (the script needs
a tree; only Tokens, Sentences and Words are read). Appends one JSON line per treebank.
"""

import argparse
import datetime
import tempfile
import time
from pathlib import Path

from common import ROOT, append_result, machine, official, split_files
from udpipe_reference import load
from ufal.udpipe import Model, Pipeline, ProcessingError, Trainer

from arborparse.io import read_conllu
from arborparse.text.tokenizer import Tokenizer, paragraphs

MEASURES = ("Tokens", "Sentences", "Words")


def dummy_trees(conllu: str) -> str:
    """Every word attached to the sentence's first word (to the root if first)."""
    out = []
    for line in conllu.splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            cols[6], cols[7] = ("0", "root") if cols[0] == "1" else ("1", "dep")
        out.append("\t".join(cols))
    return "\n".join(out) + "\n"


def ours(train, dev, text, out: Path) -> dict:
    start = time.process_time()
    tokenizer = Tokenizer(progress=False).fit(read_conllu(train), read_conllu(dev))
    trained = time.process_time() - start
    start = time.process_time()
    sentences = tokenizer.tokenize(text)
    tokenized = time.process_time() - start
    out.write_text(dummy_trees("".join(s.to_text() for s in sentences)), encoding="utf-8")
    return {"train_cpu_s": round(trained, 1), "tokenize_cpu_s": round(tokenized, 2),
            "sentence_ends_from": "words" if tokenizer.splitter else "characters",
            "dev_sentence_f1": {k: round(float(v), 2)
                                for k, v in tokenizer.sentence_f1_.items()}}


def udpipe(train, dev, text, out: Path) -> dict:
    err = ProcessingError()
    start = time.process_time()
    trained = Trainer.train("morphodita_parsito", load(train), load(dev), "", "none", "none",
                            err)
    if err.occurred():
        raise RuntimeError(err.message)
    train_cpu = time.process_time() - start
    with tempfile.NamedTemporaryFile(suffix=".udpipe") as model_file:
        model_file.write(trained)
        model_file.flush()
        model = Model.load(model_file.name)
        start = time.process_time()
        result = Pipeline(model, "tokenize", Pipeline.NONE, Pipeline.NONE, "conllu").process(
            text, err)
    if err.occurred():
        raise RuntimeError(err.message)
    tokenized = time.process_time() - start
    out.write_text(dummy_trees(result), encoding="utf-8")
    return {"train_cpu_s": round(train_cpu, 1), "tokenize_cpu_s": round(tokenized, 2)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--train-split", choices=("train", "dev"), default="train")
    ap.add_argument("--results", default=str(ROOT / "bench" / "tokenization.jsonl"))
    args = ap.parse_args()
    for folder in args.folders:
        files = split_files(folder)
        if args.train_split not in files or "dev" not in files or "test" not in files:
            raise SystemExit(f"{folder}: needs *-ud-{args.train_split}, dev and test .conllu")
        train, dev, test = files[args.train_split], files["dev"], files["test"]
        text = "\n\n".join(p for p, _ in paragraphs(read_conllu(test))) + "\n"
        row = {"treebank": folder.name, "trained_on": args.train_split}
        with tempfile.TemporaryDirectory() as tmp:
            for name, system in (("arborparse", ours), ("UDPipe 1", udpipe)):
                out = Path(tmp) / f"{name}.conllu"
                facts = system(train, dev, text, out)
                scores = official(test, out)
                row[name] = {**facts, **{m: round(scores[m], 2) for m in MEASURES}}
        row.update(date=str(datetime.date.today()), machine=machine())
        append_result(args.results, row)


if __name__ == "__main__":
    main()
