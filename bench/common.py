"""Shared by the benchmarks: where the data is and what machine this is."""

import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

from arborparse.io import read_conllu

ROOT = Path(__file__).resolve().parent.parent
UD = Path(os.environ.get("ARBORPARSE_UD", ROOT.parent / "shared" / "data" / "ud"))
TREEBANKS = ["UD_Gothic-PROIEL", "UD_Turkish-IMST", "UD_English-EWT"]
COMMAND = [sys.executable, "-m", "arborparse"]
MEASURES = ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas",
            "UAS", "LAS", "CLAS", "MLAS", "BLEX")


class Run(NamedTuple):
    """A finished command: wall and CPU seconds, peak memory (MB), stdout, stderr, and
    whether it was stopped at `run`'s stop_after."""

    wall: float
    cpu: float
    max_rss_mb: float
    out: str
    err: str
    stopped: bool = False  # by `run`'s stop_after


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def best_time(fn, repeat=5):
    """The fastest of `repeat` runs of fn(), in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def best_times(fns: dict, repeat=15) -> dict:
    """The fastest of `repeat` runs of each function, runs interleaved (A B C A B C ...) so
    that a slow spell of the machine does not favour one implementation."""
    best = {name: float("inf") for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def run(args, threads: int = 1, package=ROOT, stop_after: float | None = None) -> Run:
    """Run a command (`threads` threads for numeric libraries, the arborparse package of the
    checkout `package`, by default this one) and measure it; raise with its stderr when it
    fails. With `stop_after` seconds, it is sent SIGTERM then (a training keeps its best
    model and exits with status 130, which counts as success; `Run.stopped` says so)."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads), PYTHONPATH=str(package),
               PYTHONSAFEPATH="1")  # `python -m` must not import the working directory's
    # the package's bytecode is kept, as an installed package's is (pip writes it): without
    # it every run compiles the package's sources again (about 0.16 CPU s)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(list(map(str, args)), stdout=out, stderr=err, env=env)
        sent = False
        while True:  # the child's own CPU time comes with its status
            waiting = stop_after is not None and not sent
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG if waiting else 0)
            if pid:
                break
            if time.perf_counter() - start >= stop_after:
                os.kill(proc.pid, signal.SIGTERM)
                sent = True
            else:
                time.sleep(0.2)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        stopped = sent and proc.returncode == 130
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0 and not stopped:
            raise RuntimeError(f"{' '.join(map(str, args))} failed:\n{err.read()}")
        return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.read(),
                   err.read(), stopped)


def files(treebank):
    folder = UD / treebank
    return tuple(next(folder.glob(f"*-ud-{split}.conllu")) for split in ("train", "dev", "test"))


def split_files(folder: Path) -> dict:
    """The ``*-ud-{train,dev,test}.conllu`` files a UD treebank folder holds, by split."""
    found = {s: sorted(Path(folder).glob(f"*-ud-{s}.conllu")) for s in ("train", "dev", "test")}
    return {s: f[0] for s, f in found.items() if f}


def train_dev(folder: Path):
    """(train, dev, trained_on): the sentences a UD folder trains and tunes on; without a
    train file, dev's first 5/6 and its last 1/6 (trained_on "dev")."""
    found = split_files(folder)
    if "dev" not in found:
        raise SystemExit(f"{folder}: needs *-ud-dev.conllu")
    if "train" in found:
        return read_conllu(found["train"]), read_conllu(found["dev"]), "train"
    sentences = read_conllu(found["dev"])
    cut = len(sentences) * 5 // 6
    return sentences[:cut], sentences[cut:], "dev"


def warm_up(trainers, decoders, workdir):
    """Train and parse a few sentences once, so that no measurement includes compiling
    the kernels (numba caches them on disk after the first run)."""
    train, dev, _ = files(TREEBANKS[0])
    tiny = Path(workdir) / "tiny.conllu"
    tiny.write_text("".join(s.to_text() for s in read_conllu(train)[:30]))
    for trainer in trainers:
        for decoder in decoders:
            model = Path(workdir) / "tiny.npz"
            run([*COMMAND, "train", "--train", tiny, "--dev", tiny, "--model", model,
                 "--trainer", trainer, "--decoder", decoder, "--epochs", "1", "--order", "1",
                 "--quiet"])  # its callers measure first-order parsers
            run([*COMMAND, "parse", "--model", model, tiny, "-o", Path(workdir) / "tiny.out"])


def parse_and_score(model, treebank, decodings, stem) -> dict:
    """Parse the treebank's dev and test sets with each (decode, decoder) of `decodings`
    into ``{stem}.{decode}-{decoder}.{split}.conllu`` and score them:
    ``{"{decode}-{decoder}-{split}": {"UAS": .., "LAS": ..}}``."""
    _, dev, test = files(treebank)
    scores = {}
    for decode, decoder in decodings:
        for split, gold in (("dev", dev), ("test", test)):
            parsed = f"{stem}.{decode}-{decoder}.{split}.conllu"
            run([*COMMAND, "parse", "--model", model, gold, "-o", parsed, "--decode", decode,
                 "--decoder", decoder])
            result = json.loads(run([*COMMAND, "evaluate", gold, parsed, "--json"]).out)
            scores[f"{decode}-{decoder}-{split}"] = {k: result[k] for k in ("UAS", "LAS")}
    return scores


def official(gold, system) -> dict:
    """The CoNLL 2018 shared task's scores (F1, in %) of `system` against `gold`, by the
    official script (``conll18_ud_eval.py`` beside the UD folder, in ../tools)."""
    sys.path.insert(0, str(UD.parent.parent / "tools"))
    import conll18_ud_eval as script

    result = script.evaluate(script.load_conllu_file(str(gold)),
                             script.load_conllu_file(str(system)))
    return {m: 100 * result[m].f1 for m in MEASURES}


def best_epoch(log: str) -> int:
    """The epoch `arborparse train` kept, from its log on stderr."""
    return int(re.search(r"\(epoch (\d+)\)", log).group(1))


def append_result(results, row: dict) -> None:
    """Append `row` as a JSON line to the file `results`, and print it."""
    line = json.dumps(row)
    with open(results, "a") as out:
        out.write(line + "\n")
    print(line, flush=True)


def record(tasks, jobs: int, results) -> None:
    """Run the callables `tasks` on `jobs` threads; append each one's result, in task
    order, to `results` (`append_result`)."""
    with ThreadPoolExecutor(jobs) as pool:
        for future in [pool.submit(task) for task in tasks]:
            append_result(results, future.result())
