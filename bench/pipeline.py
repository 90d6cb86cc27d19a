"""The text front end: the whole pipeline on gold tokenization with predicted tags, against
the same parser on gold tags, and what predicted input costs.

    python bench/pipeline.py UD_Gothic-PROIEL [--trainer mira] [--folds K]
                             [--model-type isbn --epochs 30]
                             [--results bench/pipeline.jsonl]

Trains (`arborparse train`, dev for every choice) a pipeline (tagger, lemmatizer, parser on
jackknifed tags) and a parser alone on gold tags, then scores test (`arborparse evaluate`,
the CoNLL 2018 measures) when the input has
- no tags (the pipeline predicts UPOS, XPOS, FEATS and LEMMA): the realistic setting;
- gold tags (`--keep-tags`), for both parsers;
- predicted UPOS only (gold XPOS, FEATS, LEMMA), for the pipeline;
- the pipeline's predicted tags given to the parser trained on gold tags (jackknifing's
  reference).
Training and parsing are timed as whole commands (CPU seconds; parsing includes Python's
start and the model load). The pipeline model is kept in bench/runs/ (for
`bench/tagging_speed.py`). Appends one JSON line to --results.
"""

import argparse
import datetime
import json
import tempfile
from pathlib import Path

from common import COMMAND, ROOT, append_result, files, machine, run

from arborparse.io import read_conllu, write_conllu
from arborparse.io.conllu import FEATS, LEMMA, UPOS, XPOS

MEASURES = ("UPOS", "XPOS", "UFeats", "AllTags", "Lemmas", "UAS", "LAS", "CLAS", "MLAS",
            "BLEX")


def blank(sentences, columns):
    return [s.with_columns({c: ["_"] * len(s) for c in columns}) for s in sentences]


def score(gold, system) -> dict:
    result = json.loads(run([*COMMAND, "evaluate", gold, system, "--json"]).out)
    return {k: result[k] for k in MEASURES}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("treebank")
    ap.add_argument("--trainer", default="mira")
    ap.add_argument("--folds", type=int, help="default: arborparse train's (by data size)")
    ap.add_argument("--model-type", default="first-order", choices=["first-order", "isbn"])
    ap.add_argument("--epochs", type=int, help="the parser's (default: arborparse train's)")
    ap.add_argument("--results", default=str(ROOT / "bench" / "pipeline.jsonl"))
    args = ap.parse_args()
    train, dev, test = files(args.treebank)
    gold = read_conllu(test)
    name = args.trainer if args.model_type == "first-order" else "isbn"
    out = {"treebank": args.treebank, "system": f"arborparse pipeline ({name})",
           "folds": args.folds, "epochs": args.epochs}
    options = ["--model-type", args.model_type]
    options += ["--trainer", args.trainer] if args.model_type == "first-order" else []
    options += ["--epochs", args.epochs] if args.epochs else []
    kept = ROOT / "bench" / "runs" / f"pipeline-{name}-{args.treebank}.npz"
    kept.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        inputs = {"untagged": blank(gold, (LEMMA, UPOS, XPOS, FEATS)), "gold": gold}
        for name, sentences in inputs.items():
            write_conllu(sentences, tmp / f"{name}.conllu")
        pipeline, parser = kept, tmp / "parser.npz"
        trained = run([*COMMAND, "train", "--train", train, "--dev", dev, "--model", pipeline,
                       *options, *(["--folds", args.folds] if args.folds else []), "--quiet",
                       "--force"])
        out["train_cpu_seconds"] = trained.cpu
        run([*COMMAND, "train", "--train", train, "--dev", dev, "--model", parser, *options,
             "--components", "parser", "--quiet"])
        parsed = run([*COMMAND, "parse", "--model", pipeline, tmp / "untagged.conllu", "-o",
                      tmp / "predicted.conllu"])
        out["parse_cpu_seconds"] = parsed.cpu
        out["test_sentences"] = len(gold)
        out["predicted"] = score(test, tmp / "predicted.conllu")
        run([*COMMAND, "parse", "--model", pipeline, test, "--keep-tags", "-o",
             tmp / "gold-pipeline.conllu"])
        out["gold_tags"] = score(test, tmp / "gold-pipeline.conllu")
        run([*COMMAND, "parse", "--model", parser, test, "-o", tmp / "gold-parser.conllu"])
        out["gold_tags_gold_trained"] = score(test, tmp / "gold-parser.conllu")
        predicted = read_conllu(tmp / "predicted.conllu")
        upos_only = [g.with_columns({UPOS: p.upos}) for g, p in zip(gold, predicted)]
        write_conllu(upos_only, tmp / "upos-only.conllu")
        run([*COMMAND, "parse", "--model", pipeline, tmp / "upos-only.conllu", "--keep-tags",
             "-o", tmp / "upos-only.parsed.conllu"])
        out["predicted_upos_only"] = score(test, tmp / "upos-only.parsed.conllu")
        run([*COMMAND, "parse", "--model", parser, tmp / "predicted.conllu", "-o",
             tmp / "predicted-gold-trained.conllu"])
        out["predicted_gold_trained"] = score(test, tmp / "predicted-gold-trained.conllu")
    out.update(date=str(datetime.date.today()), machine=machine())
    append_result(args.results, out)


if __name__ == "__main__":
    main()
