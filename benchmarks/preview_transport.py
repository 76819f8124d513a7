"""Preview transport, worker → web process: PostgreSQL NOTIFY against Redis pub/sub (what channels_redis uses).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python benchmarks/preview_transport.py
    ... benchmarks/preview_transport.py --sessions 50 --seconds 20 --payload-bytes 1200

What it imitates (docs/architecture.md "Previews"): `--sessions` turns stream at once, each on a worker thread
with a connection of its own, publishing one preview every `--interval` seconds (75 ms, the publisher's
throttle) of `--payload-bytes` of JSON (an exercise card is ~700 bytes, a message of a few sentences ~400); one
web process listens on one connection and decodes every payload, as `trainer_agent.wakeups` does.

- NOTIFY: the publisher's `SELECT pg_notify('agent_previews', payload)` in autocommit on its own psycopg connection
  (as `previews.notify_previews` sends it); the listener is psycopg's `AsyncConnection.notifies()` after `LISTEN`.
- Redis: `PUBLISH preview.<session> payload` through redis-py's client (its pool, a connection per thread); the
  listener one `redis.asyncio` pub/sub connection subscribed to every session's channel (channels_redis's
  `RedisPubSubChannelLayer` holds one subscribed connection per process and a channel per group). A private
  `redis-server` is started on a free port (no persistence).

Latency: the listener's `time.time()` at decoding minus the sender's `time.time()` just before the send (one
machine, one clock). CPU: each process's user + system time over the run, per message. Prints Markdown.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import redis
import redis.asyncio

CHANNEL = "agent_previews"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def payload(session: int, number: int, size: int) -> str:
    """A preview-like JSON payload of about `size` bytes, carrying its send time."""
    body = {"s": f"session-{session}", "r": number, "t": time.time(), "f": [{"type": "message_preview"}]}
    text = json.dumps(body)
    return json.dumps({**body, "pad": "x" * max(0, size - len(text) - 10)})


# --- listeners (the web process) ----------------------------------------------------------------------


async def _listen_notify(dsn: str, expected: int, ready: Any, results: Any, deadline: float) -> None:
    latencies: list[float] = []
    started = cpu_seconds()
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute(f"LISTEN {CHANNEL}")
        ready.set()
        async for note in conn.notifies(timeout=max(1.0, deadline - time.time())):
            received = time.time()
            decoded = json.loads(note.payload)
            latencies.append(received - decoded["t"])
            if len(latencies) >= expected:
                break
    results.put((latencies, cpu_seconds() - started))


async def _listen_redis(
    port: int, sessions: int, expected: int, ready: Any, results: Any, deadline: float
) -> None:
    latencies: list[float] = []
    started = cpu_seconds()
    client = redis.asyncio.Redis(port=port)
    pubsub = client.pubsub()
    await pubsub.subscribe(*[f"preview.session-{number}" for number in range(sessions)])
    ready.set()
    while len(latencies) < expected and time.time() < deadline:
        message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
        if message is None:
            continue
        received = time.time()
        decoded = json.loads(message["data"])
        latencies.append(received - decoded["t"])
    await pubsub.aclose()
    await client.aclose()
    results.put((latencies, cpu_seconds() - started))


def listener_process(
    kind: str, target: str, sessions: int, expected: int, ready: Any, results: Any, deadline: float
) -> None:
    if kind == "notify":
        asyncio.run(_listen_notify(target, expected, ready, results, deadline))
    else:
        asyncio.run(_listen_redis(int(target), sessions, expected, ready, results, deadline))


# --- publishers (the worker) --------------------------------------------------------------------------


def publish_all(
    make_sender: Callable[[int], Callable[[str], None]], sessions: int, count: int, interval: float, size: int
) -> float:
    """`sessions` threads, each sending `count` payloads `interval` apart (staggered); the CPU time used."""
    started = cpu_seconds()
    barrier = threading.Barrier(sessions)

    def run(session: int) -> None:
        send = make_sender(session)
        barrier.wait()
        time.sleep(interval * session / sessions)  # spread the sessions over the interval
        due = time.monotonic()
        for number in range(count):
            send(payload(session, number, size))
            due += interval
            time.sleep(max(0.0, due - time.monotonic()))

    threads = [threading.Thread(target=run, args=(session,)) for session in range(sessions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return cpu_seconds() - started


def notify_sender(dsn: str) -> Callable[[int], Callable[[str], None]]:
    def make(session: int) -> Callable[[str], None]:
        conn = psycopg.connect(dsn, autocommit=True)

        def send(text: str) -> None:
            conn.execute(b"SELECT pg_notify(%s, %s)", (CHANNEL, text))

        return send

    return make


def redis_sender(port: int) -> Callable[[int], Callable[[str], None]]:
    client = redis.Redis(port=port)

    def make(session: int) -> Callable[[str], None]:
        channel = f"preview.session-{session}"

        def send(text: str) -> None:
            client.publish(channel, text)

        return send

    return make


def run_case(kind: str, target: str, args: argparse.Namespace) -> dict[str, float]:
    count = max(1, round(args.seconds / args.interval))
    expected = count * args.sessions
    context = multiprocessing.get_context("spawn")
    ready, results = context.Event(), context.Queue()
    deadline = time.time() + args.seconds * 3 + 30
    listener = context.Process(
        target=listener_process, args=(kind, target, args.sessions, expected, ready, results, deadline)
    )
    listener.start()
    ready.wait(30)
    sender = notify_sender(target) if kind == "notify" else redis_sender(int(target))
    publisher_cpu = publish_all(sender, args.sessions, count, args.interval, args.payload_bytes)
    latencies, listener_cpu = results.get(timeout=args.seconds * 3 + 60)
    listener.join(10)
    ms = [value * 1000 for value in latencies]
    return {
        "sent": expected,
        "received": len(ms),
        "p50": percentile(ms, 0.5),
        "p95": percentile(ms, 0.95),
        "p99": percentile(ms, 0.99),
        "max": max(ms) if ms else float("nan"),
        "mean": statistics.fmean(ms) if ms else float("nan"),
        "publisher_us": publisher_cpu / expected * 1e6,
        "listener_us": listener_cpu / max(1, len(ms)) * 1e6,
    }


def start_redis() -> tuple[subprocess.Popen[bytes], int, Path]:
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    directory = Path(tempfile.mkdtemp(prefix="bench-redis-"))
    process = subprocess.Popen(
        [binary, "--port", str(port), "--save", "", "--appendonly", "no", "--dir", str(directory)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            redis.Redis(port=port).ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    return process, port, directory


def libpq_dsn(url: str) -> str:
    return url.replace("postgres://", "postgresql://", 1)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 50])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--interval", type=float, default=0.075)
    parser.add_argument("--payload-bytes", type=int, default=800)
    parser.add_argument("--rounds", type=int, default=2, help="each case this many times, alternating")
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        sys.exit("DATABASE_URL must name a PostgreSQL database (any: NOTIFY needs no table)")
    dsn = libpq_dsn(url)
    with psycopg.connect(dsn) as conn:
        server = conn.execute("SHOW server_version").fetchone()
    redis_process, port, directory = start_redis()
    redis_version = redis.Redis(port=port).info()["redis_version"]
    print(f"# Preview transport: NOTIFY vs Redis pub/sub ({time.strftime('%Y-%m-%d %H:%M')})\n")
    print(
        f"{platform.node()} · {os.cpu_count()} CPUs · load average {os.getloadavg()[0]:.2f} · "
        f"PostgreSQL {server[0] if server else '?'} · Redis {redis_version} · psycopg {psycopg.__version__} · "
        f"redis-py {redis.__version__} · Python {platform.python_version()}\n"
    )
    print(
        f"{args.seconds:g} s per case, a preview every {args.interval * 1000:g} ms per session, "
        f"{args.payload_bytes} bytes each\n"
    )
    print(
        "| transport | sessions | round | received | p50 ms | p95 ms | p99 ms | max ms | publisher CPU µs/msg | listener CPU µs/msg |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    try:
        for sessions in args.sessions:
            for round_number in range(1, args.rounds + 1):
                for kind, target in (("notify", dsn), ("redis", str(port))):
                    case = argparse.Namespace(**{**vars(args), "sessions": sessions})
                    row = run_case(kind, target, case)
                    print(
                        f"| {'NOTIFY' if kind == 'notify' else 'Redis pub/sub'} | {sessions} | {round_number} "
                        f"| {row['received']}/{row['sent']} | {row['p50']:.2f} | {row['p95']:.2f} "
                        f"| {row['p99']:.2f} | {row['max']:.2f} | {row['publisher_us']:.0f} "
                        f"| {row['listener_us']:.0f} |",
                        flush=True,
                    )
    finally:
        redis_process.terminate()
        redis_process.wait(10)
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
