"""Agent-loop benchmark: framework overhead per iteration (everything but the model call) and queries.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test .venv/bin/python benchmarks/loop.py [--runs N]
    .venv/bin/python benchmarks/loop.py        # SQLite file var/bench.sqlite3
    DATABASE_URL=... .venv/bin/python benchmarks/loop.py --profile 500   # cProfile of the iterations
    DATABASE_URL=... .venv/bin/python benchmarks/loop.py --tracing --runs 4 --sizes 10,500  # tracing off / on

A zero-latency ScriptedProvider plays `message_notify_user` (or `--tool NAME --tool-arguments JSON`) three times,
then `idle`, for each turn. Turns run
through `trainer_agent.turns.run_turn` (admission, then `execute_turn`: the worker's claim, lease and loop) on
the ImmediateBackend, in this process. Every turn runs in a fresh session whose history (10, 100, 500 or 5,000
events of realistic turns: user messages,
knowledge, LLM request/response, tool calls and results, artifacts) is bulk-inserted first. The time between
the model returning and the model being called again is one iteration of framework work: record the response
and the tool call, run the tool, record its result and the stream frames, rebuild the context from the
database (events and fresh user data) and record the next request. Queries are counted for the same
intervals in a second pass (query capture slows the code, so it is kept out of the timings): every statement
Django logs, of which transaction control (BEGIN, COMMIT, SAVEPOINT, RELEASE), and the commits.

`--runs N` repeats the whole measurement N times (sessions deleted and tables vacuumed between runs) and pools
every run's samples in the table, listing each run's median too: this VM's speed swings from minute to
minute, so one run's median says as much about the machine as about the code.

`--metrics-overhead` measures the cost of the Prometheus metrics (trainer_agent/metrics.py) instead: each run
measures every size with the metrics on and with them off (their functions replaced by no-ops; the order
alternates between runs), and the table
compares the two; the metrics are written in multiprocess mode, as `make run` and a deployment write them
(a temporary PROMETHEUS_MULTIPROC_DIR unless one is set):

    .venv/bin/python benchmarks/loop.py --metrics-overhead --runs 3 --sizes 10,500

`--against CHECKOUT` is an A/B in one run: each run measures the code of CHECKOUT (A, e.g. a worktree of main)
and this checkout's (B) in turn, A first in even runs and B first in odd ones, each in a process of its own
(this harness, with the other checkout's code first on sys.path) on its own database (`--against-database`, A;
DATABASE_URL, B), and the table sets them side by side:

    DATABASE_ASSUME_ROLE=trainer_app DATABASE_URL=postgres://…/b .venv/bin/python benchmarks/loop.py \
        --against ../main --against-database postgres://…/a --runs 3

Round trips are the statements this process sends to the server in the interval: the logged ones plus what
Django does not log, such as row-level security's `set_config` and the pool's check of a connection it lends. `--statements EVENTS` prints the statements of one iteration at that history size.

Migrates the target database, creates the demo user's data if missing, and deletes its sessions afterwards.
Prints Markdown tables (docs/benchmarks.md keeps the recorded results).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

BASE_DIR = Path(__file__).resolve().parent.parent
# --against runs this harness on another checkout's code: that checkout first on sys.path.
CODE_DIR = Path(os.environ.get("LOOP_CODE_DIR") or BASE_DIR).resolve()
if str(CODE_DIR) not in sys.path:
    sys.path.insert(0, str(CODE_DIR))

from benchmarks.cluster import revision  # noqa: E402
from benchmarks.event_store import (  # noqa: E402
    cpu_reference_ms,
    describe_database,
    percentile,
    setup_django,
    vacuum_event_tables,
)

if TYPE_CHECKING:
    from sessions_app.models import AgentSession
    from trainer_agent.llm.types import LLMRequest, LLMResponse

HISTORY_SIZES = (10, 100, 500, 5000)
TRANSACTION_CONTROL = ("BEGIN", "COMMIT", "SAVEPOINT", "RELEASE", "ROLLBACK")
# Row-level security's settings, sent in front of a transaction's first statement (trainer_agent/tenancy.py):
# Django logs them with it.
TENANT_PREFIX = re.compile(r"^SELECT set_config\('app\.user_id'[^;]*; ")


def statement_of(sql: str) -> str:
    """The logged SQL without the tenant's settings in front of it."""
    return TENANT_PREFIX.sub("", sql, count=1)


TURNS_PER_SIZE = 20
NOTIFIES_PER_TURN = 3  # then idle: 4 model calls, 3 measured intervals per turn
MODEL = "claude-haiku-4-5"


@dataclass
class Boundaries:
    """Clock readings (wall and this process's CPU) and query counts when each model call started and returned."""

    started: list[float] = field(default_factory=list)
    returned: list[float] = field(default_factory=list)
    cpu_started: list[float] = field(default_factory=list)
    cpu_returned: list[float] = field(default_factory=list)
    queries_at_start: list[int] = field(default_factory=list)
    queries_at_return: list[int] = field(default_factory=list)
    trips_at_start: list[int] = field(default_factory=list)
    trips_at_return: list[int] = field(default_factory=list)

    def intervals_ms(self) -> list[float]:
        return [(s - r) * 1000 for r, s in zip(self.returned, self.started[1:], strict=False)]

    def cpu_ms(self) -> list[float]:
        return [(s - r) * 1000 for r, s in zip(self.cpu_returned, self.cpu_started[1:], strict=False)]

    def query_counts(self) -> list[int]:
        return [s - r for r, s in zip(self.queries_at_return, self.queries_at_start[1:], strict=False)]

    def round_trips(self) -> list[int]:
        return [s - r for r, s in zip(self.trips_at_return, self.trips_at_start[1:], strict=False)]

    def statements(self, log: list[dict[str, Any]]) -> list[list[str]]:
        """The SQL of each interval, from the captured query log."""
        return [
            [str(entry["sql"]) for entry in log[r:s]]
            for r, s in zip(self.queries_at_return, self.queries_at_start[1:], strict=False)
        ]


class ClockedProvider:
    """Wraps a provider and notes when each call starts and returns (and how many queries ran so far)."""

    def __init__(
        self,
        inner: Any,
        boundaries: Boundaries,
        query_count: Callable[[], int],
        trip_count: Callable[[], int] = lambda: 0,
    ) -> None:
        self.inner = inner
        self.boundaries = boundaries
        self.query_count = query_count
        self.trip_count = trip_count

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.boundaries.queries_at_start.append(self.query_count())
        self.boundaries.trips_at_start.append(self.trip_count())
        self.boundaries.cpu_started.append(time.process_time())
        self.boundaries.started.append(time.perf_counter())
        response: LLMResponse = self.inner.complete(request)
        self.boundaries.returned.append(time.perf_counter())
        self.boundaries.cpu_returned.append(time.process_time())
        self.boundaries.trips_at_return.append(self.trip_count())
        self.boundaries.queries_at_return.append(self.query_count())
        return response


class RoundTrips:
    """Notes the SQL this thread sends to the database server while active (`sqls`): every statement psycopg
    executes, those Django does not log too (the tenant's `set_config`, the pool's check of a connection it
    lends), and the transaction commands it sends itself (BEGIN, COMMIT). One round trip each. PostgreSQL only
    (none on SQLite)."""

    def __init__(self) -> None:
        import threading

        self.sqls: list[str] = []
        self.thread = threading.get_ident()
        self.saved: list[tuple[Any, str, Any]] = []

    def current(self) -> int:
        return len(self.sqls)

    def __enter__(self) -> RoundTrips:
        import threading

        try:
            import psycopg
        except ImportError:
            return self
        sqls, thread = self.sqls, self.thread

        def noted(original: Any) -> Any:
            def send(owner: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
                if threading.get_ident() == thread:
                    sqls.append(query.decode() if isinstance(query, bytes) else str(query))
                return original(owner, query, *args, **kwargs)

            return send

        # Cursor.execute: every statement; Connection._exec_command: BEGIN, COMMIT, ROLLBACK.
        for owner, name in ((psycopg.Cursor, "execute"), (psycopg.Connection, "_exec_command")):
            self.saved.append((owner, name, owner.__dict__.get(name)))
            setattr(owner, name, noted(getattr(owner, name)))
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, name, original in reversed(self.saved):
            if original is None:
                delattr(owner, name)  # it was inherited
            else:
                setattr(owner, name, original)
        self.saved = []


def history_events(count: int) -> list[tuple[str, dict[str, Any]]]:
    """`count` events of repeated realistic turns (15 events each), with unique call and artifact ids."""
    events: list[tuple[str, dict[str, Any]]] = []
    turn = 0
    while len(events) < count:
        turn += 1
        exercises = [
            {
                "id": f"ex_{turn:03d}{n}",
                "order": n,
                "exercise_name": name,
                "exercise_type": "reps",
                "sets": 3,
                "reps": [10, 10, 8],
                "load_each": [20, 20, 22.5],
                "load_unit": "kg",
                "rest_sec": 90,
                "muscles_utilized": [{"muscle": "Chest", "share": 0.7}, {"muscle": "Triceps", "share": 0.3}],
                "goals_addressed": [
                    {"goal": "strength", "share": 0.6},
                    {"goal": "hypertrophy", "share": 0.4},
                ],
                "reasoning": "Main press with the dumbbells at home.",
                "equipment": ["dumbbells", "bench"],
            }
            for n, name in enumerate(("Dumbbell Bench Press", "Push-Up", "Dumbbell Fly", "Dumbbell Row"), 1)
        ]
        artifact = {
            "artifact_id": f"art_bench{turn:05d}",
            "type": "exercise_list",
            "schema_version": "1.0",
            "title": "Chest session",
            "summary": {"exercise_count": 4, "estimated_duration_min": 35},
            "auto_start": False,
            "payload": {"exercises": exercises, "title": "Chest session"},
        }
        usage = {"prompt": 900, "completion": 250, "cached": 6000, "cache_write": 300, "total": 7450}
        gen, notify, idle = (f"toolu_bench_{turn}_{n}" for n in range(3))
        events += [
            ("user_message", {"message": "Give me a 30 minute chest workout with dumbbells."}),
            (
                "knowledge",
                {
                    "source": "workout_history",
                    "params": {"days_back": 14},
                    "data": "Workout history, last 14 days:\n"
                    + "- Mon: bench 4x8 @ 60 kg, row 4x8 @ 50 kg\n" * 20,
                },
            ),
            ("llm_request", {"model": MODEL, "prompt": "p" * 2000, "estimated_tokens": 7000}),
            ("llm_response", {"raw_response": {"content": "r" * 1500}, "tokens": usage, "cost_cents": 0.2}),
            (
                "tool_call",
                {
                    "tool_name": "generate_workout",
                    "arguments": {"workout": {"exercises": exercises}},
                    "call_id": gen,
                },
            ),
            (
                "tool_result",
                {
                    "tool_name": "generate_workout",
                    "success": True,
                    "call_id": gen,
                    "result": {
                        "success": True,
                        "data": {"artifact_id": artifact["artifact_id"]},
                        "formatted": '<tool_result name="generate_workout">\nCreated workout '
                        + "x" * 600
                        + "\n</tool_result>",
                    },
                },
            ),
            ("artifact", artifact),
            ("llm_request", {"model": MODEL, "prompt": "p" * 2000, "estimated_tokens": 7400}),
            ("llm_response", {"raw_response": {"content": "r" * 400}, "tokens": usage, "cost_cents": 0.1}),
            (
                "tool_call",
                {
                    "tool_name": "message_notify_user",
                    "arguments": {"message": "Here it is.", "artifact_id": artifact["artifact_id"]},
                    "call_id": notify,
                },
            ),
            (
                "tool_result",
                {
                    "tool_name": "message_notify_user",
                    "success": True,
                    "call_id": notify,
                    "result": {
                        "success": True,
                        "data": {"message": "Here it is."},
                        "formatted": '<tool_result name="message_notify_user">\nok\n</tool_result>',
                    },
                },
            ),
            ("llm_request", {"model": MODEL, "prompt": "p" * 2000, "estimated_tokens": 7500}),
            ("llm_response", {"raw_response": {"content": "r" * 300}, "tokens": usage, "cost_cents": 0.1}),
            ("tool_call", {"tool_name": "idle", "arguments": {"reason": "done"}, "call_id": idle}),
            (
                "tool_result",
                {
                    "tool_name": "idle",
                    "success": True,
                    "call_id": idle,
                    "result": {
                        "success": True,
                        "data": {"idle": True},
                        "formatted": '<tool_result name="idle">\nidle: done\n</tool_result>',
                    },
                },
            ),
        ]
    return events[:count]


def session_with_history(user_id: uuid.UUID, count: int) -> AgentSession:
    from sessions_app.models import AgentSessionEvent
    from sessions_app.services import create_session

    session = create_session(user_id=user_id, metadata={"benchmark": "loop"})
    AgentSessionEvent.objects.bulk_create(
        AgentSessionEvent(session=session, sequence_number=n, event_type=kind, data=data)
        for n, (kind, data) in enumerate(history_events(count))
    )
    return session


# The tool each measured iteration runs (`--tool`, `--tool-arguments`): by default `message_notify_user`.
SCRIPTED_TOOL: tuple[str, dict[str, Any]] | None = None


def scripted_turn_provider() -> Any:
    from trainer_agent.llm.scripted import ScriptedProvider, tool_response

    steps = [
        tool_response(*SCRIPTED_TOOL)
        if SCRIPTED_TOOL is not None
        else tool_response("message_notify_user", {"message": f"Update {n}."})
        for n in range(NOTIFIES_PER_TURN)
    ]
    return ScriptedProvider([*steps, tool_response("idle", {"reason": "done"})])


@dataclass
class Statements:
    """Per interval: all logged statements, the transaction-control ones, the commits."""

    total: list[int] = field(default_factory=list)
    control: list[int] = field(default_factory=list)
    commits: list[int] = field(default_factory=list)
    round_trips: list[int] = field(default_factory=list)

    def add(self, intervals: list[list[str]], round_trips: list[int]) -> None:
        for sqls in intervals:
            self.total.append(len(sqls))
            statements = [statement_of(sql) for sql in sqls]
            self.control.append(
                sum(1 for sql in statements if sql.split(" ", 1)[0].upper() in TRANSACTION_CONTROL)
            )
            self.commits.append(sum(1 for sql in statements if sql.upper().startswith("COMMIT")))
        self.round_trips += round_trips


def spread(values: list[int]) -> str:
    return f"{min(values)}" if min(values) == max(values) else f"{min(values)}-{max(values)}"


def run_turns(
    user_id: uuid.UUID, history: int, *, count_queries: bool, created: list[AgentSession]
) -> tuple[list[float], list[float], Statements]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from trainer_agent.llm.providers import override_provider
    from trainer_agent.turns import run_turn

    intervals: list[float] = []
    cpu: list[float] = []
    queries = Statements()
    turns = TURNS_PER_SIZE if not count_queries else 2
    for _ in range(turns):
        session = session_with_history(user_id, history)
        created.append(session)
        boundaries = Boundaries()
        capture = CaptureQueriesContext(connection)
        trips = RoundTrips()
        # The query log only grows while a CaptureQueriesContext is active (the counting pass).
        provider = ClockedProvider(
            scripted_turn_provider(),
            boundaries,
            lambda: len(connection.queries_log),
            trips.current,
        )
        with override_provider(MODEL, provider):
            if count_queries:
                connection.queries_log.clear()  # the boundaries index this turn's statements from 0
                with capture, trips:
                    run_turn(user_id=user_id, message="hi", session=session, model=MODEL)
            else:
                run_turn(user_id=user_id, message="hi", session=session, model=MODEL)
        intervals += boundaries.intervals_ms()
        cpu += boundaries.cpu_ms()
        if count_queries:
            queries.add(boundaries.statements(list(connection.queries_log)), boundaries.round_trips())
    return intervals, cpu, queries


Row = tuple[int, list[float], list[float], Statements]  # history size, interval times, CPU times, statements


def measure(user_id: uuid.UUID, sizes: tuple[int, ...]) -> list[Row]:
    """One run: a warm-up turn, then timed turns and a query-counting pass for each history size. The run's
    sessions (with their turns and any task rows) are deleted and the tables vacuumed afterwards."""
    from trainer_agent.turns import delete_session_everywhere

    created: list[AgentSession] = []
    rows: list[Row] = []
    try:
        run_turns(user_id, 10, count_queries=False, created=created)  # warm-up
        for history in sizes:
            timings, cpu, _ = run_turns(user_id, history, count_queries=False, created=created)
            _, _, queries = run_turns(user_id, history, count_queries=True, created=created)
            rows.append((history, timings, cpu, queries))
    finally:
        for session in created:
            delete_session_everywhere(session=session)
        vacuum_event_tables()
    return rows


def profile(user_id: uuid.UUID, history: int, turns: int, top: int, *, cpu: bool = False) -> None:
    """cProfile of the measured intervals only (the profiler runs from a model answer to the next call); with
    `cpu` this process's CPU time instead of the wall clock (what the iteration costs the worker, without the
    waits for the server)."""
    import cProfile
    import pstats

    from trainer_agent.llm.providers import override_provider
    from trainer_agent.turns import delete_session_everywhere, run_turn

    profiler = cProfile.Profile(time.process_time) if cpu else cProfile.Profile()

    class Profiled:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def complete(self, request: LLMRequest) -> LLMResponse:
            profiler.disable()
            response: LLMResponse = self.inner.complete(request)
            if response.tool_calls and response.tool_calls[0].name != "idle":
                profiler.enable()  # the next interval is measured; the turn's end is not
            return response

    created = []
    try:
        for _ in range(turns):
            session = session_with_history(user_id, history)
            created.append(session)
            with override_provider(MODEL, Profiled(scripted_turn_provider())):
                run_turn(user_id=user_id, message="hi", session=session, model=MODEL)
    finally:
        profiler.disable()
        for session in created:
            delete_session_everywhere(session=session)
    stats = pstats.Stats(profiler)
    print(f"cProfile of {turns * NOTIFIES_PER_TURN} iterations at {history} events of history:")
    ours = re.escape(str(CODE_DIR)) + r"/(?!\.venv)"  # the project's own functions
    stats.sort_stats("cumulative").print_stats(ours, top)
    stats.sort_stats("tottime").print_stats(top)


METRICS_HOOKS = ("observe_event", "turn_claimed", "first_frame", "turn_finished", "subagent_failed")


def metrics_off() -> Callable[[], None]:
    """Replace the metrics' recording functions by no-ops; returns what puts them back."""
    from trainer_agent import metrics

    saved = {name: getattr(metrics, name) for name in METRICS_HOOKS}
    for name in METRICS_HOOKS:
        setattr(metrics, name, lambda *args, **kwargs: None)

    def restore() -> None:
        for name, hook in saved.items():
            setattr(metrics, name, hook)

    return restore


def metrics_overhead(user_id: uuid.UUID, sizes: tuple[int, ...], runs: int) -> None:
    """Each run: every size with the metrics on and off (on first in even runs, off first in odd ones); the table
    pools the runs."""
    from django.db import connection

    load_before = " / ".join(f"{value:.2f}" for value in os.getloadavg())
    pooled: dict[tuple[str, int], tuple[list[float], list[float]]] = {}
    try:
        for run in range(runs):
            for mode in (
                ("on", "off") if run % 2 == 0 else ("off", "on")
            ):  # the order alternates: drift cancels
                restore = metrics_off() if mode == "off" else (lambda: None)
                try:
                    for history, timings, cpu, _ in measure(user_id, sizes):
                        wall, process = pooled.setdefault((mode, history), ([], []))
                        wall += timings
                        process += cpu
                finally:
                    restore()
    finally:
        connection.close()
    load = " / ".join(f"{value:.2f}" for value in os.getloadavg())
    print(
        f"database: {describe_database()}; commit {revision()}; Python {platform.python_version()}; "
        f"PROMETHEUS_MULTIPROC_DIR set; load average before: {load_before}, after: {load}; {runs} run(s), "
        "on and off in alternating order"
    )
    print()
    print(
        "| history (events) | iterations (each) | median on / off (ms) | difference (ms) "
        "| CPU median on / off (ms) | CPU difference (ms) |"
    )
    print("|---:|---:|---|---:|---|---:|")
    for history in sizes:
        on_wall, on_cpu = pooled[("on", history)]
        off_wall, off_cpu = pooled[("off", history)]
        wall_on, wall_off = statistics.median(on_wall), statistics.median(off_wall)
        cpu_on, cpu_off = statistics.median(on_cpu), statistics.median(off_cpu)
        print(
            f"| {history} | {len(on_wall)} | {wall_on:.2f} / {wall_off:.2f} | {wall_on - wall_off:+.2f} "
            f"| {cpu_on:.2f} / {cpu_off:.2f} | {cpu_on - cpu_off:+.2f} |"
        )


def otlp_sink() -> tuple[Any, str]:
    """A local OTLP/HTTP receiver that accepts and discards spans (a server thread); returns it and its URL."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Sink(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}"


def compare_tracing(user_id: uuid.UUID, sizes: tuple[int, ...], runs: int) -> None:
    """The loop with tracing off and on (spans batched and exported over OTLP/HTTP to a local sink, as
    OTEL_EXPORTER_OTLP_ENDPOINT would), alternating within each run so both see the same machine."""
    from trainer_agent import tracing

    server, url = otlp_sink()
    os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = url
    provider = tracing.provider_from_env()
    assert provider is not None
    samples: dict[str, dict[int, list[float]]] = {"off": {}, "on": {}}
    cpu: dict[str, dict[int, list[float]]] = {"off": {}, "on": {}}
    vacuum_event_tables()
    try:
        for run in range(runs):
            for mode in ("off", "on") if run % 2 == 0 else ("on", "off"):
                tracing.use_provider(provider if mode == "on" else None)
                for history, timings, cpu_ms, _ in measure(user_id, sizes):
                    samples[mode].setdefault(history, []).extend(timings)
                    cpu[mode].setdefault(history, []).extend(cpu_ms)
                tracing.use_provider(None)
    finally:
        provider.shutdown()
        server.shutdown()
    print(
        f"database: {describe_database()}; commit {revision()}; {runs} run(s), tracing off and on alternating; "
        f"load average (1 / 5 / 15 min) after: {' / '.join(f'{value:.2f}' for value in os.getloadavg())}"
    )
    print()
    print(
        "| history (events) | iterations per mode | off: median / p95 (ms) | on: median / p95 (ms) "
        "| overhead, median (ms) | CPU of this process off / on, median (ms) |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for history in sizes:
        off, on = samples["off"][history], samples["on"][history]
        print(
            f"| {history} | {len(off)} | {statistics.median(off):.2f} / {percentile(off, 0.95):.2f} "
            f"| {statistics.median(on):.2f} / {percentile(on, 0.95):.2f} "
            f"| {statistics.median(on) - statistics.median(off):+.2f} "
            f"| {statistics.median(cpu['off'][history]):.2f} / {statistics.median(cpu['on'][history]):.2f} |"
        )


def print_statements(user_id: uuid.UUID, history: int) -> None:
    """The statements of one iteration (the second of a turn) at `history` events, as sent to the server."""
    from trainer_agent.llm.providers import override_provider
    from trainer_agent.turns import delete_session_everywhere, run_turn

    session = session_with_history(user_id, history)
    boundaries = Boundaries()
    trips = RoundTrips()
    provider = ClockedProvider(scripted_turn_provider(), boundaries, trips.current)
    try:
        with override_provider(MODEL, provider), trips:
            run_turn(user_id=user_id, message="hi", session=session, model=MODEL)
    finally:
        delete_session_everywhere(session=session)
    start, end = boundaries.queries_at_return[1], boundaries.queries_at_start[2]
    print(f"One iteration at {history} events of history: {end - start} round trips")
    for number, sql in enumerate(trips.sqls[start:end], 1):
        print(f"{number:3d}. {' '.join(sql.split())[:160]}")


def run_as_json(user_id: uuid.UUID, sizes: tuple[int, ...]) -> None:
    """One run (`measure`) of this process's code, printed as one JSON line for `--against`."""
    import json

    from django.db import connection

    vacuum_event_tables()
    try:
        rows = measure(user_id, sizes)
        database = describe_database()
    finally:
        connection.close()
    print(
        json.dumps(
            {
                "revision": revision(),
                "database": database,
                "rows": [
                    {
                        "history": history,
                        "timings": timings,
                        "cpu": cpu,
                        "statements": queries.total,
                        "control": queries.control,
                        "commits": queries.commits,
                        "round_trips": queries.round_trips,
                    }
                    for history, timings, cpu, queries in rows
                ],
            }
        )
    )


def compare_checkouts(against: Path, against_database: str, sizes: tuple[int, ...], runs: int) -> None:
    """A/B: each run measures checkout `against` (A, on `against_database`) and this one (B, on DATABASE_URL),
    each in a fresh process of this harness, in alternating order; prints both side by side."""
    import json
    import subprocess

    sides = {
        "A": (against.resolve(), against_database),
        "B": (BASE_DIR, os.environ.get("DATABASE_URL", "")),
    }
    load_before = " / ".join(f"{value:.2f}" for value in os.getloadavg())
    results: dict[str, list[dict[str, Any]]] = {"A": [], "B": []}
    for run in range(runs):
        for side in ("A", "B") if run % 2 == 0 else ("B", "A"):
            checkout, database = sides[side]
            env = {**os.environ, "LOOP_CODE_DIR": str(checkout)}
            if database:
                env["DATABASE_URL"] = database
            completed = subprocess.run(
                [
                    sys.executable,
                    str(Path(__file__).resolve()),
                    "--run-json",
                    "--sizes",
                    ",".join(map(str, sizes)),
                    *(
                        ["--tool", SCRIPTED_TOOL[0], "--tool-arguments", json.dumps(SCRIPTED_TOOL[1])]
                        if SCRIPTED_TOOL is not None
                        else []
                    ),
                ],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            results[side].append(json.loads(completed.stdout.strip().splitlines()[-1]))
            print(
                f"run {run + 1} {side} ({results[side][-1]['revision']}): "
                + ", ".join(
                    f"{row['history']}: {statistics.median(row['timings']):.2f} ms"
                    for row in results[side][-1]["rows"]
                ),
                file=sys.stderr,
            )
    load = " / ".join(f"{value:.2f}" for value in os.getloadavg())
    print(
        f"database: {results['B'][0]['database']}; A {results['A'][0]['revision']} ({sides['A'][0]}), "
        f"B {results['B'][0]['revision']} ({sides['B'][0]}); {runs} run(s) of each, alternating (A first in "
        f"odd runs); Python {platform.python_version()}; load average before: {load_before}, after: {load}"
    )
    print()
    print(
        "| history (events) | iterations (each) | median A / B (ms) | p95 A / B (ms) | CPU of the process, "
        "median A / B (ms) | statements A / B | round trips A / B | commits A / B | median of each run, A / B (ms) |"
    )
    print("|---:|---:|---|---|---|---|---|---|---|")
    for index, history in enumerate(sizes):

        def pooled(side: str, key: str, index: int = index) -> list[Any]:
            return [value for result in results[side] for value in result["rows"][index][key]]

        def per_run(side: str, index: int = index) -> str:
            return ", ".join(f"{statistics.median(r['rows'][index]['timings']):.2f}" for r in results[side])

        a, b = pooled("A", "timings"), pooled("B", "timings")
        print(
            f"| {history} | {len(b)} | {statistics.median(a):.2f} / **{statistics.median(b):.2f}** "
            f"| {percentile(a, 0.95):.2f} / {percentile(b, 0.95):.2f} "
            f"| {statistics.median(pooled('A', 'cpu')):.2f} / {statistics.median(pooled('B', 'cpu')):.2f} "
            f"| {spread(pooled('A', 'statements'))} / {spread(pooled('B', 'statements'))} "
            f"| {spread(pooled('A', 'round_trips'))} / {spread(pooled('B', 'round_trips'))} "
            f"| {spread(pooled('A', 'commits'))} / {spread(pooled('B', 'commits'))} "
            f"| {per_run('A')} / {per_run('B')} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--runs",
        type=int,
        default=1,
        help="repeat the whole measurement; the table pools every run's samples",
    )
    parser.add_argument(
        "--sizes",
        type=lambda text: tuple(int(part) for part in text.split(",")),
        default=HISTORY_SIZES,
        help="history sizes, comma-separated (default 10,100,500,5000)",
    )
    parser.add_argument("--profile", type=int, metavar="EVENTS", help="profile the loop at this history size")
    parser.add_argument(
        "--profile-cpu",
        action="store_true",
        help="with --profile: this process's CPU time, not the wall clock",
    )
    parser.add_argument(
        "--metrics-overhead",
        action="store_true",
        help="compare the loop with the Prometheus metrics on and off",
    )
    parser.add_argument(
        "--against",
        type=Path,
        metavar="CHECKOUT",
        help="A/B in one run: alternate runs of CHECKOUT's code (A) and this checkout's (B)",
    )
    parser.add_argument(
        "--against-database",
        metavar="URL",
        default="",
        help="A's database (default: DATABASE_URL, shared with B)",
    )
    parser.add_argument(
        "--tool",
        metavar="NAME",
        help="the tool each measured iteration runs (default message_notify_user), e.g. set_current_location",
    )
    parser.add_argument(
        "--tool-arguments", metavar="JSON", default="{}", help="its arguments, a JSON object (with --tool)"
    )
    parser.add_argument("--run-json", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--statements",
        type=int,
        metavar="EVENTS",
        help="print one iteration's statements at this history size",
    )
    parser.add_argument(
        "--tracing",
        action="store_true",
        help="measure with OpenTelemetry tracing off and on (OTLP/HTTP to a local sink), alternating, same run",
    )
    args = parser.parse_args()
    runs: int = args.runs
    sizes: tuple[int, ...] = args.sizes
    if args.tool:
        import json

        global SCRIPTED_TOOL
        SCRIPTED_TOOL = (args.tool, json.loads(args.tool_arguments))
    if args.against is not None:
        compare_checkouts(args.against, args.against_database, sizes, runs)
        return
    if args.metrics_overhead and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        import tempfile

        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="bench-metrics-")
    # The turn runs here, in this process, through the worker's code path (claim, lease, loop, finish).
    os.environ["TASKS_BACKEND"] = "immediate"
    setup_django()
    import logging

    import django
    from django.conf import settings
    from django.db import connection

    from datasources_app.demo import DEMO_USER_ID
    from datasources_app.services import seed_demo_user

    logging.disable(
        logging.INFO
    )  # no console lines in the timings, nor the INFO records of each tool and task
    settings.INITIALIZER_MODEL = "offline"
    seed_demo_user()
    if args.profile is not None:
        profile(DEMO_USER_ID, args.profile, TURNS_PER_SIZE, 40, cpu=args.profile_cpu)
        return
    if args.statements is not None:
        print_statements(DEMO_USER_ID, args.statements)
        return
    if args.run_json:
        run_as_json(DEMO_USER_ID, sizes)
        return
    if args.metrics_overhead:
        metrics_overhead(DEMO_USER_ID, sizes, runs)
        return
    if args.tracing:
        compare_tracing(DEMO_USER_ID, sizes, runs)
        return
    load_before = " / ".join(f"{value:.2f}" for value in os.getloadavg())
    reference_before = cpu_reference_ms()
    vacuum_event_tables()
    try:
        results = [measure(DEMO_USER_ID, sizes) for _ in range(runs)]
    finally:
        connection.close()

    load = " / ".join(f"{value:.2f}" for value in os.getloadavg())
    reference_after = cpu_reference_ms()
    print(
        f"database: {describe_database()}; commit {revision()}; Python {platform.python_version()}; "
        f"Django {django.get_version()}; load average (1 / 5 / 15 min) before the run: {load_before}, "
        f"after: {load}; CPU reference (ms, lower is faster) before: {reference_before:.0f}, "
        f"after: {reference_after:.0f}" + (f"; {runs} runs pooled" if runs > 1 else "")
    )
    print()
    print(
        "| history (events) | iterations | median (ms) | p95 (ms) | min (ms) | CPU of this process, median (ms) "
        "| statements per iteration | of which BEGIN / COMMIT / SAVEPOINT / RELEASE | commits "
        "| round trips | median of each run (ms) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---|---|---|---|---|")
    for index, history in enumerate(sizes):
        timings = [t for rows in results for t in rows[index][1]]
        cpu = [c for rows in results for c in rows[index][2]]
        total = [q for rows in results for q in rows[index][3].total]
        control = [q for rows in results for q in rows[index][3].control]
        commits = [q for rows in results for q in rows[index][3].commits]
        trips = [q for rows in results for q in rows[index][3].round_trips]
        each = ", ".join(f"{statistics.median(rows[index][1]):.2f}" for rows in results)
        print(
            f"| {history} | {len(timings)} | {statistics.median(timings):.2f} | {percentile(timings, 0.95):.2f} "
            f"| {min(timings):.2f} | {statistics.median(cpu):.2f} | {spread(total)} | {spread(control)} "
            f"| {spread(commits)} | {spread(trips)} | {each} |"
        )


if __name__ == "__main__":
    main()
