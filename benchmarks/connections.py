"""Many turns per connection (issue 27 item 8): N concurrent streamed turns on 1 web + 1 worker process whose
threads borrow pooled PostgreSQL connections only while they use the database.

    DATABASE_URL=postgres://postgres@127.0.0.1:5441/postgres nice -n 10 .venv/bin/python benchmarks/connections.py
    ... benchmarks/connections.py --turns 100 --threads 100 --delay 2 --pool-max 16

A fresh database and the processes (benchmarks/cluster.py), a scripted model that answers each call after
`--delay` s (3 calls per turn: two notifications, then idle; the model of benchmarks/sse_load.py). The worker
runs `--threads` loops, so every turn of the burst runs at once; its pool lends at most `--pool-max`
connections (DATABASE_POOL_MAX_SIZE), the web's too. Each process names its connections (`application_name`:
bench-web, bench-worker), and a sampler counts them in `pg_stat_activity` every 0.1 s during the burst: the
peak per process (the pooled ones plus each process's LISTEN connection) is the figure.

- **Lone turn**: `--lone` streamed turns one after another (after a warm-up turn), from POST to the `done` frame.
- **Burst**: `--turns` streams at once; each one's `done` frame time from the burst's start. Goal: done p95 <=
  2x the lone turn's median, every turn `done`, and the worker's connections <= 20.

Prints Markdown (paste into docs/benchmarks.md with the command and the load average).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
if str(BASE_DIR) not in sys.path:
    sys.path.insert(0, str(BASE_DIR))

from benchmarks.cluster import (  # noqa: E402
    Cluster,
    StreamResult,
    WorkerServer,
    cluster,
    cpu_seconds,
    load_average,
    median,
    p50_p95_max,
    percentile,
    postgres_cpu,
    process_cpu,
    revision,
    scripted_steps,
    stream_turn,
)

MODEL_ID = "scripted-bench"
MESSAGE = "Give me a quick workout"
SAMPLE_EVERY_S = 0.1


def named(database_url: str, application_name: str) -> str:
    """The URL with `application_name` (dj-database-url passes query options to the driver)."""
    return f"{database_url}{'&' if '?' in database_url else '?'}application_name={application_name}"


def start_processes(running: Cluster, *, threads: int) -> None:
    """1 worker and 1 web process, each naming its connections."""
    from tests.support.live_server import DaphneServer

    worker_env = {**running.env, "DATABASE_URL": named(running.env["DATABASE_URL"], "bench-worker")}
    worker = WorkerServer(env=worker_env, log_path=running.work_dir / "worker-0.log", threads=threads).start()
    running.workers.append(worker)
    worker.wait_until_ready()
    web_env = {**running.env, "DATABASE_URL": named(running.env["DATABASE_URL"], "bench-web")}
    running.webs.append(DaphneServer(env=web_env, log_path=running.work_dir / "web-0.log").start())


class ConnectionSampler:
    """Counts this database's connections per `application_name` in pg_stat_activity, keeping the peaks."""

    def __init__(self, running: Cluster) -> None:
        self.running = running
        self.peaks: dict[str, int] = defaultdict(int)
        self.peak_total = 0
        self.samples = 0
        self.stopped = False

    async def run(self) -> None:
        while not self.stopped:
            rows = await asyncio.to_thread(
                self.running.query,
                "SELECT application_name, count(*) FROM pg_stat_activity WHERE datname = %s"
                " AND pid <> pg_backend_pid() GROUP BY application_name",
                [self.running.database.name],
            )
            total = 0
            for name, count in rows:
                self.peaks[str(name or "-")] = max(self.peaks[str(name or "-")], int(count))
                if str(name).startswith("bench-"):
                    total += int(count)
            self.peak_total = max(self.peak_total, total)
            self.samples += 1
            await asyncio.sleep(SAMPLE_EVERY_S)


async def one_stream(running: Cluster) -> StreamResult:
    started = time.perf_counter()
    body = {"message": MESSAGE, "model": MODEL_ID}
    return await stream_turn(running.webs[0].port, running.token(), body, started)


async def lone_turns(running: Cluster, count: int) -> list[float]:
    seconds = []
    for _ in range(count):
        result = await one_stream(running)
        if not result.ok or result.done_at is None:
            raise RuntimeError(f"lone turn failed: {result.error}")
        seconds.append(result.done_at)
    return seconds


def cpu_now(running: Cluster, postmaster: int | None) -> dict[str, float]:
    """CPU seconds so far of the web, the worker, this benchmark (the clients and the scripted model's
    HTTP-free provider run in the worker; the clients here) and the PostgreSQL server."""
    found = {
        "web": cpu_seconds(running.webs[0].pid),
        "worker": cpu_seconds(running.workers[0].pid),
        "clients": process_cpu(),
    }
    if postmaster:
        found["postgres"] = postgres_cpu(postmaster)
    return found


async def burst(running: Cluster, count: int) -> tuple[list[StreamResult], float, ConnectionSampler]:
    sampler = ConnectionSampler(running)
    sampling = asyncio.create_task(sampler.run())
    body = {"message": MESSAGE, "model": MODEL_ID}
    tokens = [running.token() for _ in range(count)]
    started = time.perf_counter()
    results = await asyncio.gather(*(stream_turn(running.webs[0].port, t, body, started) for t in tokens))
    wall = time.perf_counter() - started
    sampler.stopped = True
    await sampling
    return list(results), wall, sampler


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=100, help="concurrent streamed turns (default 100)")
    parser.add_argument("--threads", type=int, default=100, help="--threads of the worker (default 100)")
    parser.add_argument(
        "--delay", type=float, default=2.0, help="seconds per scripted model call (default 2)"
    )
    parser.add_argument("--pool-max", type=int, default=16, help="DATABASE_POOL_MAX_SIZE (default 16)")
    parser.add_argument(
        "--lone", type=int, default=3, help="lone turns measured before the burst (default 3)"
    )
    args = parser.parse_args()

    models: dict[str, Any] = {MODEL_ID: {"delay_s": args.delay, "steps": scripted_steps()}}
    load_before = load_average()
    with cluster(
        name="connections_bench",
        models=models,
        web=0,
        workers=0,
        threads=args.threads,
        extra_env={"DATABASE_POOL_MAX_SIZE": str(args.pool_max)},
    ) as running:
        if not running.postgres:
            raise SystemExit("benchmarks/connections.py needs DATABASE_URL on PostgreSQL")
        start_processes(running, threads=args.threads)
        max_connections = running.scalar("SHOW max_connections")
        print(f"{running.engine}: 1 web, 1 worker x {args.threads} threads", file=sys.stderr)
        asyncio.run(lone_turns(running, 1))  # warm-up: imports, first connections
        lone = asyncio.run(lone_turns(running, args.lone))
        print(f"{args.turns} streams ...", file=sys.stderr)
        postmaster = running.postmaster()
        cpu_before = cpu_now(running, postmaster)
        results, wall, sampler = asyncio.run(burst(running, args.turns))
        cpu_after = cpu_now(running, postmaster)
        load_after = load_average()
        completed = running.count_sessions([r.session_id for r in results if r.session_id])
        recovered = int(running.scalar("SELECT COUNT(*) FROM agent_turns WHERE attempts > 1"))
        worker_log = running.workers[0].log_tail(400)

    ok = [r for r in results if r.ok]
    done = [r.done_at for r in ok if r.done_at is not None]
    first = [r.first_at for r in ok if r.first_at is not None]
    lone_median = median(lone)
    p95 = percentile(done, 0.95)
    too_many = worker_log.count("too many clients")
    pool_timeouts = worker_log.count("PoolTimeout")
    print(
        f"### PostgreSQL: {args.turns} concurrent `/agent/stream`, 1 web + 1 worker x {args.threads} threads, "
        f"pool max {args.pool_max} per process, {args.delay:g} s per model call, 3 calls per turn\n"
    )
    print(
        f"Commit {revision()}; Python {platform.python_version()}, {os.cpu_count()} CPUs, PostgreSQL "
        f"max_connections {max_connections}; load average {load_before} before, {load_after} after.\n"
    )
    print("| | p50 | p95 | max |")
    print("|---|---|---|---|")
    print(f"| lone turn, done (s, {len(lone)} runs) {p50_p95_max(lone)}")
    print(f"| burst: first frame (s) {p50_p95_max(first)}")
    print(f"| burst: done (s) {p50_p95_max(done)}")
    print()
    worker_peak = sampler.peaks.get("bench-worker", 0)
    web_peak = sampler.peaks.get("bench-web", 0)
    print(
        f"- {len(ok)}/{args.turns} streams ended `done` ({completed} sessions completed in the database, "
        f"{recovered} turns recovered by another attempt), burst wall {wall:.1f} s.\n"
        f"- done p95 / lone median: {p95 / lone_median:.2f} (goal <= 2).\n"
        f"- Peak connections in pg_stat_activity ({sampler.samples} samples, every {SAMPLE_EVERY_S:g} s): "
        f"worker {worker_peak}, web {web_peak}, both at once {sampler.peak_total} (goal: worker <= 20).\n"
        f"- Worker log: {too_many} 'too many clients', {pool_timeouts} pool timeouts."
    )
    per_turn = ", ".join(
        f"{name} {1000 * (cpu_after[name] - cpu_before[name]) / args.turns:.0f}" for name in cpu_after
    )
    print(f"- CPU per turn during the burst (ms): {per_turn}.")
    other = {k: v for k, v in sampler.peaks.items() if not k.startswith("bench-")}
    if other:
        print(f"- Other connections to the database (peaks): {dict(other)}.")
    failures = [r.error for r in results if not r.ok][:5]
    if failures:
        print(f"- First failures: {failures}")


if __name__ == "__main__":
    main()
