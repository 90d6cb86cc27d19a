#!/usr/bin/env bash
# The demo behind `make demo`: train a pipeline (tokenizer, tagger, lemmatizer, linear
# parser) on English-EWT train (choices on dev), parse English-EWT test twice: with its gold
# tags, and with every tag and lemma column emptied, and evaluate both next to a trivial
# baseline; then parse a paragraph of raw text. Each step says how long it took. No web
# browser is needed (only the browser tests drive one).
# Usage: scripts/demo.sh UD_FOLDER [EPOCHS] [FOLDS]   (environment: OUT, the output folder,
# default out; BIN, where arborparse and python are, default .venv/bin)
set -euo pipefail
UD=${1:-../shared/data/ud}
EPOCHS=${2:-5}
FOLDS=${3:-2}
OUT=${OUT:-out}
BIN=${BIN:-.venv/bin}
STEP= START= TIMES=()
# begin TITLE: end the step before (its time printed and kept), start the step TITLE
begin() {
    end_step
    STEP=$1 START=$(date +%s.%N)
    echo "== $1"
}
end_step() {
    if [ -n "$STEP" ]; then
        local took
        took=$(awk -v a="$START" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
        echo "   (took $took s)"
        echo
        TIMES+=("$(printf '%8s s  %s' "$took" "$STEP")")
    fi
}
EWT="$UD/UD_English-EWT"
for split in train dev test; do
    if [ ! -f "$EWT/en_ewt-ud-$split.conllu" ]; then
        echo "demo: $EWT/en_ewt-ud-$split.conllu not found; point UD at your Universal Dependencies folder: make demo UD=/path/to/ud" >&2
        exit 1
    fi
done
mkdir -p "$OUT"
TEST="$EWT/en_ewt-ud-test.conllu"
begin "Baseline: every word attaches to its left neighbour (English-EWT test)"
"$BIN"/arborparse baseline "$TEST" -o "$OUT"/ewt-test.left.conllu
"$BIN"/arborparse evaluate "$TEST" "$OUT"/ewt-test.left.conllu --json > "$OUT"/ewt-test.left.json
begin "Training tokenizer, tagger, lemmatizer and parser (averaged perceptron, MST, $EPOCHS epochs)"
echo "   on tags jackknifed over $FOLDS folds (the default, 10, takes longer; so does --trainer mira),"
echo "   and no epochs past $EPOCHS (the default, --extend 3, goes on while the best dev LAS is recent)"
"$BIN"/arborparse train --train "$EWT/en_ewt-ud-train.conllu" --dev "$EWT/en_ewt-ud-dev.conllu" \
    --model "$OUT"/ewt.model.npz --trainer perceptron --decoder mst --epochs "$EPOCHS" \
    --extend 0 --folds "$FOLDS"
begin "What the model file says of itself (arborparse info)"
"$BIN"/arborparse info "$OUT"/ewt.model.npz
begin "Parsing English-EWT test with its gold tags (--keep-tags)"
"$BIN"/arborparse parse --model "$OUT"/ewt.model.npz --keep-tags "$TEST" -o "$OUT"/ewt-test.gold-tags.conllu
"$BIN"/arborparse evaluate "$TEST" "$OUT"/ewt-test.gold-tags.conllu --json > "$OUT"/ewt-test.gold-tags.json
begin "Parsing English-EWT test from its words alone (LEMMA, UPOS, XPOS, FEATS emptied)"
awk -F'\t' 'BEGIN { OFS = "\t" } NF == 10 { $3 = $4 = $5 = $6 = "_" } { print }' "$TEST" \
    > "$OUT"/ewt-test.untagged.conllu
"$BIN"/arborparse parse --model "$OUT"/ewt.model.npz "$OUT"/ewt-test.untagged.conllu -o "$OUT"/ewt-test.parsed.conllu
"$BIN"/arborparse evaluate "$TEST" "$OUT"/ewt-test.parsed.conllu > "$OUT"/ewt-test.parsed.txt
"$BIN"/arborparse evaluate "$TEST" "$OUT"/ewt-test.parsed.conllu --json > "$OUT"/ewt-test.parsed.json
echo "full evaluation (per relation, per arc length): "$OUT"/ewt-test.parsed.txt"
begin "Summary: English-EWT test, gold tokenization, CoNLL 2018 measures"
"$BIN"/python - "$OUT"/ewt-test.left.json "$OUT"/ewt-test.gold-tags.json "$OUT"/ewt-test.parsed.json <<'PY'
import json, sys
names = ("left-neighbour baseline", "parser, gold tags", "pipeline, words only")
measures = ("UPOS", "XPOS", "UFeats", "Lemmas", "UAS", "LAS", "MLAS")
print(f"{'':<26}" + "".join(f"{m:>8}" for m in measures))
for name, path in zip(names, sys.argv[1:]):
    s = json.load(open(path))
    print(f"{name:<26}" + "".join(f"{s[m]:>8.2f}" for m in measures))
PY
begin "Raw text in, CoNLL-U out"
TEXT="Parsing raw text takes one command. The model finds the sentences and the tokens, tags them and parses them; it can't know what you meant, though!"
echo "$TEXT"
echo "$TEXT" | "$BIN"/arborparse parse --model "$OUT"/ewt.model.npz --input-format text
end_step
echo "== Time per step"
printf '%s\n' "${TIMES[@]}"
