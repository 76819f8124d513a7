"""The worker's CPU per preview publication on PostgreSQL (issue 25, docs/benchmarks.md "Previews end to end").

    DATABASE_URL=postgres://postgres@127.0.0.1:5442/postgres .venv/bin/python benchmarks/preview_publish.py

Threads play model calls publishing an exercise card (~400 bytes) each: 1 thread every 5 ms, and 50 threads every
75 ms (the throttle's interval, 50 turns streaming at once). Each publication goes through the loop's wrapper
(`giving_back_after`) as in a streamed call, over:

- `pooled`: the path before 9752a76, kept here for the comparison: the calling thread borrows a connection of
  Django's pool (the pool's check, a round trip), sends its `pg_notify` and gives the connection back;
- `sender`: `previews.notify_previews`, the worker's `NotifySender` (a connection and a thread of its own; what
  waits goes in one statement);
- `nothing`: the threads and their sleeps alone, to subtract.

CPU is this process's (`time.process_time`: every thread, the sender's included), per publication. No table is
needed: any PostgreSQL database will do.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
if str(BASE_DIR) not in sys.path:
    sys.path.insert(0, str(BASE_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

from trainer_agent.connection_pool import giving_back_after  # noqa: E402
from trainer_agent.previews import (  # noqa: E402
    PREVIEWS_CHANNEL,
    PreviewBatch,
    notification_payloads,
    notify_previews,
    stop_notifying,
)

CARD = {
    "type": "exercise_preview",
    "data": {
        "tool": "generate_workout",
        "call_id": "toolu_01",
        "index": 2,
        "exercise": {
            "exercise_name": "Goblet Squat",
            "exercise_type": "strength",
            "slug": "goblet-squat",
            "equipment": ["dumbbell"],
            "sets": 3,
            "reps": 10,
            "load": 12,
            "load_unit": "kg",
            "rest_seconds": 90,
            "order": 3,
        },
    },
}


def pooled(batch: PreviewBatch) -> None:
    """The publication path before the sender: a pooled connection per publication."""
    payloads = notification_payloads(batch)
    connection.ensure_connection()
    assert connection.connection is not None
    sql = "SELECT " + ", ".join(["pg_notify(%s, %s)"] * len(payloads))
    params = [item for payload in payloads for item in (PREVIEWS_CHANNEL, payload)]
    with connection.wrap_database_errors, connection.connection.cursor() as cursor:
        cursor.execute(sql.encode(), params)


def run(publish: Callable[[PreviewBatch], None], *, threads: int, each: int, gap: float) -> float:
    """µs of CPU per publication."""

    def model_call() -> None:
        session = uuid.uuid4()
        for number in range(each):
            publish(PreviewBatch(session, session, 5, frames=[CARD], state=[CARD], final=number == each - 1))
            time.sleep(gap)
        connection.close()

    workers = [threading.Thread(target=model_call) for _ in range(threads)]
    started = time.process_time()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return (time.process_time() - started) / (threads * each) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    ways: dict[str, Callable[[PreviewBatch], None]] = {
        "nothing": lambda batch: None,
        "pooled": giving_back_after(pooled),
        "sender": giving_back_after(notify_previews),
    }
    shapes = [(1, 200, 0.005), (50, 40, 0.075)]
    results: dict[tuple[str, int], list[float]] = {}
    for _ in range(args.rounds):
        for name, publish in ways.items():
            for threads, each, gap in shapes:
                results.setdefault((name, threads), []).append(
                    run(publish, threads=threads, each=each, gap=gap)
                )
    stop_notifying()
    print(
        f"load average {os.getloadavg()[0]:.2f}; µs of CPU per publication, {args.rounds} rounds (min-max)\n"
    )
    print("| path | 1 call, every 5 ms | 50 calls, every 75 ms |")
    print("|---|---:|---:|")
    for name in ways:
        cells = []
        for threads, _, _ in shapes:
            values = results[(name, threads)]
            cells.append(f"{min(values):.0f}-{max(values):.0f}")
        print(f"| {name} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
