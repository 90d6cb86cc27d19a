"""The tagger and the lemmatizer alone, on gold words: development accuracy on any UD folders.

    python bench/front_end.py FOLDER ... [--results bench/front_end.jsonl] [--label NAME]

For each UD treebank folder: `Tagger().fit(train, dev)` and `Lemmatizer().fit(train, dev)`
with their defaults (each keeps its best epoch on dev), then the dev set's UPOS, XPOS,
UFeats and UPOS+UFeats (both right, as MLAS asks) and its lemmas (from the gold
UPOS and FEATS: the lemmatizer alone), with each training's CPU seconds. A folder without
its train file trains on dev's first 5/6 and scores its last 1/6 (as `bench/languages.py`).
Choices measured this way are made on dev across several treebanks, never on a test set.
To measure another checkout, put it first on the path: ``PYTHONPATH=CHECKOUT python
bench/front_end.py ...``. Appends one JSON line per treebank to --results.
"""

import argparse
import datetime
import time
from pathlib import Path

from common import ROOT, append_result, machine, train_dev

import arborparse
from arborparse.text.lemmatizer import Lemmatizer
from arborparse.text.tagger import Tagger


def accuracy(gold: list[str], predicted: list[list[str]]) -> float:
    flat = [v for sentence in predicted for v in sentence]
    return round(100.0 * sum(g == p for g, p in zip(gold, flat, strict=True)) / len(gold), 2)


def measure(folder: Path) -> dict:
    train, dev, trained_on = train_dev(folder)
    start = time.process_time()
    tagger = Tagger(progress=False).fit(train, dev)
    tagger_cpu = time.process_time() - start
    tags = tagger.predict(dev)
    start = time.process_time()
    lemmatizer = Lemmatizer().fit(train, dev)
    lemmatizer_cpu = time.process_time() - start
    return {"treebank": folder.name, "trained_on": trained_on, "train_sentences": len(train),
            "dev_words": sum(len(s) for s in dev),
            "UPOS": accuracy([u for s in dev for u in s.upos], tags["upos"]),
            "XPOS": accuracy([x for s in dev for x in s.xpos], tags["xpos"]),
            "UFeats": accuracy([f for s in dev for f in s.feats], tags["feats"]),
            "UPOS+UFeats": accuracy([(u, f) for s in dev for u, f in zip(s.upos, s.feats)],
                                    [list(zip(u, f)) for u, f in zip(tags["upos"],
                                                                     tags["feats"])]),
            "Lemmas": accuracy([lem for s in dev for lem in s.lemmas], lemmatizer.lemmas(dev)),
            "tagger_cpu_s": round(tagger_cpu, 1), "lemmatizer_cpu_s": round(lemmatizer_cpu, 1)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--label", default="", help="a name for this checkout's rows")
    ap.add_argument("--results", default=str(ROOT / "bench" / "front_end.jsonl"))
    args = ap.parse_args()
    print(f"arborparse from {Path(arborparse.__file__).parent}")
    for folder in args.folders:
        append_result(args.results, {"label": args.label, **measure(folder),
                                     "date": datetime.date.today().isoformat(),
                                     "machine": machine()})


if __name__ == "__main__":
    main()
