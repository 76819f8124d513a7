"""Latency benchmark of the worker architecture: pick-up, wake-up, and recovery after `kill -9` of a worker.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test .venv/bin/python benchmarks/latency.py
    DATABASE_URL=... .venv/bin/python benchmarks/latency.py --only recovery --lease 3 --runs 10
    DATABASE_URL=... .venv/bin/python benchmarks/latency.py --only wakeup --turns 100 --concurrency 5

Each part starts its own fresh database (see benchmarks/cluster.py), daphne processes and `manage.py worker`
processes (the command's own `--interval 1.0 --sweep 2.0`), with a scripted model (AGENT_TEST_SCRIPTS).

- **Pick-up** (enqueue → loop start): for every turn of the wake-up run, `agent_turns.started_at` (the worker's
  claim, right before the loop starts) minus `agent_turns.enqueued_at` (set in the admission transaction, so
  the admission's commit, the task row and the NOTIFY are included); and the task row's own `started_at -
  enqueued_at` (django-tasks-db: from the task's INSERT to a worker loop's claim).
- **Wake-up** (commit → frame on the wire): `--turns` streams, `--concurrency` at a time, 1 web + 1 worker; for
  every `tool_start` frame a client receives, its arrival time (`time.time()`) minus the `timestamp` of the
  `llm_response` event it follows (set just before that event's INSERT, committed with the tool call the frame
  shows). Client, servers and database on this machine, one clock.
- **Recovery**: 2 workers; a turn whose first model call waits on a gate file; once the call is in flight its
  worker is killed with SIGKILL and the gate opened. Measured from the kill: until another worker has claimed
  the turn (`started_at` of the second attempt) and until the turn is finished (`finished_at`), with the lease
  still left at the kill (`lease_expires_at`). The stream that started the turn must still end with `done`, the
  turn with 2 attempts and status `completed`, and the session's sequence numbers without gaps. A new worker
  replaces the killed one between runs (not timed).

Prints Markdown.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
if str(BASE_DIR) not in sys.path:
    sys.path.insert(0, str(BASE_DIR))

from benchmarks.cluster import (  # noqa: E402
    Cluster,
    StreamResult,
    cluster,
    load_average,
    p50_p95_max,
    percentile,
    revision,
    scripted_steps,
    stream_turn,
)

MODEL_ID = "scripted-bench"
GATED_MODEL_ID = "scripted-gated-bench"
MESSAGE = "Give me a quick workout"


def epoch(value: Any) -> float:
    """A timestamp read from the database (PostgreSQL: aware datetime; SQLite: ISO text) as epoch seconds."""
    if isinstance(value, datetime):
        return value.timestamp()
    return datetime.fromisoformat(str(value)).timestamp()


# --- pick-up and wake-up --------------------------------------------------------------------------------


async def run_streams(running: Cluster, turns: int, concurrency: int) -> list[StreamResult]:
    gate = asyncio.Semaphore(concurrency)
    port = running.webs[0].port
    started = time.perf_counter()

    async def one() -> StreamResult:
        async with gate:
            return await stream_turn(port, running.token(), {"message": MESSAGE, "model": MODEL_ID}, started)

    return list(await asyncio.gather(*(one() for _ in range(turns))))


def wakeup_latencies(running: Cluster, results: list[StreamResult]) -> list[float]:
    """Seconds from each llm_response's timestamp to the arrival of the tool_start frame that follows it."""
    latencies: list[float] = []
    for result in results:
        if not result.ok:
            continue
        rows = running.query(
            "SELECT sequence_number, timestamp FROM agent_session_events WHERE session_id = %s "
            "AND event_type = 'llm_response' ORDER BY sequence_number",
            [running.uuid_param(result.session_id)],
        )
        responses = [(int(number), epoch(stamp)) for number, stamp in rows]
        for frame in result.frames:
            if frame.kind != "tool_start" or frame.event_id is None:
                continue
            before = [stamp for number, stamp in responses if number < frame.event_id]
            if before:
                latencies.append(frame.wall - before[-1])
    return latencies


def pickup_latencies(running: Cluster, since: float) -> tuple[list[float], list[float]]:
    """Pick-up of the turns (first attempts) and task rows enqueued after `since` (epoch seconds)."""
    turns = [
        epoch(started) - epoch(enqueued)
        for enqueued, started in running.query(
            "SELECT enqueued_at, started_at FROM agent_turns WHERE attempts = 1 AND started_at IS NOT NULL"
        )
        if epoch(enqueued) >= since
    ]
    tasks = [
        epoch(started) - epoch(enqueued)
        for enqueued, started in running.query(
            "SELECT enqueued_at, started_at FROM django_tasks_database_dbtaskresult WHERE started_at IS NOT NULL"
        )
        if epoch(enqueued) >= since
    ]
    return turns, tasks


def measure_latency(args: argparse.Namespace) -> None:
    models = {MODEL_ID: {"delay_s": args.delay, "steps": scripted_steps()}}
    load_before = load_average()
    with cluster(
        name="latency_bench", models=models, web=1, workers=1, threads=args.threads, sqlite=args.sqlite
    ) as running:
        asyncio.run(run_streams(running, 2, 2))  # warm-up (not counted)
        since = time.time()
        results = asyncio.run(run_streams(running, args.turns, args.concurrency))
        wake = wakeup_latencies(running, results)
        pick_turn, pick_task = pickup_latencies(running, since)
        engine = running.engine
    load_after = load_average()
    failed = [r.error for r in results if not r.ok]
    print(
        f"### Pick-up and wake-up latency: {engine}, 1 web + 1 worker x {args.threads} threads, "
        f"{args.turns} turns ({args.concurrency} at a time), {args.delay:g} s per model call\n"
    )
    print(
        f"Commit {revision()}; Python {platform.python_version()}, {os.cpu_count()} CPUs; load average "
        f"(1 / 5 / 15 min) before {load_before}, after {load_after}; streams failed: {len(failed)}\n"
    )
    print("| latency (ms) | samples | p50 | p95 | max |")
    print("|---|---:|---:|---:|---:|")
    print(
        f"| pick-up: turn admitted → claimed by a worker (`agent_turns`) | {len(pick_turn)} {p50_p95_max(pick_turn, 1000, 1)}"
    )
    print(
        f"| pick-up: task row inserted → claimed (django-tasks-db) | {len(pick_task)} {p50_p95_max(pick_task, 1000, 1)}"
    )
    print(
        f"| wake-up: `llm_response` stored → its `tool_start` frame at the client | {len(wake)} {p50_p95_max(wake, 1000, 1)}"
    )
    if failed:
        print(f"\nfailed streams (first 3): {failed[:3]}")


# --- recovery ---------------------------------------------------------------------------------------------


@dataclass
class Recovery:
    lease_left: float  # seconds of lease left at the kill
    takeover: float  # kill → second worker's claim
    finished: float  # kill → turn finished
    ok: bool
    note: str = ""


async def wait_for(condition: Any, timeout: float, interval: float = 0.02) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = await asyncio.to_thread(condition)
        if value:
            return value
        await asyncio.sleep(interval)
    raise TimeoutError("condition not met in time")


async def one_recovery(running: Cluster, gate_dir: Path, lease: float) -> Recovery:
    user_id = uuid.uuid4()
    port = running.webs[0].port
    stream = asyncio.create_task(
        stream_turn(
            port, running.token(user_id), {"message": MESSAGE, "model": GATED_MODEL_ID}, time.perf_counter()
        )
    )

    def in_flight() -> tuple[str, str, Any] | None:
        rows = running.query(
            "SELECT t.id, t.worker, t.session_id FROM agent_turns t JOIN agent_sessions s ON s.id = t.session_id "
            "WHERE s.user_id = %s AND t.status = 'running' AND EXISTS (SELECT 1 FROM agent_session_events e "
            "WHERE e.session_id = t.session_id AND e.event_type = 'llm_request')",
            [running.uuid_param(user_id)],
        )
        return (str(rows[0][0]), str(rows[0][1]), rows[0][2]) if rows else None

    turn_id, worker_name, session_id = await wait_for(in_flight, 60)
    await asyncio.sleep(0.3)  # the model call is in flight (waiting on its gate)
    pid = int(worker_name.split(":")[1])
    victim = next(w for w in running.workers if w.alive() and w.pid == pid)
    victim.kill()
    killed = time.time()
    (gate_dir / f"{user_id}-1").touch()  # the call made again by the next worker answers at once
    turn_param = running.uuid_param(turn_id)
    lease_expires = running.scalar("SELECT lease_expires_at FROM agent_turns WHERE id = %s", [turn_param])

    def finished() -> Any:
        return running.scalar("SELECT finished_at FROM agent_turns WHERE id = %s", [turn_param])

    finished_at = await wait_for(finished, 6 * lease + 30)
    row = running.query(
        "SELECT started_at, attempts, status, worker FROM agent_turns WHERE id = %s", [turn_param]
    )[0]
    numbers = [
        int(r[0])
        for r in running.query(
            "SELECT sequence_number FROM agent_session_events WHERE session_id = %s ORDER BY 1", [session_id]
        )
    ]
    problems = []
    try:
        result = await asyncio.wait_for(stream, 30)
    except TimeoutError:
        result = StreamResult(error="no done frame within 30 s of the turn's end")
        rows = running.query(
            "SELECT sequence_number, event_type, timestamp FROM agent_session_events WHERE session_id = %s "
            "ORDER BY 1",
            [session_id],
        )
        print(f"the stream got no done frame; the events: {rows}", file=sys.stderr)
        print(
            f"the turn: {running.query('SELECT * FROM agent_turns WHERE id = %s', [turn_param])}",
            file=sys.stderr,
        )
    if int(row[1]) != 2:
        problems.append(f"attempts {row[1]}")
    if row[2] != "completed":
        problems.append(f"status {row[2]}")
    if str(row[3]) == worker_name:
        problems.append("same worker")
    if numbers != list(range(len(numbers))):
        problems.append("sequence gap")
    if not result.ok:
        problems.append(f"stream: {result.error}")
    return Recovery(
        lease_left=epoch(lease_expires) - killed,
        takeover=epoch(row[0]) - killed,
        finished=epoch(finished_at) - killed,
        ok=not problems,
        note=", ".join(problems),
    )


def measure_recovery(args: argparse.Namespace, lease: float) -> None:
    gate_dir = Path(os.environ.get("TMPDIR", "/tmp")) / f"latency-gates-{os.getpid()}"
    gate_dir.mkdir(parents=True, exist_ok=True)
    steps = scripted_steps()
    steps[0] = {**steps[0], "wait_for_file": str(gate_dir / "{user_id}") + "-1"}
    models = {GATED_MODEL_ID: {"delay_s": 0.0, "steps": steps}}
    load_before = load_average()
    runs: list[Recovery] = []
    try:
        with cluster(
            name="recovery_bench",
            models=models,
            web=1,
            workers=2,
            threads=args.threads,
            sqlite=args.sqlite,
            extra_env={"TURN_LEASE_SECONDS": f"{lease:g}"},
        ) as running:
            engine = running.engine
            for index in range(args.runs):
                runs.append(asyncio.run(one_recovery(running, gate_dir, lease)))
                print(f"recovery run {index + 1}: {runs[-1]}", file=sys.stderr)
                while sum(1 for w in running.workers if w.alive()) < 2:
                    running.start_worker(args.threads)
    finally:
        shutil.rmtree(gate_dir, ignore_errors=True)
    load_after = load_average()
    finished = [r.finished for r in runs]
    print(
        f"### Recovery after `kill -9` of a worker: {engine}, TURN_LEASE_SECONDS={lease:g}, 2 workers x "
        f"{args.threads} threads (`--interval 1.0 --sweep 2.0`), {len(runs)} runs\n"
    )
    print(
        f"Commit {revision()}; load average (1 / 5 / 15 min) before {load_before}, after {load_after}; "
        f"runs that ended correctly (2 attempts, `completed`, another worker, no sequence gap, the stream got "
        f"`done`): {sum(r.ok for r in runs)} / {len(runs)}\n"
    )
    print("| seconds from the kill | p50 | p95 | max |")
    print("|---|---:|---:|---:|")
    print(f"| lease left at the kill {p50_p95_max([r.lease_left for r in runs])}")
    print(f"| another worker claims the turn {p50_p95_max([r.takeover for r in runs])}")
    print(f"| the turn is finished {p50_p95_max(finished)}")
    verdict = "met" if percentile(finished, 0.95) < lease + 2 else "not met"
    print(f"\ngoal p95 < lease + 2 s = {lease + 2:g} s: {verdict}")
    problems = [r.note for r in runs if not r.ok]
    if problems:
        print(f"\nproblems: {problems}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", choices=["latency", "recovery"], help="one part only")
    parser.add_argument("--turns", type=int, default=100, help="turns of the wake-up run (default 100)")
    parser.add_argument("--concurrency", type=int, default=5, help="streams at a time (default 5)")
    parser.add_argument("--threads", type=int, default=8, help="--threads of each worker (default 8)")
    parser.add_argument("--delay", type=float, default=0.5, help="seconds per model call (default 0.5)")
    parser.add_argument("--runs", type=int, default=10, help="recovery runs per lease (default 10)")
    parser.add_argument(
        "--lease", type=float, action="append", help="TURN_LEASE_SECONDS for recovery (default: 10 and 3)"
    )
    parser.add_argument(
        "--sqlite", action="store_true", help="a SQLite file even if DATABASE_URL is PostgreSQL"
    )
    args = parser.parse_args()
    if args.only in (None, "latency"):
        measure_latency(args)
        print()
    if args.only in (None, "recovery"):
        for lease in args.lease or [10.0, 3.0]:
            measure_recovery(args, lease)
            print()


if __name__ == "__main__":
    main()
