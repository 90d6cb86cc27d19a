"""A bounded loopback load test of `arborparse serve`: concurrent clients POST raw text for
a fixed time; throughput, latency percentiles, errors and the server's memory.

    python bench/service_load.py MODEL [--clients 32] [--seconds 30]
                                 [--results bench/service.jsonl]

The server runs as its own process (one model, one worker thread parsing at a time); the
clients are one asyncio process (httpx) on the same 2-core machine, each sending one
sentence of EWT test (raw text, the sentences in turn) and waiting for the CoNLL-U. The
server's resident memory is read from /proc after a warm-up and every second after.
"""

import argparse
import asyncio
import datetime
import os
import socket
import statistics
import subprocess
import time

import httpx
from common import COMMAND, ROOT, append_result, files, machine

from arborparse.io import iter_conllu


def rss_mb(pid: int) -> float:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def load(url, texts, clients, seconds, server_pid):
    latencies, errors, memory, count = [], 0, [], 0
    end = time.perf_counter() + seconds

    async def client(k):
        nonlocal errors, count
        async with httpx.AsyncClient(timeout=60) as http:
            i = k
            while time.perf_counter() < end:
                start = time.perf_counter()
                r = await http.post(url, content=texts[i % len(texts)].encode(),
                                    params={"format": "text"},
                                    headers={"content-type": "text/plain"})
                latencies.append(time.perf_counter() - start)
                if r.status_code != 200:
                    errors += 1
                else:
                    count += r.text.count("# sent_id")
                i += clients

    async def watch():
        while time.perf_counter() < end:
            memory.append(rss_mb(server_pid))
            await asyncio.sleep(1)

    began = time.perf_counter()
    await asyncio.gather(watch(), *(client(k) for k in range(clients)))
    return latencies, errors, memory, count, time.perf_counter() - began


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--results", default=str(ROOT / "bench" / "service.jsonl"))
    args = ap.parse_args()
    _, _, test = files("UD_English-EWT")
    texts = [c[9:] for s in iter_conllu(test) for c in s.comments if c.startswith("# text = ")]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    server = subprocess.Popen([*COMMAND, "serve", "--model", args.model, "--port", str(port)],
                              env=env, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/parse"
    try:
        for _ in range(600):
            try:
                if httpx.get(url.replace("parse", "health")).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        asyncio.run(load(url, texts, 4, 3, server.pid))  # warm-up
        warm = rss_mb(server.pid)
        latencies, errors, memory, sentences, wall = asyncio.run(
            load(url, texts, args.clients, args.seconds, server.pid))
    finally:
        server.terminate()
        server.wait(10)
    q = statistics.quantiles(latencies, n=100)
    append_result(args.results, {
        "benchmark": "service load", "model": args.model, "clients": args.clients,
        "seconds": wall, "requests": len(latencies), "errors": errors,
        "sentences_per_second": sentences / wall, "requests_per_second": len(latencies) / wall,
        "latency_ms": {"p50": 1000 * q[49], "p99": 1000 * q[98], "max": 1000 * max(latencies)},
        "server_rss_mb": {"after_warm_up": warm, "first": memory[0], "last": memory[-1],
                          "max": max(memory)},
        "date": datetime.date.today().isoformat(), "machine": machine()})


if __name__ == "__main__":
    main()
