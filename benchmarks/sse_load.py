"""Load benchmark across processes: many concurrent `POST /agent/stream` (or `/agent/chat`) turns against W
daphne processes and K `manage.py worker --threads T` processes.

    DATABASE_URL=postgres://postgres@127.0.0.1:5433/postgres .venv/bin/python benchmarks/sse_load.py \\
        --web 2 --workers 2 --threads 64 --streams 500
    .venv/bin/python benchmarks/sse_load.py --sqlite --web 1 --workers 1 --threads 4 --streams 50
    DATABASE_URL=... .venv/bin/python benchmarks/sse_load.py --chat --streams 50    # /agent/chat instead
    DATABASE_URL=... .venv/bin/python benchmarks/sse_load.py --env WEB_DB_THREADS=32   # a setting of the servers
    DATABASE_URL=... .venv/bin/python benchmarks/sse_load.py --worker-nice 10          # workers at a lower priority

Every open stream needs database connections (docs/benchmarks.md): run bursts of hundreds against a PostgreSQL
server with room for them, not a shared one with `max_connections = 100`.

A scripted model (AGENT_TEST_SCRIPTS, tests/support/scripted_models.py) answers every call after `--delay`
seconds with `message_notify_user`, `message_notify_user`, `idle`: three model calls per turn, the whole real
path around them (auth, validation, admission, the task queue, a worker's claim and lease, the offline
initializer's four knowledge sources, context building, the event store, tools, followers woken by
LISTEN/NOTIFY or polling). Each stream is a different user. Streams are spread round-robin over the web
processes and all opened at once from one asyncio loop over raw sockets; every frame is read until `done` or
`error`. Meanwhile `/healthz` is probed on every web process every 100 ms (a new connection each time) and, on
PostgreSQL, the database's connection count sampled.

Reports completed streams and errors, the first frame (the "Message received" status frame of the stored
`user_message`), the first tool frame and `done` (seconds from the start of the burst, p50 / p95 / max), the
wall time, the CPU time of the web and worker processes together per turn (from /proc/<pid>/stat, before and
after the burst), the same for the PostgreSQL server when it runs on this machine (postmaster, its live and
its exited backends) and for this client, peak RSS, peak threads, the database's peak connections and the
connections opened (pg_stat_database.sessions), the `/healthz` latency, and whether every session ended
`completed` (agent_sessions). The same CPU readings over 5 idle seconds before the burst (with the same
probing) are printed as rates. `--chat` first times one
turn alone (median of 5, one after another), then the burst of concurrent chats. Prints Markdown.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import sys
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
if str(BASE_DIR) not in sys.path:
    sys.path.insert(0, str(BASE_DIR))

from benchmarks.cluster import (  # noqa: E402
    ChatResult,
    Cluster,
    HealthProbe,
    StreamResult,
    chat_turn,
    cluster,
    load_average,
    median,
    p50_p95_max,
    peak_rss_mb,
    percentile,
    postgres_cpu,
    process_cpu,
    revision,
    scripted_steps,
    stream_turn,
)

MODEL_ID = "scripted-bench"
MESSAGE = "Give me a quick workout"
IDLE_SAMPLE_S = 5.0
SOLO_CHATS = 5


async def burst(
    cluster_: Cluster, count: int, chat: bool
) -> tuple[list[StreamResult | ChatResult], float, HealthProbe]:
    """`count` turns at once, round-robin over the web processes, with the health probe running."""
    tokens = [cluster_.token() for _ in range(count)]
    ports = [web.port for web in cluster_.webs]
    probe = HealthProbe(ports=ports, cluster=cluster_)
    probing = asyncio.create_task(probe.run())
    await asyncio.sleep(0.3)  # a few probes before the burst
    body = {"message": MESSAGE, "model": MODEL_ID}
    started = time.perf_counter()
    clients: list[Coroutine[Any, Any, StreamResult | ChatResult]]
    if chat:
        clients = [chat_turn(ports[i % len(ports)], t, body) for i, t in enumerate(tokens)]
    else:
        clients = [stream_turn(ports[i % len(ports)], t, body, started) for i, t in enumerate(tokens)]
    everything: asyncio.Future[list[StreamResult | ChatResult]] = asyncio.gather(*clients)
    watchdog = asyncio.create_task(_all_workers_dead(cluster_))
    pending: list[asyncio.Future[Any]] = [everything, watchdog]
    await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
    if not everything.done():
        print("every worker process has died: the burst is abandoned", file=sys.stderr)
        everything.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await everything
        results: list[StreamResult | ChatResult] = []
    else:
        watchdog.cancel()
        results = list(everything.result())
    wall = time.perf_counter() - started
    probe.stop()
    await probing
    return results, wall, probe


async def probe_only(cluster_: Cluster, seconds: float) -> None:
    probe = HealthProbe(ports=[web.port for web in cluster_.webs], cluster=cluster_)
    probing = asyncio.create_task(probe.run())
    await asyncio.sleep(seconds)
    probe.stop()
    await probing


async def _all_workers_dead(cluster_: Cluster) -> None:
    while cluster_.dead_workers() < len(cluster_.workers):
        await asyncio.sleep(1.0)
    await asyncio.sleep(5.0)  # what the web processes still had to send


async def solo_chats(cluster_: Cluster, count: int) -> list[float]:
    """One turn alone, `count` times one after another: seconds each."""
    seconds = []
    for index in range(count):
        port = cluster_.webs[index % len(cluster_.webs)].port
        result = await chat_turn(port, cluster_.token(), {"message": MESSAGE, "model": MODEL_ID})
        if not result.ok:
            raise RuntimeError(f"solo chat failed: {result.error}")
        seconds.append(result.seconds)
    return seconds


async def warm_up(cluster_: Cluster) -> None:
    """One stream per web process: imports, first connections, the workers' first claims."""
    body = {"message": MESSAGE, "model": MODEL_ID}
    started = time.perf_counter()
    results = await asyncio.gather(
        *(stream_turn(web.port, cluster_.token(), body, started) for web in cluster_.webs)
    )
    for result in results:
        if not result.ok:
            raise RuntimeError(f"warm-up turn failed: {result.error}")


@dataclass
class Snapshot:
    """CPU seconds at one moment: each web / worker process, the PostgreSQL server, this client."""

    processes: dict[int, float]
    postgres: float | None
    client: float
    at: float

    @classmethod
    def take(cls, cluster_: Cluster, postmaster: int | None) -> Snapshot:
        return cls(
            processes=cluster_.cpu(),
            postgres=postgres_cpu(postmaster) if postmaster else None,
            client=process_cpu(),
            at=time.perf_counter(),
        )

    def since(self, before: Snapshot, pids: set[int]) -> float:
        return sum(
            self.processes[p] - before.processes[p]
            for p in self.processes
            if p in pids and p in before.processes
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--streams", type=int, default=500, help="concurrent turns (default 500)")
    parser.add_argument("--web", type=int, default=2, help="daphne processes (default 2)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--threads", type=int, default=64, help="--threads of each worker (default 64)")
    parser.add_argument(
        "--delay", type=float, default=1.0, help="seconds per scripted model call (default 1.0)"
    )
    parser.add_argument("--chat", action="store_true", help="POST /agent/chat instead of /agent/stream")
    parser.add_argument(
        "--sqlite", action="store_true", help="a SQLite file even if DATABASE_URL is PostgreSQL"
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting for the web and worker processes (e.g. WEB_DB_THREADS=32); repeatable",
    )
    parser.add_argument(
        "--worker-nice",
        type=int,
        default=0,
        metavar="N",
        help="experiment: start the workers with `nice -n N` (the web processes keep their priority)",
    )
    args = parser.parse_args()

    models = {MODEL_ID: {"delay_s": args.delay, "steps": scripted_steps()}}
    load_before = load_average()
    with cluster(
        name="load_bench",
        models=models,
        web=args.web,
        workers=args.workers,
        threads=args.threads,
        sqlite=args.sqlite,
        extra_env=dict(item.split("=", 1) for item in args.env),
        worker_nice=args.worker_nice,
    ) as running:
        print(
            f"{running.engine}: {args.web} web, {args.workers} workers x {args.threads} threads",
            file=sys.stderr,
        )
        postmaster = running.postmaster()
        max_connections = running.scalar("SHOW max_connections") if running.postgres else None
        asyncio.run(warm_up(running))
        solo = asyncio.run(solo_chats(running, SOLO_CHATS)) if args.chat else []
        # Idle, with the same /healthz probing as during the burst: what the burst's CPU is measured against.
        idle_opened = running.sessions_opened()
        idle_start = Snapshot.take(running, postmaster)
        asyncio.run(probe_only(running, IDLE_SAMPLE_S))
        idle_end = Snapshot.take(running, postmaster)
        idle_opened_rate = (
            ((running.sessions_opened() or 0) - idle_opened) / IDLE_SAMPLE_S
            if idle_opened is not None
            else None
        )
        all_pids = set(idle_end.processes)
        idle_rate = idle_end.since(idle_start, all_pids) / IDLE_SAMPLE_S
        idle_pg_rate = (
            (idle_end.postgres - idle_start.postgres) / IDLE_SAMPLE_S
            if idle_end.postgres is not None and idle_start.postgres is not None
            else None
        )
        load_burst = load_average()
        print(f"{args.streams} {'chats' if args.chat else 'streams'} ...", file=sys.stderr)
        opened_before = running.sessions_opened()
        before = Snapshot.take(running, postmaster)
        results, wall, probe = asyncio.run(burst(running, args.streams, args.chat))
        after = Snapshot.take(running, postmaster)
        opened_after = running.sessions_opened()
        opened = (
            opened_after - opened_before if opened_after is not None and opened_before is not None else None
        )
        load_after = load_average()
        web_pids = {web.pid for web in running.webs}
        worker_pids = {worker.pid for worker in running.workers}
        cpu_web = after.since(before, web_pids)
        cpu_workers = after.since(before, worker_pids)
        cpu_pg = (
            after.postgres - before.postgres
            if after.postgres is not None and before.postgres is not None
            else None
        )
        rss_web = max(peak_rss_mb(pid) for pid in web_pids)
        rss_workers = max((peak_rss_mb(w.pid) for w in running.workers if w.alive()), default=0.0)
        threads_web = max((probe.peak_threads.get(pid, 0) for pid in web_pids), default=0)
        dead = running.dead_workers()
        session_ids = [r.session_id for r in results if r.session_id]
        completed_in_db = running.count_sessions(session_ids)
        recovered = int(running.scalar("SELECT COUNT(*) FROM agent_turns WHERE attempts > 1"))
        engine = running.engine

    ok = [r for r in results if r.ok]
    errors = [r for r in results if not r.ok]
    kind = "/agent/chat" if args.chat else "/agent/stream"
    turns = args.streams  # an abandoned burst has no results: every turn counts as an error
    error_count = turns - len(ok)
    cpu_total = cpu_web + cpu_workers
    variant = ""
    if args.env:
        variant += f" ({', '.join(args.env)})"
    if args.worker_nice:
        variant += f" (experiment: workers at nice {args.worker_nice})"
    print(
        f"### {engine}: {turns} concurrent `{kind}`, {args.web} web + {args.workers} workers x "
        f"{args.threads} threads{variant}, {args.delay:g} s per model call, 3 calls per turn\n"
    )
    print(
        f"Commit {revision()}; Python {platform.python_version()}, {os.cpu_count()} CPUs"
        + (f", PostgreSQL max_connections {max_connections}" if max_connections else "")
        + f"; load average (1 / 5 / 15 min) before setup {load_before}, before the burst {load_burst}, "
        f"after {load_after}\n"
    )
    print(
        "| turns | completed | errors | sessions `completed` in DB | wall (s) | CPU web + workers (s) "
        "| CPU per turn, web + workers (ms) | PostgreSQL CPU per turn (ms) | client CPU per turn (ms) "
        "| peak RSS web / worker (MB) | peak threads per web process | peak PG connections "
        "| PG connections opened |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    pg_cell = f"{cpu_pg / turns * 1000:.0f}" if cpu_pg is not None else "–"
    print(
        f"| {turns} | {len(ok)} | {error_count} | {completed_in_db} | {wall:.1f} | {cpu_web:.1f} + "
        f"{cpu_workers:.1f} | {cpu_total / turns * 1000:.0f} | {pg_cell} "
        f"| {(after.client - before.client) / turns * 1000:.0f} | {rss_web:.0f} / {rss_workers:.0f} "
        f"| {threads_web} | {probe.peak_connections or '–'} | {opened if opened is not None else '–'} |"
    )
    print()
    print("| seconds from the start of the burst | p50 | p95 | max |")
    print("|---|---:|---:|---:|")
    if args.chat:
        chats = [r.seconds for r in ok if isinstance(r, ChatResult)]
        alone = median(solo)
        print(f"| one turn alone (median of {len(solo)}, one after another) {p50_p95_max(solo)}")
        print(f"| {turns} concurrent chats: the answer {p50_p95_max(chats)}")
        if chats:
            print(f"\np95 / one turn alone: {percentile(chats, 0.95) / alone:.2f}x (goal < 2x)")
    else:
        streams = [r for r in ok if isinstance(r, StreamResult)]
        first = [r.first_at for r in streams if r.first_at is not None]
        first_tool = [
            next(f.at for f in r.frames if f.kind == "tool_start")
            for r in streams
            if any(f.kind == "tool_start" for f in r.frames)
        ]
        done = [r.done_at for r in streams if r.done_at is not None]
        print(f"| first frame {p50_p95_max(first)}")
        print(f"| first tool frame {p50_p95_max(first_tool)}")
        print(f"| done {p50_p95_max(done)}")
        frames = sorted(len(r.frames) for r in streams)
        if frames:
            print(f"\nframes per stream: {frames[0]}-{frames[-1]}")
    print(f"\n`/healthz` during the burst (every 100 ms on each web process): {probe.summary()}")
    idle_pg = f", PostgreSQL {idle_pg_rate * 1000:.0f} ms/s" if idle_pg_rate is not None else ""
    idle_connections = (
        f", {idle_opened_rate:.0f} PostgreSQL connections opened per second"
        if idle_opened_rate is not None
        else ""
    )
    print(
        f"\nidle for {IDLE_SAMPLE_S:g} s before the burst (with the same /healthz probing): web + workers "
        f"{idle_rate * 1000:.0f} ms/s of CPU{idle_pg}{idle_connections}; turns that needed a second worker: "
        f"{recovered}; worker processes that died: {dead}"
    )
    if errors or error_count:
        print("\nerrors (first 5):")
        for result in errors[:5]:
            print(f"- {result.error}")
        print("\nlogs: $TMPDIR/load_bench-*.log")
    if probe.failures:
        print(f"\n/healthz failures (first 3): {probe.failures[:3]}")
    sys.exit(0 if not error_count and completed_in_db == turns else 1)


if __name__ == "__main__":
    main()
