"""Loading a model file: its layout (large arrays stored, the rest deflated) against the
same file with every member deflated (the layout before the twentieth round), in one run.

    python bench/model_load.py MODEL.npz [--repeat 7] [--results bench/model_load.jsonl]

The reference is MODEL's own arrays, every member rewritten deflated at level 1 (what
`arborparse.io.model_files` wrote before); both files are loaded with `arborparse.load`
in fresh processes (one thread; the family's modules imported before the clock starts),
interleaved, the fastest of --repeat kept. Prints both files' sizes and CPU seconds and
the ratio; appends one JSON line to --results.
"""

import argparse
import datetime
import sys
import tempfile
import zipfile
from pathlib import Path

from common import ROOT, append_result, machine, run

TIMED = """
import sys, time
import arborparse, arborparse.linear.parser, arborparse.text.lemmatizer
import arborparse.text.tagger, arborparse.text.tokenizer
start = time.process_time()
arborparse.load(sys.argv[1])
print(time.process_time() - start)
"""


def all_deflated(model: Path, out: Path) -> None:
    """`model` with every member deflated at level 1."""
    with zipfile.ZipFile(model) as source, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as target:
        for info in source.infolist():
            target.writestr(info.filename, source.read(info))


def load_seconds(path: Path) -> float:
    return float(run([sys.executable, "-c", TIMED, str(path)]).out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--results", default=str(ROOT / "bench" / "model_load.jsonl"))
    args = ap.parse_args()
    model = Path(args.model)
    with tempfile.TemporaryDirectory() as tmp:
        deflated = Path(tmp) / "deflated.npz"
        all_deflated(model, deflated)
        files = {"this layout": model, "all deflated": deflated}
        best = {name: float("inf") for name in files}
        for _ in range(args.repeat):
            for name, path in files.items():
                best[name] = min(best[name], load_seconds(path))
        sizes = {name: path.stat().st_size for name, path in files.items()}
    out = {"model": model.name, "cpu_seconds": best, "bytes": sizes,
           "ratio": best["all deflated"] / best["this layout"],
           "date": str(datetime.date.today()), "machine": machine()}
    print(f"{model.name}; {machine()}")
    for name in files:
        print(f"{name:>12}: {sizes[name] / 1e6:6.1f} MB, loaded in {best[name]:.3f} CPU s")
    print(f"ratio {out['ratio']:.2f}")
    append_result(args.results, out)


if __name__ == "__main__":
    main()
