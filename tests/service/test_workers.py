"""The service's concurrency: the admission order (cheapest first, aged), the worker pool
(order, the spare worker for short requests, timeout, a worker that dies), and the app
under load: /health answered while every worker is busy, a request over the timeout gets
503 and leaves nothing queued, concurrent requests get the trees of sequential parsing.
Workers are held busy by a shared event (a multiprocessing manager's), never by a time;
every pool is closed by its test."""

import asyncio
import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from multiprocessing import Manager

import pytest
from starlette.testclient import TestClient

import arborparse
from arborparse.io import iter_conllu
from arborparse.service.app import create_app
from arborparse.service.workers import Admission, Overdue, Workers


@pytest.fixture(scope="module")
def manager():
    with Manager() as manager:
        yield manager


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_admission_takes_the_cheapest_first_and_ages_the_rest():
    clock = Clock()
    queue = Admission(aging=1000, clock=clock)
    queue.push(250, "big 1")
    queue.push(250, "big 2")
    clock.now = 0.1  # 0.1 s later: a sentence goes ahead of both documents
    queue.push(15, "small")
    assert [queue.pop() for _ in range(3)] == ["small", "big 1", "big 2"]
    queue.push(5000, "huge")
    clock.now += 5.1  # what comes more than 5,000 / 1,000 s later waits behind it
    queue.push(1, "late")
    assert [queue.pop() for _ in range(2)] == ["huge", "late"]


def test_admission_gives_the_first_short_request_apart():
    queue = Admission(short=50)
    queue.push(250, "big")
    queue.push(50, "sentence")
    assert queue.waiting(short=True) and queue.pop(short=True) == "sentence"
    assert not queue.waiting(short=True) and queue.waiting()
    assert queue.pop() == "big" and not queue.waiting()


def test_admission_removes_an_entry_once():
    queue = Admission(clock=lambda: 0.0)  # the ranks by cost alone, however slow the pushes
    entries = [queue.push(cost, name) for cost, name in ((3, "c"), (1, "a"), (2, "b"))]
    assert queue.remove(entries[1]) and not queue.remove(entries[1])
    assert len(queue) == 2 and [queue.pop(), queue.pop()] == ["b", "c"]
    with pytest.raises(ValueError, match="aging=0"):
        Admission(aging=0)


@asynccontextmanager
async def held(*args, gate, **kwargs):
    """Started `Workers(*args, **kwargs)` whose one worker is kept busy until `gate` is set
    (the busy call's task beside them), closed after."""
    workers = Workers(*args, **kwargs)
    try:
        await workers.start()
        busy = asyncio.ensure_future(workers.run(0, gate.wait))
        await until(lambda: workers.free == 0)
        yield workers, busy
    finally:
        workers.close()


async def until(condition):
    while not condition():
        await asyncio.sleep(0.01)


def test_a_small_request_goes_to_the_worker_before_queued_big_ones(manager):
    gate, done = manager.Event(), manager.list()

    async def scenario():
        async with held(1, short=0, gate=gate) as (workers, busy):
            calls = [asyncio.ensure_future(workers.run(cost, done.append, name))
                     for cost, name in ((250, "big 1"), (250, "big 2"), (15, "small"))]
            await until(lambda: len(workers.admission) == 3)
            gate.set()
            await asyncio.gather(busy, *calls)

    asyncio.run(scenario())
    assert list(done) == ["small", "big 1", "big 2"]


def test_the_spare_worker_takes_a_short_request_while_the_others_are_busy(manager):
    gate, done = manager.Event(), manager.list()

    async def scenario():
        async with held(1, short=50, gate=gate) as (workers, busy):
            big = asyncio.ensure_future(workers.run(250, done.append, "big"))
            await workers.run(50, done.append, "sentence")
            assert list(done) == ["sentence"] and len(workers.admission) == 1
            gate.set()
            await asyncio.gather(busy, big)

    asyncio.run(scenario())
    assert list(done) == ["sentence", "big"]


def test_a_request_over_the_timeout_is_abandoned_and_the_pool_goes_on(manager):
    gate = manager.Event()

    async def scenario():
        async with held(1, timeout=1, gate=gate) as (workers, busy):
            with pytest.raises(Overdue, match=r"not answered within the timeout \(1 s\): "
                                              "the service is overloaded"):
                await workers.run(100, os.getpid)  # too long for the spare worker
            assert len(workers.admission) == 0
            # the busy one too, but its worker finishes it
            with pytest.raises(Overdue, match=r"within the timeout \(1 s\): a worker was "
                                              "still computing it; send it again later if"):
                await busy
            assert workers.free == 0
            gate.set()
            assert await workers.run(1, int, "7") == 7

    asyncio.run(scenario())


def test_a_worker_that_dies_fails_its_request_and_is_replaced():
    async def scenario():
        workers = Workers(1)
        try:
            with pytest.raises(Overdue, match="a worker process stopped"):
                await workers.run(1, os._exit, 3)
            assert await workers.run(1, int, "7") == 7 and workers.free == 1
        finally:
            workers.close()

    asyncio.run(scenario())


def test_a_worker_leaves_ctrl_c_to_the_service():
    """A terminal's Ctrl-C reaches every process of `arborparse serve`: a worker goes on
    (the service stops it when it stops) instead of printing its traceback."""
    async def scenario():
        workers = Workers(1, short=0)
        try:
            pid = await workers.run(1, os.getpid)
            await workers.run(1, os.kill, pid, signal.SIGINT)
            assert await workers.run(1, os.getpid) == pid
        finally:
            workers.close()

    asyncio.run(scenario())


@pytest.mark.parametrize("processes,timeout,message", [
    (0, 1, "processes=0: at least 1"), (1, 0, "timeout=0: the seconds must be positive")])
def test_workers_refuse_impossible_settings(processes, timeout, message):
    with pytest.raises(ValueError, match=message):
        Workers(processes, timeout=timeout)


@pytest.fixture(scope="module")
def parser(english_pipeline):
    return arborparse.load(english_pipeline)


def test_health_answers_while_every_worker_is_busy_and_a_late_request_gets_503(
        english_pipeline, manager):
    gate = manager.Event()
    with TestClient(create_app(english_pipeline, workers=1, timeout=1)) as client:
        workers = client.app.state.workers
        held = client.portal.start_task_soon(workers.run, 0, gate.wait)
        while workers.free:
            time.sleep(0.01)
        health = client.get("/health")
        assert health.status_code == 200 and health.json()["status"] == "ok"
        assert workers.free == 0  # answered while the worker was still busy
        r = client.post("/parse", content="The dog barks. " * 20)  # 60 words: no spare
        assert r.status_code == 503
        assert r.json()["error"].startswith("not answered within the timeout (1 s)")
        assert len(workers.admission) == 0
        gate.set()
        assert isinstance(held.exception(), Overdue)
        while not workers.free:  # the worker finished the abandoned call and is free again
            time.sleep(0.01)


def test_concurrent_requests_get_the_trees_of_sequential_parsing(english_pipeline, parser,
                                                                 ud):
    sentences = [s for s, _ in zip(iter_conllu(ud / "UD_English-EWT" /
                                               "en_ewt-ud-test.conllu"), range(40))]
    lines = [c[9:] for s in sentences for c in s.comments if c.startswith("# text = ")]
    texts = [" ".join(lines[i:i + n]) + "\n" for i, n in zip(range(0, 40, 5), (5, 1, 4, 2,
                                                                                 1, 3, 5, 1))]
    expected = ["".join(s.to_text() for s in parser.parse_text(text)) for text in texts]
    with TestClient(create_app(english_pipeline, workers=2)) as client, \
            ThreadPoolExecutor(len(texts)) as threads:
        answers = list(threads.map(lambda text: client.post(
            "/parse", content=text, params={"format": "text"}), texts))
    assert [r.status_code for r in answers] == [200] * len(texts)
    assert [r.text for r in answers] == expected
