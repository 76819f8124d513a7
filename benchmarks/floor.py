"""The floor: what one request costs the web process before any of our work, in CPU ms per request.

    DATABASE_URL=postgres://postgres@127.0.0.1:5433/postgres .venv/bin/python benchmarks/floor.py [--requests N]

One daphne process (DEBUG off, the project's settings and middleware, `benchmarks/cluster.py`) and no worker.
For each kind of request, N requests with `--concurrency` C at a time, each on a new connection (as the load
benchmark's clients), and the daphne process's CPU (user + system, /proc) before and after:

- `GET /healthz`: an async view that answers from the event loop (the database threads answered recently,
  one `SELECT 1` every 5 s otherwise): Django's ASGI handler, the middleware, URL resolution, a JsonResponse;
- `POST /agent/stream` without a token: refused 401 by our authentication before any database work;
- `POST /agent/stream` with a valid token (a new user each): the admission (the turn's first events, its row,
  its task row), the stream's first frame ("Message received"), then the client hangs up; no worker runs the
  turns.

CPU per request × 500 / 2 cores is what 500 simultaneous requests of that kind cost at best on this box,
before the workers take any CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import uuid
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
if str(BASE_DIR) not in sys.path:
    sys.path.insert(0, str(BASE_DIR))

from benchmarks.cluster import (  # noqa: E402
    Cluster,
    _read_head,
    _request,
    cluster,
    cpu_seconds,
    load_average,
    p50_p95_max,
    revision,
    threads_of,
)

MODEL_ID = "bench-scripted"


async def one(port: int, method: str, path: str, token: str | None, body: bytes, first_frame: bool) -> float:
    """Send the request, read the status (and the first SSE frame), hang up; the latency in seconds."""
    started = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(_request(method, path, port, token, body, "text/event-stream" if first_frame else "*/*"))
        await writer.drain()
        status, _ = await _read_head(reader)
        if first_frame:
            if status != 200:
                raise RuntimeError(f"HTTP {status}")
            await reader.readuntil(b"\n\n")  # the first frame's block ends the first chunk
        else:
            await reader.read()
        return time.perf_counter() - started
    finally:
        writer.close()


async def run_kind(running: Cluster, kind: str, requests: int, concurrency: int) -> tuple[float, list[float]]:
    port = running.webs[0].port
    semaphore = asyncio.Semaphore(concurrency)
    latencies: list[float] = []

    async def request() -> None:
        async with semaphore:
            if kind == "healthz":
                latencies.append(await one(port, "GET", "/healthz", None, b"", False))
            elif kind == "401":
                body = json.dumps({"message": "hi"}).encode()
                latencies.append(await one(port, "POST", "/agent/stream", None, body, False))
            else:
                body = json.dumps({"message": "hi", "model": MODEL_ID}).encode()
                token = running.token(uuid.uuid4())
                latencies.append(await one(port, "POST", "/agent/stream", token, body, True))

    started = time.perf_counter()
    await asyncio.gather(*(request() for _ in range(requests)))
    return time.perf_counter() - started, latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=1000, help="requests of each kind (default 1000)")
    parser.add_argument("--admissions", type=int, default=300, help="admissions (default 300)")
    parser.add_argument("--concurrency", type=int, default=50, help="requests at a time (default 50)")
    args = parser.parse_args()
    models = {MODEL_ID: {"delay_s": 1.0, "steps": [{"tool": "idle", "args": {"reason": "done"}}]}}
    with cluster(name="floor_bench", models=models, web=1, workers=0, threads=1) as running:
        pid = running.webs[0].pid
        print(f"{running.engine}; commit {revision()}; load average {load_average()}", file=sys.stderr)
        asyncio.run(run_kind(running, "healthz", 50, 10))  # warm up: imports, the database threads
        asyncio.run(run_kind(running, "admission", 10, 5))
        rows = []
        for kind, count in (
            ("healthz", args.requests),
            ("401", args.requests),
            ("admission", args.admissions),
        ):
            load = load_average()
            before = cpu_seconds(pid)
            wall, latencies = asyncio.run(run_kind(running, kind, count, args.concurrency))
            cpu_ms = (cpu_seconds(pid) - before) * 1000 / count
            rows.append(
                f"| {kind} | {count} | {args.concurrency} | {count / wall:.0f} {p50_p95_max(latencies, 1000, 1)} "
                f"**{cpu_ms:.2f}** | {cpu_ms * 500 / 2 / 1000:.2f} | {threads_of(pid)} | {load} |"
            )
        print(
            "| request | requests | at a time | requests/s | latency p50 (ms) | p95 | max "
            "| daphne CPU per request (ms) | 500 of them on 2 cores, at best (s) | threads after | load average |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for row in rows:
            print(row)


if __name__ == "__main__":
    main()
