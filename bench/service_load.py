"""A bounded loopback load test of `arborparse serve`: concurrent clients POST raw text for
a fixed time; throughput, latency percentiles, errors and the server's memory.

    python bench/service_load.py MODEL [--clients 32] [--seconds 30]
                                 [--results bench/service.jsonl]
    python bench/service_load.py MODEL --mixed [--documents 4] [--seconds 30]

The server runs as its own process (`arborparse serve`, its worker processes one per core);
the clients are one asyncio process (httpx) on the same machine, each sending a request and
waiting for the CoNLL-U before the next. By default each client sends one sentence of EWT
test (raw text, the sentences in turn). With ``--mixed``, the load of tracker #29: while
`--documents` clients post 250-word documents (consecutive sentences of EWT test, as raw
text), one client posts one sentence at a time; it reports the latency of the sentences
(p50, p95, p99), the documents' throughput, the errors and the machine's load average
after the run (other work on the machine shows there), first of the reference (one
worker, first come, first served, no spare worker: the service before its pool and its
admission order),
then of `arborparse serve` as it is, and the ratios. The server's resident memory (main
process) is read from /proc after a warm-up and every second after.
"""

import argparse
import asyncio
import datetime
import math
import os
import socket
import statistics
import subprocess
import sys
import time

import httpx
from common import COMMAND, ROOT, UD, append_result, files, machine

from arborparse.io import iter_conllu

DOCUMENT_WORDS = 250


def rss_mb(pid: int) -> float:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Traffic:
    """What one kind of client sent and got: latencies (s), errors, sentences parsed."""

    def __init__(self):
        self.latencies, self.errors, self.sentences = [], 0, 0

    def percentiles(self) -> dict:
        q = statistics.quantiles(self.latencies, n=100, method="inclusive")
        return {"p50": 1000 * q[49], "p95": 1000 * q[94], "p99": 1000 * q[98],
                "max": 1000 * max(self.latencies)}


async def load(url, kinds: dict, seconds: float, server_pid: int):
    """Each of `kinds` (name -> (texts, clients)) sends its texts in turn for `seconds`;
    returns ({name: Traffic}, the server's memory each second, wall seconds)."""
    traffic = {name: Traffic() for name in kinds}
    memory = []
    end = time.perf_counter() + seconds

    async def client(name, texts, k, clients):
        seen = traffic[name]
        async with httpx.AsyncClient(timeout=120) as http:
            i = k
            while time.perf_counter() < end:
                start = time.perf_counter()
                try:
                    r = await http.post(url, content=texts[i % len(texts)].encode(),
                                        params={"format": "text"},
                                        headers={"content-type": "text/plain"})
                except httpx.TransportError:
                    r = None
                seen.latencies.append(time.perf_counter() - start)
                if r is None or r.status_code != 200:
                    seen.errors += 1
                else:
                    seen.sentences += r.text.count("# sent_id")
                i += clients

    async def watch():
        while time.perf_counter() < end:
            memory.append(rss_mb(server_pid))
            await asyncio.sleep(1)

    began = time.perf_counter()
    await asyncio.gather(watch(), *(client(name, texts, k, clients)
                                    for name, (texts, clients) in kinds.items()
                                    for k in range(clients)))
    return traffic, memory, time.perf_counter() - began


def measure(command: list, kinds: dict, seconds: float):
    """Start the server `command` (given ``--port``) and load it (after a 3-second warm-up);
    returns what `load` does and the server's memory after the warm-up."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    server = subprocess.Popen([*command, "--port", str(port)], env=env)
    url = f"http://127.0.0.1:{port}/parse"
    try:
        for _ in range(1200):
            try:
                if httpx.get(url.replace("parse", "health")).status_code == 200:
                    break
            except httpx.TransportError:
                if server.poll() is not None:
                    raise RuntimeError(f"{' '.join(command)} stopped ({server.returncode})")
                time.sleep(0.1)
        asyncio.run(load(url, kinds, 3, server.pid))  # warm-up
        warm = rss_mb(server.pid)
        return *asyncio.run(load(url, kinds, seconds, server.pid)), warm
    finally:
        server.terminate()
        server.wait(30)


def documents(sentences: list) -> list[str]:
    """Consecutive sentences (raw text, words) joined into documents of at least 250
    words."""
    out, text, words = [], [], 0
    for raw, length in sentences:
        text.append(raw)
        words += length
        if words >= DOCUMENT_WORDS:
            out.append(" ".join(text) + "\n")
            text, words = [], 0
    return out


def mixed(args, sentences):
    """The mixed load against the reference and against `arborparse serve`; one row each
    and the ratios."""
    kinds = {"sentence": ([raw + "\n" for raw, _ in sentences], 1),
             "document": (documents(sentences), args.documents)}
    servers = {"reference: 1 worker, first come first served":
               [sys.executable, __file__, args.model, "--serve-reference"],
               "arborparse serve": [*COMMAND, "serve", "--model", args.model]}
    rows = {}
    for name, command in servers.items():
        traffic, memory, wall, warm = measure(command, kinds, args.seconds)
        small, big = traffic["sentence"], traffic["document"]
        rows[name] = row = {
            "benchmark": "service mixed load", "server": name, "model": args.model,
            "documents_clients": args.documents, "sentence_clients": 1, "seconds": wall,
            "sentence_requests": len(small.latencies), "sentence_latency_ms":
            small.percentiles(), "document_requests": len(big.latencies),
            "documents_per_second": len(big.latencies) / wall,
            "document_sentences_per_second": big.sentences / wall,
            "document_latency_ms": big.percentiles(), "errors": small.errors + big.errors,
            "server_rss_mb": {"after_warm_up": warm, "max": max(memory)},
            "load_average_1min": os.getloadavg()[0],
            "date": datetime.date.today().isoformat(), "machine": machine()}
        append_result(args.results, row)
    reference, ours = rows.values()
    print(f"sentences' p99: {ours['sentence_latency_ms']['p99']:.0f} ms against "
          f"{reference['sentence_latency_ms']['p99']:.0f} ms ("
          f"{reference['sentence_latency_ms']['p99'] / ours['sentence_latency_ms']['p99']:.1f}"
          f"× shorter); documents: {ours['documents_per_second']:.2f}/s against "
          f"{reference['documents_per_second']:.2f}/s ("
          f"{ours['documents_per_second'] / reference['documents_per_second']:.2f}×); errors "
          f"{ours['errors']} and {reference['errors']}")


def serve_reference(model, port):
    """The reference server: one worker, requests served in their order of arrival."""
    import uvicorn

    from arborparse.service.app import create_app

    uvicorn.run(create_app(model, workers=1, aging=math.inf, short=0), host="127.0.0.1",
                port=port, log_level="warning")


def uniform(args, sentences):
    """`--clients` clients each posting one sentence at a time; one row."""
    kinds = {"sentence": ([raw for raw, _ in sentences], args.clients)}
    traffic, memory, wall, warm = measure([*COMMAND, "serve", "--model", args.model], kinds,
                                          args.seconds)
    seen = traffic["sentence"]
    q = seen.percentiles()
    append_result(args.results, {
        "benchmark": "service load", "model": args.model, "clients": args.clients,
        "seconds": wall, "requests": len(seen.latencies), "errors": seen.errors,
        "sentences_per_second": seen.sentences / wall,
        "requests_per_second": len(seen.latencies) / wall,
        "latency_ms": {"p50": q["p50"], "p99": q["p99"], "max": q["max"]},
        "server_rss_mb": {"after_warm_up": warm, "first": memory[0], "last": memory[-1],
                          "max": max(memory)},
        "date": datetime.date.today().isoformat(), "machine": machine()})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--mixed", action="store_true",
                    help="4 clients posting 250-word documents, one posting sentences, "
                         "against the reference and against arborparse serve")
    ap.add_argument("--documents", type=int, default=4, help="--mixed: document clients")
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--results", default=str(ROOT / "bench" / "service.jsonl"))
    ap.add_argument("--serve-reference", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve_reference:
        return serve_reference(args.model, args.port)
    print(f"{' '.join(sys.argv)}\n{machine()}; UD from {UD}", flush=True)
    _, _, test = files("UD_English-EWT")
    sentences = [(c[9:], len(s)) for s in iter_conllu(test) for c in s.comments
                 if c.startswith("# text = ")]
    (mixed if args.mixed else uniform)(args, sentences)


if __name__ == "__main__":
    main()
