#!/usr/bin/env bash
# The demo behind `make demo`: parse English-EWT test with the strongest parser available
# and evaluate it. Usage: scripts/demo.sh UD_FOLDER
set -euo pipefail
UD=${1:-../shared/data/ud}
TEST="$UD/UD_English-EWT/en_ewt-ud-test.conllu"
if [ ! -f "$TEST" ]; then
    echo "demo: $TEST not found; point UD at your Universal Dependencies folder: make demo UD=/path/to/ud" >&2
    exit 1
fi
mkdir -p out
echo "== Baseline (every word attaches to its left neighbour) on English-EWT test"
.venv/bin/arborparse baseline "$TEST" -o out/ewt-test.left.conllu
.venv/bin/arborparse evaluate "$TEST" out/ewt-test.left.conllu
