"""Shared by the benchmarks: where the data is and what machine this is."""

import os
import platform
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UD = Path(os.environ.get("ARBORPARSE_UD", ROOT.parent / "shared" / "data" / "ud"))


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
