"""Multiword tokens split into words, on the test set's gold tokens: the affix rules against
the character model of glued words (`arborparse.text.multiword`), and the one dev chose.

    python bench/multiword.py FOLDER [FOLDER ...] [--results bench/multiword.jsonl]

FOLDER is any UD treebank folder (``*-ud-{train,dev,test}.conllu``), inside or outside
ARBORPARSE_UD; without a train file, dev's first five sixths train and its last sixth tunes
(``"trained_on": "dev"``, as `bench/languages.py` does). `Multiword` is trained on the
training tokens and their words, as `arborparse train` trains it, once with the dev tokens
(it keeps the segmenter where dev's tokens come out split right more often with it) and
once without (the rules alone). Each row: the share of test tokens that are multiword
tokens and of those unseen in training, and the test tokens split right (the exact words)
by the rules and by the one dev kept: all tokens, the multiword tokens, and the tokens
unseen in training. Appends one JSON line per treebank to --results.
"""

import argparse
import datetime
import time
from pathlib import Path

from common import ROOT, append_result, machine, split_files, train_dev

from arborparse.io import read_conllu
from arborparse.text.multiword import Multiword
from arborparse.text.tokenizer import token_words


def right(multiword: Multiword, test, seen) -> dict:
    """The percentage of test tokens split into their words: all, multiword, unseen."""
    found = [w for s in multiword.split([[f for f, _ in t] for t in test]) for w in s]
    gold = [(form, tuple(words)) for t in test for form, words in t]
    groups = {"all": lambda f, w: True, "multiword": lambda f, w: len(w) > 1,
              "unseen": lambda f, w: f not in seen}
    out = {}
    for name, member in groups.items():
        picked = [(w, g) for w, (f, g) in zip(found, gold) if member(f, g)]
        out[name] = round(100.0 * sum(w == g for w, g in picked) / max(len(picked), 1), 2)
    return out


def measure(folder: Path) -> dict:
    train, dev, trained_on = train_dev(folder)
    test = token_words(read_conllu(split_files(folder)["test"]))
    train, dev = token_words(train), token_words(dev)
    seen = {form for t in train for form, _ in t}
    tokens = [(f, w) for t in test for f, w in t]
    began = time.process_time()
    chosen = Multiword().fit(train, dev)
    seconds = time.process_time() - began
    rules = Multiword().fit(train)
    row = {"treebank": folder.name, "trained_on": trained_on,
           "test_tokens": len(tokens),
           "multiword_share": round(100.0 * sum(len(w) > 1 for _, w in tokens) / len(tokens), 2),
           "unseen_share": round(100.0 * sum(f not in seen for f, _ in tokens) / len(tokens), 2),
           "dev_right": chosen.dev_right_,
           "kept": chosen.unseen_by,
           "fit_cpu_s": round(seconds, 1),
           "rules": right(rules, test, seen), "chosen": right(chosen, test, seen)}
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--results", default=ROOT / "bench" / "multiword.jsonl")
    args = parser.parse_args()
    rows = []
    for folder in args.folders:
        row = measure(folder)
        row.update(date=datetime.date.today().isoformat(), machine=machine())
        append_result(args.results, row)
        rows.append(row)
    print("| treebank | multiword % | unseen % | dev right: rules / characters | kept | "
          "test right, rules: all / multiword / unseen | the kept one: all / multiword / "
          "unseen |")
    print("|---|---:|---:|---|---|---|---|")
    for row in rows:
        dev = row["dev_right"]
        said = f"{dev['rules']:.2f} / {dev['segmenter']:.2f}" if dev else "(no glued words)"
        print(f"| {row['treebank']} | {row['multiword_share']:.2f} | "
              f"{row['unseen_share']:.2f} | {said} | {row['kept']} | " +
              " | ".join(" / ".join(f"{row[k][g]:.2f}" for g in ("all", "multiword", "unseen"))
                         for k in ("rules", "chosen")) + " |")


if __name__ == "__main__":
    main()
