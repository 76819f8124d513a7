"""Event-store benchmark: append throughput and latency under concurrency, and context read time.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test .venv/bin/python benchmarks/event_store.py
    .venv/bin/python benchmarks/event_store.py        # SQLite file var/bench.sqlite3

Migrates the target database, creates its own throw-away sessions and deletes them again through
delete_session. Runs with DEBUG off so Django does not record every query during the timings.
Prints Markdown tables (docs/benchmarks.md keeps the recorded results).
"""

from __future__ import annotations

import json
import os
import platform
import secrets
import sqlite3
import statistics
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sessions_app.models import AgentSession

BASE_DIR = Path(__file__).resolve().parent.parent

SINGLE_WRITER_APPENDS = 500
CONCURRENT_WRITERS = 8
APPENDS_PER_WRITER = 200
CONTEXT_SESSION_EVENTS = 500
CONTEXT_READS = 20

# About 1 KB, the size of a typical tool_result.
TOOL_RESULT = {
    "tool_name": "fetch_data",
    "call_id": "toolu_01",
    "success": True,
    "result": "Workout history, last 14 days:\n" + "- 2026-03-01 Push day: bench 4x8 @ 60 kg\n" * 22,
}
# One turn's worth of events, repeated to fill the context-read session (sizes roughly as in real turns).
TURN: list[tuple[str, dict[str, Any]]] = [
    ("user_message", {"message": "Plan a 40 minute upper-body session with dumbbells."}),
    ("knowledge", {"source": "workout_history", "params": {"days_back": 14}, "data": "x" * 1500}),
    ("llm_request", {"model": "claude-haiku-4-5", "prompt": "p" * 4000, "estimated_tokens": 1000}),
    (
        "llm_response",
        {
            "raw_response": {"content": "r" * 1500},
            "tokens": {"prompt": 900, "completion": 250, "cached": 3000, "cache_write": 0, "total": 4150},
            "cost_cents": 0.21,
        },
    ),
    ("tool_call", {"tool_name": "generate_workout", "arguments": {"minutes": 40}, "call_id": "toolu_02"}),
    ("tool_result", TOOL_RESULT),
    (
        "artifact",
        {"artifact_id": "art_1", "type": "workout", "title": "Upper body", "payload": {"x": "y" * 800}},
    ),
]


@dataclass
class AppendResult:
    scenario: str
    appends: int
    wall_seconds: float
    latencies_ms: list[float]


def setup_django() -> None:
    sys.path.insert(0, str(BASE_DIR))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["DEBUG"] = "0"  # production-like: no query log in the timings
    os.environ.setdefault(
        "SECRET_KEY", secrets.token_urlsafe(50)
    )  # settings refuse the dev key without DEBUG
    if not os.environ.get("DATABASE_URL"):
        (BASE_DIR / "var").mkdir(exist_ok=True)
        os.environ["DATABASE_URL"] = f"sqlite:///{BASE_DIR / 'var' / 'bench.sqlite3'}"

    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def run_writers(scenario: str, sessions: list[AgentSession], appends_each: int) -> AppendResult:
    """One thread per session in `sessions` (the same session may repeat), each appending `appends_each`."""
    from django.db import connection

    from sessions_app.services import append_event

    start = threading.Barrier(len(sessions) + 1)
    latencies: list[list[float]] = [[] for _ in sessions]
    errors: list[BaseException] = []

    def write(index: int, session: AgentSession) -> None:
        try:
            connection.ensure_connection()  # connecting is not part of an append
            start.wait()
            for _ in range(appends_each):
                began = time.perf_counter()
                append_event(session=session, event_type="tool_result", data=TOOL_RESULT)
                latencies[index].append((time.perf_counter() - began) * 1000)
        except BaseException as exc:
            errors.append(exc)
            raise
        finally:
            connection.close()

    threads = [threading.Thread(target=write, args=(i, s)) for i, s in enumerate(sessions)]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - began
    if errors:
        raise RuntimeError(f"{scenario}: {len(errors)} writer(s) failed, first: {errors[0]!r}")
    return AppendResult(scenario, len(sessions) * appends_each, wall, [ms for per in latencies for ms in per])


def time_context_reads(session: AgentSession) -> tuple[int, list[float]]:
    from sessions_app.selectors import context_events

    count = len(context_events(session=session))  # warm-up
    timings = []
    for _ in range(CONTEXT_READS):
        began = time.perf_counter()
        context_events(session=session)
        timings.append((time.perf_counter() - began) * 1000)
    return count, timings


def vacuum_event_tables() -> None:
    """On PostgreSQL, VACUUM ANALYZE the session tables: what autovacuum does on a production server.

    Benchmarks create sessions and delete them afterwards; on a server with autovacuum off (this machine's) the
    dead rows pile up run after run and every later run reads and indexes around them, so each run would be
    slower than the one before for reasons that have nothing to do with the code measured."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE agent_session_events, agent_sessions")


def cpu_reference_ms() -> float:
    """This process's CPU time (ms) for a fixed pure-Python workload (JSON round trips), printed with results.

    The VM this project is measured on changes speed by up to 2x from minute to minute; the same code then
    gives very different timings. Lower is faster: around 600 ms on this machine at its usual speed."""
    data = {"numbers": list(range(150)), "text": "x" * 100, "nested": {"a": [1.5, None, True]}}
    started = time.process_time()
    for _ in range(20_000):
        json.loads(json.dumps(data))
    return (time.process_time() - started) * 1000


def describe_database() -> str:
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SHOW server_version")
            row = cursor.fetchone()
        return f"PostgreSQL {row[0] if row else '?'}"
    settings: dict[str, Any] = connection.settings_dict
    return f"SQLite {sqlite3.sqlite_version} ({Path(settings['NAME']).name})"


def main() -> None:
    setup_django()
    import django
    from django.db import connection

    from sessions_app.services import append_event, create_session, delete_session

    user_id = uuid.uuid4()
    created: list[AgentSession] = []

    def new_session() -> AgentSession:
        session = create_session(user_id=user_id, metadata={"benchmark": "event_store"})
        created.append(session)
        return session

    try:
        shared = new_session()
        results = [
            run_writers("1 writer, 1 session", [new_session()], SINGLE_WRITER_APPENDS),
            run_writers(
                f"{CONCURRENT_WRITERS} writers, 1 shared session",
                [shared] * CONCURRENT_WRITERS,
                APPENDS_PER_WRITER,
            ),
            run_writers(
                f"{CONCURRENT_WRITERS} writers, 1 session each",
                [new_session() for _ in range(CONCURRENT_WRITERS)],
                APPENDS_PER_WRITER,
            ),
        ]
        context_session = new_session()
        for index in range(CONTEXT_SESSION_EVENTS):
            event_type, data = TURN[index % len(TURN)]
            append_event(session=context_session, event_type=event_type, data=data)
        context_count, read_ms = time_context_reads(context_session)
    finally:
        for session in created:
            delete_session(session=session)
        connection.close()

    print(
        f"database: {describe_database()}; Python {platform.python_version()}; Django {django.get_version()}"
    )
    print()
    print("| scenario | appends | wall (s) | appends/s | p50 latency (ms) | p95 latency (ms) |")
    print("|---|---:|---:|---:|---:|---:|")
    for result in results:
        print(
            f"| {result.scenario} | {result.appends} | {result.wall_seconds:.2f} "
            f"| {result.appends / result.wall_seconds:.0f} "
            f"| {statistics.median(result.latencies_ms):.2f} | {percentile(result.latencies_ms, 0.95):.2f} |"
        )
    print()
    print("| read | events returned | median (ms) | p95 (ms) |")
    print("|---|---:|---:|---:|")
    print(
        f"| context_events of a {CONTEXT_SESSION_EVENTS}-event session ({CONTEXT_READS} reads) "
        f"| {context_count} | {statistics.median(read_ms):.2f} | {percentile(read_ms, 0.95):.2f} |"
    )


if __name__ == "__main__":
    main()
