"""The service's workers: a pool of processes, and in front of it an admission queue that
hands a free worker the cheapest waiting request first.

Parsing runs in worker processes, not threads: the front end (tokenizer, tagger, feature
extraction) is Python and holds the GIL, so threads would take turns on one core (measured
in ``bench/RESULTS.md``, "the service"). The pool is the standard library's
`ProcessPoolExecutor` (spawned processes, each set up once by `initializer`: the service
loads the model there); what it lacks is an order, which `Admission` gives: a request is
submitted only when a worker is free, so it never waits in the executor's own FIFO.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import multiprocessing
import signal
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from arborparse.service import AGING, SHORT, TIMEOUT


class Overdue(Exception):
    """A request not answered within the timeout (its work abandoned), or whose worker
    process stopped."""


class Admission:
    """Requests waiting for a worker, cheapest first, aged so that none waits forever.

    A request of `cost` (its words) that arrives at time t ranks as if it had arrived at
    t + cost / `aging` (`aging` in words per second): a 15-word sentence goes ahead of the
    250-word documents that came less than 0.235 s before it (at the default 1,000 words
    per second), and nothing that arrives more than cost / `aging` seconds after a request
    goes ahead of it: a request of the largest size the service takes (5,000 words) is
    passed over only by what arrives within the next 5 seconds, and then is first among
    the rest. All waiting requests age at the same rate, so the ranks never need updating.
    With `aging` infinite the cost counts for nothing: first come, first served.

    Requests of at most `short` words are also kept apart, so that ``pop(short=True)``
    gives the first-ranked of them (for the spare worker, see `Workers`).
    `clock` gives the time in seconds (`time.monotonic`; tests give their own).
    """

    def __init__(self, aging: float = AGING, clock=time.monotonic, short: float = SHORT):
        if aging <= 0:
            raise ValueError(f"aging={aging}: the words per second must be positive")
        self.aging, self.clock, self.short = aging, clock, short
        self._heaps: tuple[list, list] = ([], [])  # the short requests, the others
        self._order = itertools.count()  # equal ranks: first come, first served

    def push(self, cost: float, item) -> list:
        """Queue `item` of `cost`; returns its entry (for `remove`)."""
        entry = [self.clock() + cost / self.aging, next(self._order), item]
        heapq.heappush(self._heaps[cost > self.short], entry)
        return entry

    def waiting(self, short: bool = False) -> bool:
        """Whether a request waits (with `short`: a short one)."""
        return bool(self._heaps[0] if short else len(self))

    def pop(self, short: bool = False):
        """The item that ranks first (with `short`: first among the short requests),
        taken out of the queue."""
        heap = min((h for h in self._heaps[:1 if short else 2] if h), key=lambda h: h[0][:2])
        return heapq.heappop(heap)[2]

    def remove(self, entry: list) -> bool:
        """Take `entry` out of the queue; False if it was no longer there."""
        for heap in self._heaps:
            for i, queued in enumerate(heap):
                if queued is entry:
                    heap[i] = heap[-1]
                    heap.pop()
                    heapq.heapify(heap)
                    return True
        return False

    def __len__(self) -> int:
        return sum(map(len, self._heaps))


def _set_up(initializer, initargs: tuple) -> None:
    """A worker process's setup: it leaves Ctrl-C to the service, which stops the workers
    when it stops (a terminal sends Ctrl-C to every process of the command, and each worker
    would print its traceback), then ``initializer(*initargs)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if initializer is not None:
        initializer(*initargs)


class Workers:
    """`processes` worker processes, each set up once by ``initializer(*initargs)``, that
    run ``await workers.run(cost, fn, *args)`` calls in the order `Admission` gives, and
    a spare one (unless `short` is 0) for calls of at most `short` words when the others
    are all busy: a sentence never waits for a document to finish, and takes a moment of
    the cores from the documents instead (a worker's memory, one model more).

    A call not answered within `timeout` seconds (waiting and running together) raises
    `Overdue`, and its work is abandoned: taken out of the queue if it is still waiting; if
    a worker is already running it, that worker finishes it and the answer is dropped (the
    service's limits bound what one request holds, so this ends; stopping the process
    instead would cost a model load, seconds of a worker lost just when the pool is
    overloaded). A worker process that dies (killed, out of memory) fails the calls it and
    the pool were running with `Overdue`, and the pool is started again.

    Use it within one event loop: `start`, `run`, then `close`, which stops the processes
    (waiting for the calls they are running).
    """

    def __init__(self, processes: int, initializer=None, initargs: tuple = (),
                 timeout: float = TIMEOUT, aging: float = AGING, short: int = SHORT):
        if processes < 1:
            raise ValueError(f"processes={processes}: at least 1")
        if timeout <= 0:
            raise ValueError(f"timeout={timeout}: the seconds must be positive")
        self.timeout = timeout
        self._setup = (initializer, initargs)
        self.admission = Admission(aging, short=short)
        self.free, self.spare = processes, int(short > 0)  # idle workers, idle spare
        self.processes = processes + self.spare
        self._executor = self._pool()

    def _pool(self) -> ProcessPoolExecutor:
        initializer, initargs = self._setup
        return ProcessPoolExecutor(self.processes, multiprocessing.get_context("spawn"),
                                   _set_up, (initializer, initargs))

    async def start(self) -> None:
        """Start the processes and wait for as many first answers (a process answers once
        it is set up: the model loaded), so that requests seldom meet a loading worker."""
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(asyncio.wrap_future(self._executor.submit(int), loop=loop)
                               for _ in range(self.processes)))

    async def run(self, cost: float, fn, *args):
        """``fn(*args)`` in a worker process (`fn` and `args` picklable), once the
        requests that rank before it (see `Admission`) have a worker."""
        loop = asyncio.get_running_loop()
        answer = loop.create_future()
        entry = self.admission.push(cost, (answer, fn, args))
        self._dispatch()
        try:
            return await asyncio.wait_for(answer, self.timeout)
        except TimeoutError:
            why = "the service is overloaded; send it again later" \
                if self.admission.remove(entry) else \
                "a worker was still computing it; send it again later if the service is " \
                "busy, or send less at once (fewer or shorter sentences, without marginals " \
                "or k-best trees)"
            raise Overdue(f"not answered within the timeout ({self.timeout:g} s): "
                          f"{why}") from None
        finally:  # timed out, or its caller gone: no longer queued
            self.admission.remove(entry)

    def _dispatch(self) -> None:
        """Give each free worker the request that ranks first, and the spare worker the
        short one that ranks first."""
        while True:
            if self.free and self.admission.waiting():
                spare = False
            elif self.spare and self.admission.waiting(short=True):
                spare = True
            else:
                return
            answer, fn, args = self.admission.pop(short=spare)
            if answer.done():  # abandoned (timed out) before it was taken out of the queue
                continue
            self._take(spare, -1)
            executor = self._executor
            try:
                work = executor.submit(fn, *args)
            except BrokenProcessPool as err:
                self._finished(executor, answer, err, spare)
                continue
            loop = answer.get_loop()
            work.add_done_callback(lambda work, executor=executor, answer=answer, spare=spare:
                                   loop.call_soon_threadsafe(self._done, executor, answer,
                                                             work, spare))

    def _take(self, spare: bool, count: int) -> None:
        if spare:
            self.spare += count
        else:
            self.free += count

    def _done(self, executor, answer, work, spare: bool) -> None:
        """A worker's answer arrived (in the event loop): hand it on, unless abandoned."""
        error = work.exception()
        if not answer.done():
            if error is None:
                answer.set_result(work.result())
            elif not isinstance(error, BrokenProcessPool):
                answer.set_exception(error)
        self._finished(executor, answer, error, spare)

    def _finished(self, executor, answer, error, spare: bool) -> None:
        """A worker is free again; if the pool broke, start another."""
        self._take(spare, 1)
        if isinstance(error, BrokenProcessPool):
            if not answer.done():
                answer.set_exception(Overdue(f"a worker process stopped ({error}); the "
                                             "workers were started again: send it again"))
            if executor is self._executor:
                executor.shutdown(wait=False, cancel_futures=True)
                self._executor = self._pool()
        self._dispatch()

    def close(self) -> None:
        """Stop the worker processes (after the calls they are running)."""
        while self.admission:
            answer = self.admission.pop()[0]
            answer.cancel()
        self._executor.shutdown(wait=True, cancel_futures=True)
