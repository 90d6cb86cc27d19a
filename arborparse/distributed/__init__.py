"""Beyond one process: corpora parsed and the linear models trained on a Dask cluster
(``dask.distributed``; a local cluster of processes, or any running scheduler).

- `corpus`: `parse_corpus` (files, folders, globs; partitions; resume; byte-identical to a
  serial run) and `parse_bag` (a `dask.bag` of parsed sentences)
- `training`: iterative parameter mixing for the perceptron and MIRA, and the exact
  gradient of log-linear L-BFGS summed over shards
- `connect`: a client for ``local`` or a scheduler's address
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from contextlib import contextmanager

from arborparse.errors import ArborparseError

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                    "NUMBA_NUM_THREADS")


@contextmanager
def _ctrl_c_ignored():
    """The processes started in the block ignore Ctrl-C for good: a terminal sends Ctrl-C to
    every process of the command, and a local cluster's workers would each print a
    traceback; here it stops the work, and the cluster with it. This process ignores it
    for the block too (what a new process inherits): a Ctrl-C while the cluster starts,
    seconds, is lost. From the main thread only, as Python's signals."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)


@contextmanager
def connect(scheduler: str, workers: int | None = None):
    """A `distributed.Client`: ``"local"`` starts a cluster of `workers` processes (default:
    one per core), one thread each, on this machine for the duration; an address
    (``tcp://HOST:PORT``) connects to a running scheduler."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ArborparseError("a Dask cluster needs the package distributed: pip install "
                              "'arborparse[distributed]'") from None
    logging.getLogger("distributed").setLevel(logging.ERROR)
    if scheduler == "local":
        for name in THREAD_VARIABLES:  # one thread per worker process, inherited
            os.environ.setdefault(name, "1")
        with _ctrl_c_ignored():  # the cluster's processes start ignoring it
            cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1,
                                   threads_per_worker=1, processes=True,
                                   dashboard_address=":0",
                                   silence_logs=logging.ERROR)  # no warnings of cancelled tasks
        with cluster, Client(cluster) as client:
            yield client
        return
    if workers is not None:
        raise ArborparseError("--workers applies to --scheduler local only (a running "
                              "scheduler has its own workers)")
    try:
        client = Client(scheduler, timeout="20s")
    except (OSError, TimeoutError, ValueError) as err:
        raise ArborparseError(f"cannot reach the Dask scheduler at {scheduler}: {err}") \
            from None
    with client:
        yield client
