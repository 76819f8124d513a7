"""Preview latency, end to end (issue 25's goals): the streaming fake Claude → a worker → NOTIFY → a web process →
the client's SSE stream.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python benchmarks/previews_by_call.py
    DATABASE_URL=... .venv/bin/python benchmarks/previews_by_call.py --turns 20 --concurrent 50 --ttft 0.6 --tps 150

1 daphne + 1 `manage.py worker --threads 64` on a fresh database (benchmarks/cluster.py), the model
`claude-haiku-4-5` served by the streaming fake (tests/support/fake_model_server.py, in this process) through the
real Anthropic SDK (`ANTHROPIC_BASE_URL`): its default script plays the demo user's 6-exercise workout turn
(`generate_workout`, `message_notify_user` delivering it, `idle`), with `--ttft` seconds to the first token and
`--tps` output tokens a second. The initializer is the offline one (no model call).

The fake keeps a timeline (`time.time()`): each call's first token, the moment it finished writing each
exercise object, the end of each response. Tool call ids carry the call's number (`toolu_fake_00012_0`), so a
client's preview frame (`call_id`) is matched to its call. Measured on the client (`time.time()` at the frame's
arrival; one machine, one clock):

- first preview word: the first `message_preview` of the message call minus that call's first token;
- each exercise card: its `exercise_preview` minus when the model finished writing that exercise;
- first exercise card: minus when the request was sent (today, without previews, the first card is the
  `generate_workout` result's, after the whole input);
- then `--concurrent` turns at once with previews, and as many with `"preview": false`, one burst after the
  other on the same servers: the same latencies, errors, and CPU seconds of the web and worker processes
  (/proc) per turn of each burst.

Prints Markdown.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
if str(BASE_DIR) not in sys.path:
    sys.path.insert(0, str(BASE_DIR))

from benchmarks.cluster import (  # noqa: E402
    Cluster,
    StreamResult,
    cluster,
    load_average,
    percentile,
    revision,
    stream_turn,
)
from tests.support.fake_model_server import FakeModelServer  # noqa: E402

MODEL = "claude-haiku-4-5"
WORKOUT_REQUEST = "A full-body workout at home, please"
_CALL = re.compile(r"_fake_(\d+)_")


@dataclass
class TurnTimes:
    sent: float
    result: StreamResult
    first_word_ms: list[float] = field(default_factory=list)
    card_ms: list[float] = field(default_factory=list)
    first_card_s: float | None = None
    cards: int = 0
    final_card_s: float | None = None  # the workout's tool_result (the first card without previews)


def call_number(call_id: str) -> int | None:
    found = _CALL.search(call_id)
    return int(found.group(1)) if found else None


def measure(fake: FakeModelServer, sent: float, result: StreamResult) -> TurnTimes:
    times = TurnTimes(sent=sent, result=result)
    first_token = {mark["request"]: mark["t"] for mark in fake.marks_of("first_token")}
    written = {(mark["request"], mark["index"]): mark["t"] for mark in fake.marks_of("exercise_written")}
    worded: set[int] = set()
    for frame in result.frames:
        kind, data = frame.data.get("type"), frame.data.get("data") or {}
        if kind == "generate_workout" and "formatted" in frame.data and times.final_card_s is None:
            times.final_card_s = frame.wall - sent
        if kind not in ("message_preview", "exercise_preview"):
            continue
        number = call_number(str(data.get("call_id", "")))
        if number is None:
            continue
        if kind == "message_preview" and number not in worded and number in first_token:
            worded.add(number)
            times.first_word_ms.append((frame.wall - first_token[number]) * 1000)
        if kind == "exercise_preview":
            times.cards += 1
            if times.first_card_s is None:
                times.first_card_s = frame.wall - sent
            finished = written.get((number, int(data.get("index", -1))))
            if finished is not None:
                times.card_ms.append((frame.wall - finished) * 1000)
    return times


async def one_turn(port: int, token: str, *, preview: bool) -> tuple[float, StreamResult]:
    sent = time.time()
    body = {"message": WORKOUT_REQUEST, "preview": preview}
    return sent, await stream_turn(port, token, body, time.perf_counter(), timeout=300)


def burst(
    run: Cluster, fake: FakeModelServer, count: int, *, preview: bool
) -> tuple[list[TurnTimes], float, float]:
    """`count` turns at once; their times, the wall time and the CPU seconds of web + worker per turn."""
    from datasources_app.demo import DEMO_USER_ID

    token = run.token(DEMO_USER_ID)
    before = run.cpu()
    started = time.monotonic()

    async def all_turns() -> list[tuple[float, StreamResult]]:
        return await asyncio.gather(
            *(one_turn(run.webs[0].port, token, preview=preview) for _ in range(count))
        )

    results = asyncio.run(all_turns())
    wall = time.monotonic() - started
    after = run.cpu()
    cpu = sum(after[pid] - before.get(pid, 0.0) for pid in after)
    return [measure(fake, sent, result) for sent, result in results], wall, cpu / count


def cells(values: list[float], digits: int = 0) -> str:
    if not values:
        return "– | – | –"
    return f"{percentile(values, 0.5):.{digits}f} | {percentile(values, 0.95):.{digits}f} | {max(values):.{digits}f}"


def report(label: str, turns: list[TurnTimes]) -> None:
    errors = [turn.result.error for turn in turns if not turn.result.ok]
    words = [value for turn in turns for value in turn.first_word_ms]
    cards = [value for turn in turns for value in turn.card_ms]
    first = [turn.first_card_s for turn in turns if turn.first_card_s is not None]
    final = [turn.final_card_s for turn in turns if turn.final_card_s is not None]
    print(
        f"\n**{label}**: {len(turns) - len(errors)}/{len(turns)} completed"
        + (f", errors: {errors[:3]}" if errors else "")
    )
    print(f"cards received: {sum(turn.cards for turn in turns)} of {6 * len(turns)}\n")
    print("| | p50 | p95 | max |")
    print("|---|---|---|---|")
    print(f"| first preview word after the model's first token (ms) | {cells(words)} |")
    print(f"| exercise card after the model finished writing it (ms) | {cells(cards)} |")
    print(f"| first exercise card after the request (s) | {cells(first, 2)} |")
    print(f"| the workout's result frame after the request (s) | {cells(final, 2)} |")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=20, help="turns one after another (default 20)")
    parser.add_argument(
        "--concurrent", type=int, default=50, help="turns of each burst (default 50; 0: none)"
    )
    parser.add_argument("--ttft", type=float, default=0.6)
    parser.add_argument("--tps", type=float, default=150.0)
    parser.add_argument("--threads", type=int, default=64)
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        sys.exit("DATABASE_URL must name a PostgreSQL server (a database of its own is created)")
    fake = FakeModelServer(ttft=args.ttft, tps=args.tps).start()
    env = {
        "ANTHROPIC_BASE_URL": fake.base_url,
        "ANTHROPIC_API_KEY": "bench",
        "PRIMARY_MODEL": MODEL,
        "LLM_MAX_RETRIES": "0",
    }
    try:
        with cluster(
            name="previews", models={}, web=1, workers=1, threads=args.threads, extra_env=env
        ) as run:
            print(f"# Previews end to end ({time.strftime('%Y-%m-%d %H:%M')}, {revision()})\n")
            print(
                f"{platform.node()} · {os.cpu_count()} CPUs · {run.engine} · 1 web + 1 worker × {args.threads} "
                f"threads · fake {MODEL}: first token {args.ttft:g} s, {args.tps:g} tokens/s · "
                f"load average before {load_average()}"
            )
            from datasources_app.demo import DEMO_USER_ID

            token = run.token(DEMO_USER_ID)
            sequential = []
            for _ in range(args.turns):
                sent, result = asyncio.run(one_turn(run.webs[0].port, token, preview=True))
                sequential.append(measure(fake, sent, result))
            report(f"{args.turns} turns one after another, with previews", sequential)
            if args.concurrent:
                with_previews, wall_on, cpu_on = burst(run, fake, args.concurrent, preview=True)
                report(
                    f"{args.concurrent} turns at once, with previews (wall {wall_on:.1f} s)", with_previews
                )
                without, wall_off, cpu_off = burst(run, fake, args.concurrent, preview=False)
                report(
                    f'{args.concurrent} turns at once, `"preview": false` (wall {wall_off:.1f} s)', without
                )
                print(
                    f"\nCPU of web + worker per turn: {cpu_on * 1000:.0f} ms with previews, {cpu_off * 1000:.0f} ms "
                    f"without ({(cpu_on / cpu_off - 1) * 100:+.0f} %) · load average after {load_average()}"
                )
    finally:
        fake.stop()


if __name__ == "__main__":
    main()
