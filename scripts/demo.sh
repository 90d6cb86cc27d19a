#!/usr/bin/env bash
# The demo behind `make demo`: train a pipeline (tokenizer, tagger, lemmatizer, linear
# parser) on English-EWT train (choices on dev), parse English-EWT test twice: with its gold
# tags, and with every tag and lemma column emptied, and evaluate both next to a trivial
# baseline; then parse a paragraph of raw text.
# Usage: scripts/demo.sh UD_FOLDER [EPOCHS] [FOLDS]
set -euo pipefail
UD=${1:-../shared/data/ud}
EPOCHS=${2:-5}
FOLDS=${3:-2}
EWT="$UD/UD_English-EWT"
for split in train dev test; do
    if [ ! -f "$EWT/en_ewt-ud-$split.conllu" ]; then
        echo "demo: $EWT/en_ewt-ud-$split.conllu not found; point UD at your Universal Dependencies folder: make demo UD=/path/to/ud" >&2
        exit 1
    fi
done
mkdir -p out
TEST="$EWT/en_ewt-ud-test.conllu"
echo "== Baseline: every word attaches to its left neighbour (English-EWT test)"
.venv/bin/arborparse baseline "$TEST" -o out/ewt-test.left.conllu
.venv/bin/arborparse evaluate "$TEST" out/ewt-test.left.conllu --json > out/ewt-test.left.json
echo
echo "== Training tokenizer, tagger, lemmatizer and parser (averaged perceptron, MST, $EPOCHS epochs) on"
echo "   tags jackknifed over $FOLDS folds (the default, 10, takes longer; so does --trainer mira)"
.venv/bin/arborparse train --train "$EWT/en_ewt-ud-train.conllu" --dev "$EWT/en_ewt-ud-dev.conllu" \
    --model out/ewt.model.npz --trainer perceptron --decoder mst --epochs "$EPOCHS" \
    --folds "$FOLDS"
echo
echo "== What the model file says of itself (arborparse info)"
.venv/bin/arborparse info out/ewt.model.npz
echo
echo "== Parsing English-EWT test with its gold tags (--keep-tags)"
.venv/bin/arborparse parse --model out/ewt.model.npz --keep-tags "$TEST" -o out/ewt-test.gold-tags.conllu
.venv/bin/arborparse evaluate "$TEST" out/ewt-test.gold-tags.conllu --json > out/ewt-test.gold-tags.json
echo
echo "== Parsing English-EWT test from its words alone (LEMMA, UPOS, XPOS, FEATS emptied)"
awk -F'\t' 'BEGIN { OFS = "\t" } NF == 10 { $3 = $4 = $5 = $6 = "_" } { print }' "$TEST" \
    > out/ewt-test.untagged.conllu
.venv/bin/arborparse parse --model out/ewt.model.npz out/ewt-test.untagged.conllu -o out/ewt-test.parsed.conllu
.venv/bin/arborparse evaluate "$TEST" out/ewt-test.parsed.conllu > out/ewt-test.parsed.txt
.venv/bin/arborparse evaluate "$TEST" out/ewt-test.parsed.conllu --json > out/ewt-test.parsed.json
echo "full evaluation (per relation, per arc length): out/ewt-test.parsed.txt"
echo
echo "== Summary: English-EWT test, gold tokenization, CoNLL 2018 measures"
.venv/bin/python - out/ewt-test.left.json out/ewt-test.gold-tags.json out/ewt-test.parsed.json <<'PY'
import json, sys
names = ("left-neighbour baseline", "parser, gold tags", "pipeline, words only")
measures = ("UPOS", "XPOS", "UFeats", "Lemmas", "UAS", "LAS", "MLAS")
print(f"{'':<26}" + "".join(f"{m:>8}" for m in measures))
for name, path in zip(names, sys.argv[1:]):
    s = json.load(open(path))
    print(f"{name:<26}" + "".join(f"{s[m]:>8.2f}" for m in measures))
PY
echo
echo "== Raw text in, CoNLL-U out"
TEXT="Parsing raw text takes one command. The model finds the sentences and the tokens, tags them and parses them; it can't know what you meant, though!"
echo "$TEXT"
echo "$TEXT" | .venv/bin/arborparse parse --model out/ewt.model.npz --input-format text
