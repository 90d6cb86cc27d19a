#!/usr/bin/env bash
# The demo behind `make demo`: train the first-order parser on English-EWT train (model chosen
# on dev), parse English-EWT test and evaluate it, next to a trivial baseline.
# Usage: scripts/demo.sh UD_FOLDER [EPOCHS]
set -euo pipefail
UD=${1:-../shared/data/ud}
EPOCHS=${2:-5}
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
echo "== Training the first-order parser (averaged perceptron, MST decoding, $EPOCHS epochs)"
.venv/bin/arborparse train --train "$EWT/en_ewt-ud-train.conllu" --dev "$EWT/en_ewt-ud-dev.conllu" \
    --model out/ewt.model.npz --trainer perceptron --decoder mst --epochs "$EPOCHS" \
    --components parser
echo
echo "== Parsing English-EWT test"
.venv/bin/arborparse parse --model out/ewt.model.npz "$TEST" -o out/ewt-test.parsed.conllu
.venv/bin/arborparse evaluate "$TEST" out/ewt-test.parsed.conllu > out/ewt-test.parsed.txt
.venv/bin/arborparse evaluate "$TEST" out/ewt-test.parsed.conllu --json > out/ewt-test.parsed.json
echo "full evaluation (per relation, per arc length): out/ewt-test.parsed.txt"
echo
echo "== Summary: English-EWT test, gold tags, CoNLL 2018 definitions"
.venv/bin/python - out/ewt-test.left.json out/ewt-test.parsed.json <<'PY'
import json, sys
print(f"{'':<28}{'UAS':>8}{'LAS':>8}")
for name, path in zip(("left-neighbour baseline", "first-order parser"), sys.argv[1:]):
    s = json.load(open(path))
    print(f"{name:<28}{s['UAS']:>8.2f}{s['LAS']:>8.2f}")
PY
