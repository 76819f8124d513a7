"""SSE load benchmark: many concurrent `POST /agent/stream` turns against one daphne process.

    .venv/bin/python benchmarks/sse_load.py                      # SQLite file (temporary)
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test .venv/bin/python benchmarks/sse_load.py
    .venv/bin/python benchmarks/sse_load.py --streams 50 --delay 0.5

A scripted model (AGENT_TEST_SCRIPTS, see trainer_agent/testing_hooks.py) answers every call after `--delay`
seconds with `message_notify_user`, `message_notify_user`, `idle`: three model calls per turn, the whole real
loop around them (initializer and knowledge, context building, event store, tools, eventstream storage). The
requests ask for a workout, so the offline initializer loads four knowledge sources before the first model call.

The script creates a fresh database (a temporary SQLite file, or `test_live_sse_bench_<pid>` on the PostgreSQL
server of DATABASE_URL), migrates and seeds it, starts `daphne` with DEBUG off, opens all streams at once from
one asyncio loop over raw sockets, and reads every frame. It reports completed streams, errors, the time to the
first event (the first `data:` frame) and to the first tool frame (after the first model answer), the turn
duration, and the daphne process's peak resident memory (VmHWM). It then checks in the database that every
session ended `completed`. Prints Markdown (docs/benchmarks.md keeps the recorded results).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import secrets
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.support.live_server import DaphneServer, LiveDatabase

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))

MODEL_ID = "scripted-bench"
MESSAGE = "Give me a quick workout"
CLIENT_TIMEOUT_S = 300.0


@dataclass
class StreamResult:
    status: int = 0
    frames: int = 0
    first_event_s: float | None = None
    first_tool_s: float | None = None
    done_s: float | None = None
    session_id: str = ""
    error: str = ""
    frame_types: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.error and self.done_s is not None


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


async def run_stream(port: int, token: str, started: float) -> StreamResult:
    """One client: POST the turn, read the chunked SSE body frame by frame until `done`."""
    result = StreamResult()
    body = json.dumps({"message": MESSAGE, "model": MODEL_ID}).encode()
    request = (
        f"POST /agent/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode() + body
    writer: asyncio.StreamWriter | None = None
    try:
        async with asyncio.timeout(CLIENT_TIMEOUT_S):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(request)
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
            status_line, *header_lines = head.decode("latin-1").split("\r\n")
            result.status = int(status_line.split()[1])
            headers = {
                k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines if h)
            }
            result.session_id = headers.get("x-session-id", "")
            if result.status != 200:
                result.error = f"HTTP {result.status}"
                return result
            if headers.get("transfer-encoding") != "chunked":
                result.error = "response is not chunked"
                return result
            buffer = ""
            while result.done_s is None:
                size_line = await reader.readuntil(b"\r\n")
                size = int(size_line.strip().split(b";")[0], 16)
                if size == 0:
                    break
                chunk = await reader.readexactly(size + 2)
                buffer += chunk[:-2].decode("utf-8")
                while "\n\n" in buffer:
                    block, buffer = buffer.split("\n\n", 1)
                    data = [line[6:] for line in block.split("\n") if line.startswith("data: ")]
                    if not data:
                        continue  # a ": ping" comment
                    now = time.perf_counter() - started
                    frame = json.loads("\n".join(data))
                    result.frames += 1
                    result.frame_types.append(frame["type"])
                    if result.first_event_s is None:
                        result.first_event_s = now
                    if result.first_tool_s is None and frame["type"] not in ("knowledge", "status"):
                        result.first_tool_s = now
                    if frame["type"] == "error":
                        result.error = f"error frame: {frame.get('message')}"
                        return result
                    if frame["type"] == "done":
                        result.done_s = now
            if result.done_s is None:
                result.error = "stream ended without a done frame"
    except TimeoutError:
        result.error = f"timed out after {CLIENT_TIMEOUT_S:.0f} s"
    except Exception as exc:
        result.error = f"{type(exc).__name__}: {exc}"
    finally:
        if writer is not None:
            writer.close()
    return result


async def refused_request(port: int, started: float) -> float:
    """One `POST /agent/stream` with a bad token: seconds until the 401's status line arrives."""
    body = json.dumps({"message": MESSAGE}).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(
            f"POST /agent/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer not-a-token\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        status_line = await reader.readuntil(b"\r\n")
        assert b" 401 " in status_line, status_line
        return time.perf_counter() - started
    finally:
        writer.close()


async def run_refusals(port: int, count: int) -> list[float]:
    started = time.perf_counter()
    return list(await asyncio.gather(*(refused_request(port, started) for _ in range(count))))


def measure_floor(server: DaphneServer, count: int) -> tuple[list[float], float]:
    """The server's floor: `count` requests at once that do no work but refuse a bad token (after a warm-up)."""
    asyncio.run(run_refusals(server.port, count))
    cpu_before = server.cpu_seconds()
    times = asyncio.run(run_refusals(server.port, count))
    return times, server.cpu_seconds() - cpu_before


async def run_load(port: int, tokens: list[str]) -> tuple[list[StreamResult], float]:
    started = time.perf_counter()
    results = await asyncio.gather(*(run_stream(port, token, started) for token in tokens))
    return list(results), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--streams", type=int, default=200, help="concurrent streams (default 200)")
    parser.add_argument(
        "--delay", type=float, default=1.0, help="seconds per scripted model call (default 1.0)"
    )
    parser.add_argument("--threads", type=int, default=None, help="AGENT_STREAM_THREADS for the server")
    parser.add_argument(
        "--floor",
        action="store_true",
        help="first measure the floor: as many requests that only get a 401 (bad token), all at once",
    )
    parser.add_argument(
        "--sqlite-wal",
        action="store_true",
        help="switch the SQLite file to WAL journal mode first (an experiment: not the settings default)",
    )
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "1")  # this process only mints tokens; the server runs with DEBUG off
    import django

    django.setup()
    from django.conf import settings

    from tests.support.live_server import DaphneServer, create_live_database, server_env, write_scripts
    from trainer_agent.auth import mint_token

    jwt_secret = secrets.token_urlsafe(48)
    work_dir = Path(tempfile.mkdtemp(prefix="sse-bench-"))
    print(f"preparing the database in {work_dir} ...", file=sys.stderr)
    database = create_live_database(name="sse_bench", tmp_dir=work_dir)
    engine = "PostgreSQL" if database.postgres_admin_url else "SQLite (file)"
    if args.sqlite_wal and not database.postgres_admin_url:
        import sqlite3
        from urllib.parse import urlsplit

        with sqlite3.connect(urlsplit(database.url).path) as conn:
            conn.execute("PRAGMA journal_mode=WAL")
        engine = "SQLite (file, WAL)"
    steps = [
        {"tool": "message_notify_user", "args": {"message": "Looking at your history"}},
        {"tool": "message_notify_user", "args": {"message": "Here is the plan"}},
        {"tool": "idle", "args": {"reason": "done"}},
    ]
    scripts = write_scripts(work_dir, {"models": {MODEL_ID: {"delay_s": args.delay, "steps": steps}}})
    extra = {
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "SUPABASE_JWT_SECRET": jwt_secret,
        "AGENT_TURN_RATE": "",  # the benchmark measures streaming, not the throttle
    }
    if args.threads:
        extra["AGENT_STREAM_THREADS"] = str(args.threads)
    server = DaphneServer(
        env=server_env(database_url=database.url, scripts=scripts, extra=extra),
        log_path=work_dir / "daphne.log",
    ).start()
    floor: tuple[list[float], float] | None = None
    try:
        if args.floor:
            print(f"floor: {args.streams} refused requests ...", file=sys.stderr)
            floor = measure_floor(server, args.streams)
        idle_rss_kb = server.peak_rss_kb()
        cpu_before = server.cpu_seconds()
        # One user per stream: realistic (no shared throttle key or session) and each its own session row.
        tokens = [mint_token(user_id=uuid.uuid4(), secret=jwt_secret) for _ in range(args.streams)]
        print(f"{args.streams} streams against daphne pid {server.pid} ({engine}) ...", file=sys.stderr)
        results, wall = asyncio.run(run_load(server.port, tokens))
        peak_rss_kb = server.peak_rss_kb()
        cpu_used = server.cpu_seconds() - cpu_before
        session_ids = [r.session_id for r in results if r.session_id]
        completed_in_db = count_completed(database, session_ids)
    finally:
        server.stop()
        log_tail = server.log_tail(20)
        database.drop()
        kept_log = Path(tempfile.gettempdir()) / "sse_load_daphne.log"
        shutil.copy(server.log_path, kept_log)
        shutil.rmtree(work_dir, ignore_errors=True)

    ok = [r for r in results if r.ok]
    errors = [r for r in results if not r.ok]
    first = [r.first_event_s for r in ok if r.first_event_s is not None]
    first_tool = [r.first_tool_s for r in ok if r.first_tool_s is not None]
    done = [r.done_s for r in ok if r.done_s is not None]
    print(f"\n### {engine}: {args.streams} streams, {args.delay:g} s per model call, 3 calls per turn\n")
    print(
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, server threads: {args.threads or f'default ({settings.AGENT_STREAM_THREADS})'}\n"
    )
    print(
        "| streams | completed | errors | sessions `completed` in DB | wall (s) | server CPU (s) | "
        "CPU per turn (ms) | peak RSS (MB) | idle RSS (MB) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {args.streams} | {len(ok)} | {len(errors)} | {completed_in_db} | {wall:.1f} | {cpu_used:.1f} | "
        f"{cpu_used / max(1, args.streams) * 1000:.0f} | {peak_rss_kb / 1024:.0f} | {idle_rss_kb / 1024:.0f} |"
    )
    print()
    print("| time from start (s) | p50 | p95 | max |")
    print("|---|---:|---:|---:|")
    for label, values in (("first event", first), ("first tool frame", first_tool), ("done", done)):
        print(
            f"| {label} | {percentile(values, 0.5):.2f} | {percentile(values, 0.95):.2f} | {max(values, default=float('nan')):.2f} |"
        )
    if floor is not None:
        times, floor_cpu = floor
        print(
            f"| floor: {args.streams} requests refused with 401 (no work), time to the status line "
            f"| {percentile(times, 0.5):.2f} | {percentile(times, 0.95):.2f} | {max(times):.2f} |"
        )
        print(f"\nfloor: server CPU per refused request {floor_cpu / args.streams * 1000:.1f} ms")
    frames = [r.frames for r in ok]
    if frames:
        print(f"\nframes per stream: {min(frames)}-{max(frames)} (median {statistics.median(frames):g})")
    if errors:
        print("\nerrors (first 5):")
        for result in errors[:5]:
            print(f"- {result.error} (frames: {result.frame_types})")
        print(f"\ndaphne log ({kept_log}), last lines:\n" + log_tail)
    sys.exit(0 if not errors and completed_in_db == args.streams else 1)


def count_completed(database: LiveDatabase, session_ids: list[str]) -> int:
    if not session_ids:
        return 0
    ids = session_ids if database.postgres_admin_url else [uuid.UUID(s).hex for s in session_ids]
    placeholders = ", ".join(["%s"] * len(ids))
    return int(
        database.scalar(
            f"SELECT COUNT(*) FROM agent_sessions WHERE status = 'completed' AND id IN ({placeholders})", ids
        )
    )


if __name__ == "__main__":
    main()
