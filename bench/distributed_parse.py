"""Corpus parsing on a Dask cluster against the serial `arborparse parse`, from raw text.

    python bench/distributed_parse.py MODEL [--treebank UD_English-EWT]
                                      [--sentences 200000] [--results bench/distributed.jsonl]

The corpus is the treebank's raw text (train, dev and test, paragraphs as in the treebank)
repeated to at least --sentences sentences, one file. It is parsed (a) serially, (b) with
`--scheduler local --workers 1`, (c) with `--workers 2`, each with one thread per process,
then (d) a tenth of the corpus with two workers, for the memory per worker. Every output
must equal the serial one byte for byte. Reported: wall seconds, sentences per second, the
ratios (b)/(a) and (c)/(b), and the peak resident memory of every process of the run
(the client, the nannies and the workers), read from /proc while it runs. MODEL: a
pipeline with a tokenizer (bench/raw_text.py keeps one in bench/runs/).
"""

import argparse
import datetime
import filecmp
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from common import COMMAND, ROOT, UD, append_result, machine

from arborparse.io import iter_conllu


def corpus_text(treebank: str) -> tuple[str, int]:
    """(the treebank's raw text, its sentences): paragraphs separated by blank lines."""
    out, count = [], 0
    for path in sorted((UD / treebank).glob("*-ud-*.conllu")):
        for s in iter_conllu(path):
            text = next((c[9:] for c in s.comments if c.startswith("# text = ")), None)
            if text is None:
                continue
            if out and any(c.startswith(("# newpar", "# newdoc")) for c in s.comments):
                out.append("\n")
            out.append(text + "\n")
            count += 1
    return "".join(out) + "\n", count


def descendants(pid: int) -> list[int]:
    """Every process under `pid` (from the parent ids in /proc)."""
    parent = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(stat.parent.name)] = int(fields[1])
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        children = [c for c, pp in parent.items() if pp == p]
        out += children
        todo += children
    return out


def peak_mb(pid: int) -> float | None:
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def measured(args) -> tuple[float, list[float]]:
    """(wall seconds, the peak RSS in MB of the command and each process under it)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    start = time.perf_counter()
    proc = subprocess.Popen(list(map(str, args)), env=env, stderr=subprocess.PIPE, text=True)
    peaks: dict[int, float] = {}

    def watch():
        while proc.poll() is None:
            for p in [proc.pid, *descendants(proc.pid)]:
                mb = peak_mb(p)
                if mb is not None:
                    peaks[p] = max(peaks.get(p, 0.0), mb)
            time.sleep(0.5)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    thread.join()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, args))} failed:\n{err[-3000:]}")
    return wall, sorted(peaks.values(), reverse=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--treebank", default="UD_English-EWT")
    ap.add_argument("--sentences", type=int, default=200_000)
    ap.add_argument("--partition-kb", type=int, default=256)
    ap.add_argument("--runs", nargs="+", default=["serial", "dask-1", "dask-2", "dask-2-tenth"])
    ap.add_argument("--results", default=str(ROOT / "bench" / "distributed.jsonl"))
    args = ap.parse_args()
    text, count = corpus_text(args.treebank)
    copies = -(-args.sentences // count)
    row = {"benchmark": "distributed parse", "treebank": args.treebank, "model": args.model,
           "copies": copies, "gold_sentences": copies * count,
           "partition_kb": args.partition_kb}
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        corpus, tenth = folder / "corpus.txt", folder / "tenth.txt"
        corpus.write_text(text * copies)
        tenth.write_text(text * max(1, copies // 10))
        row["corpus_mb"] = corpus.stat().st_size / 2**20
        parse = [*COMMAND, "parse", "--model", args.model, "--input-format", "text"]
        dask = parse + ["--partition-kb", args.partition_kb, "--scheduler", "local",
                        "--workers"]
        runs = {"serial": (parse, corpus), "dask-1": (dask + [1], corpus),
                "dask-2": (dask + [2], corpus), "dask-2-tenth": (dask + [2], tenth)}
        for name in args.runs:
            command, source = runs[name]
            out = folder / f"{name}.conllu"
            wall, peaks = measured([*command, source, "-o", out])
            sentences = sum(1 for line in open(out) if line.startswith("# sent_id"))
            row[name] = {"seconds": wall, "sentences": sentences,
                         "sentences_per_second": sentences / wall, "peak_rss_mb": peaks}
            print(name, row[name], file=sys.stderr, flush=True)
            if name.startswith("dask") and source == corpus and "serial" in args.runs:
                row[name]["same_as_serial"] = filecmp.cmp(out, folder / "serial.conllu",
                                                          shallow=False)
            if name != "serial":
                out.unlink()
    for a, b in (("dask-1", "serial"), ("dask-2", "dask-1")):
        if a in row and b in row:
            row[f"{a} / {b}"] = row[a]["sentences_per_second"] / row[b]["sentences_per_second"]
    row["date"] = datetime.date.today().isoformat()
    row["machine"] = machine()
    append_result(args.results, row)


if __name__ == "__main__":
    main()
