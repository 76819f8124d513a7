"""Preview frames (issue 25): how soon a person sees the words and the exercise cards the model is writing.

    DATABASE_URL=postgres://postgres@127.0.0.1:5439/postgres .venv/bin/python benchmarks/previews.py
    DATABASE_URL=... .venv/bin/python benchmarks/previews.py --turns 20 --burst 50 --ttft 0.6 --tps 150
    DATABASE_URL=... .venv/bin/python benchmarks/previews.py --initializer offline      # no initializer model call

One web process (daphne) and one `manage.py worker` on a fresh PostgreSQL database (`benchmarks/cluster.py`:
`test_live_previews_<pid>`, migrated, seeded, dropped at the end). The model is the streaming fake
(`tests/support/fake_model_server.py`) in threads of this process, reached through the real Anthropic SDK
(`ANTHROPIC_BASE_URL`): `ttft` seconds to the first token, then `tps` output tokens per second (4 characters
each), playing a workout turn for the demo user: the initializer's knowledge selection (unless
`--initializer offline`), `generate_workout` with 6 exercises, `message_notify_user` delivering it, `idle`.
The clients (raw asyncio sockets, `benchmarks/cluster.py: stream_turn`) run in this process too, so the
fake's timeline (`time.time()` when it sent the first token of a call and the last character of each exercise
object) and the arrival of each frame at a client are read on one clock. Each turn's message carries a tag
that the fake's `request` marks repeat, which ties the model calls to the stream that saw them.

Measured, per turn with previews (`POST /agent/stream`, the default):
- first word: the first `message_preview` frame at the client, minus the fake's first token of the
  `message_notify_user` call (goal: p95 ≤ 150 ms);
- card: each `exercise_preview` frame at the client, minus the moment the fake finished writing that exercise
  (goal: p95 ≤ 150 ms); and how many of the 6 exercises were previewed at all;
- first card: the first `exercise_preview` after the request was sent (goal ≤ 2.5 s);
and with `"preview": false` (exactly today's stream): the first card, which comes with the whole workout, i.e.
the `generate_workout` tool_result frame (the artifact itself comes later, with `message_notify_user`).

Then bursts of `--burst` concurrent turns, with and without previews (alternating, `--rounds` pairs), each
burst alone: the same p95s (goal: within 2× of the turns alone), errors (goal: none), and the CPU time of the
web and worker processes per turn (`/proc/<pid>/stat` utime + stime before and after the burst; goal: previews
≤ 15 % above no previews). Prints Markdown.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
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
    median,
    percentile,
    postgres_cpu,
    process_cpu,
    revision,
    stream_turn,
)
from tests.support.fake_model_server import FakeModelServer, WorkoutTurnScript  # noqa: E402

WORKOUT_TOOLS = ("generate_workout", "draft_workout")
MODEL_ID = "claude-haiku-4-5"
MESSAGE = "Give me a full-body workout for today"
EXERCISES = 6
TURN_TIMEOUT_S = 180.0


# --- one turn ---------------------------------------------------------------------------------------------------


@dataclass
class Turn:
    """One streamed turn, what its client saw and what the fake wrote for it."""

    tag: str
    preview: bool
    sent: float  # time.time() when the request was sent
    stream: StreamResult = field(default_factory=StreamResult)
    first_word: float | None = None  # s: first message_preview at the client − the message call's first token
    cards: dict[int, float] = field(default_factory=dict)  # index → s: preview at the client − written
    first_card: float | None = (
        None  # s after `sent`: the first exercise_preview, or (no previews) the workout
    )
    delivered: float | None = None  # s after `sent`: the message_notify_user tool_result with the artifact
    done: float | None = None  # s after `sent`: the `done` frame
    steps: dict[str, float] = field(default_factory=dict)  # where the time to the first card went (s)

    @property
    def ok(self) -> bool:
        return self.stream.ok


def message_for(tag: str) -> str:
    return f"{MESSAGE} (turn {tag})"


async def run_turn(running: Cluster, token: str, tag: str, preview: bool) -> Turn:
    body: dict[str, Any] = {"message": message_for(tag), "model": MODEL_ID}
    if not preview:
        body["preview"] = False
    turn = Turn(tag=tag, preview=preview, sent=time.time())
    turn.stream = await stream_turn(
        running.webs[0].port, token, body, time.perf_counter(), timeout=TURN_TIMEOUT_S
    )
    return turn


def measure(turn: Turn, fake: FakeModelServer) -> Turn:
    """Fill in the timings of `turn` from its frames and the fake's marks of its model calls."""
    marks = marks_of_turn(fake, turn.tag)
    first_token = {mark["tool"]: mark["t"] for mark in marks if mark["event"] == "first_token"}
    written = {
        int(mark["index"]): mark["t"]
        for mark in marks
        if mark["event"] == "exercise_written" and mark.get("tool") == "generate_workout"
    }
    turn.steps = first_card_steps(turn, marks)
    for frame in turn.stream.frames:
        kind = frame.data.get("type")
        data = frame.data.get("data") if isinstance(frame.data.get("data"), dict) else {}
        assert isinstance(data, dict)
        if kind == "message_preview" and turn.first_word is None and "message_notify_user" in first_token:
            turn.first_word = frame.wall - first_token["message_notify_user"]
        elif kind == "exercise_preview":
            index = int(data.get("index", -1))
            if index in written and index not in turn.cards:
                turn.cards[index] = frame.wall - written[index]
            if turn.first_card is None:
                turn.first_card = frame.wall - turn.sent
        elif kind in WORKOUT_TOOLS and "formatted" in frame.data:
            # The workout's tool_result carries it whole: the first card when nothing was previewed (a drafted
            # workout is never previewed: the model writes a brief, the tool the workout).
            if turn.first_card is None and (not turn.preview or kind == "draft_workout"):
                turn.first_card = frame.wall - turn.sent
        elif kind == "message_notify_user" and frame.data.get("artifact") and turn.delivered is None:
            turn.delivered = frame.wall - turn.sent
        elif kind == "done":
            turn.done = frame.wall - turn.sent
    return turn


STEPS = (
    "request sent → the initializer's call at the model",
    "the initializer's call",
    "→ the trainer's first call at the model",
    "→ its first token",
    "→ the first exercise written (drafted: the brief written, the call's end)",
    "→ its card at the client",
)


def first_card_steps(turn: Turn, marks: list[dict[str, Any]]) -> dict[str, float]:
    """The time from the request to the first card, step by step (the initializer's steps only when it is a
    model call)."""
    by_request: dict[int, dict[str, float]] = defaultdict(dict)
    tools: dict[int, str | None] = {}
    for mark in marks:
        by_request[mark["request"]].setdefault(mark["event"], mark["t"])
        if mark["event"] == "first_token":
            tools[mark["request"]] = mark.get("tool")
    trainer = next((r for r, tool in sorted(tools.items()) if tool in WORKOUT_TOOLS), None)
    if trainer is None:
        return {}
    drafted = tools[trainer] == "draft_workout"
    first_preview = next(
        (f.wall for f in turn.stream.frames if f.data.get("type") == "exercise_preview"), None
    )
    workout = next(
        (f.wall for f in turn.stream.frames if f.data.get("type") in WORKOUT_TOOLS and "formatted" in f.data),
        None,
    )
    shown = first_preview if turn.preview and not drafted else workout
    call = by_request[trainer]
    written = min(
        (m["t"] for m in marks if m["request"] == trainer and m["event"] == "exercise_written"), default=None
    )
    if drafted:
        written = call.get("response_end")
    if shown is None or written is None:
        return {}
    steps: dict[str, float] = {}
    first = min(by_request)
    initializer = first if first != trainer else None  # a model call before the trainer's: the initializer's
    start = turn.sent
    if initializer is not None:
        init = by_request[initializer]
        steps[STEPS[0]] = init["request"] - start
        steps[STEPS[1]] = init["response_end"] - init["request"]
        start = init["response_end"]
    steps[STEPS[2]] = call["request"] - start
    steps[STEPS[3]] = call["first_token"] - call["request"]
    steps[STEPS[4]] = written - call["first_token"]
    steps[STEPS[5]] = shown - written
    return steps


def marks_of_turn(fake: FakeModelServer, tag: str) -> list[dict[str, Any]]:
    """The fake's marks of the model calls whose latest user message is this turn's (its `request` marks)."""
    text = message_for(tag)
    with fake._lock:
        marks = list(fake.marks)
    requests = {
        mark["request"] for mark in marks if mark["event"] == "request" and text in str(mark.get("text"))
    }
    return [mark for mark in marks if mark["request"] in requests]


# --- phases -----------------------------------------------------------------------------------------------------


async def alone(running: Cluster, fake: FakeModelServer, count: int, token: str, prefix: str) -> list[Turn]:
    """`count` turns with previews and `count` without, one at a time, alternating (so drift hits both)."""
    turns = []
    for number in range(count):
        for preview in (True, False):
            tag = f"{prefix}-{'p' if preview else 'n'}{number}"
            turns.append(measure(await run_turn(running, token, tag, preview), fake))
    return turns


@dataclass
class Burst:
    preview: bool
    turns: list[Turn]
    wall: float
    cpu: float  # s of web + worker CPU over the burst
    web_cpu: float
    postgres: float | None
    client: float  # s of this process's CPU (fake + clients)
    load: str

    @property
    def errors(self) -> list[str]:
        return [turn.stream.error or "no done frame" for turn in self.turns if not turn.ok]


async def burst(
    running: Cluster, fake: FakeModelServer, size: int, token: str, prefix: str, preview: bool
) -> Burst:
    postmaster = running.postmaster()
    web = running.webs[0].pid
    start_cpu = running.cpu()
    before = sum(start_cpu.values())
    pg_before = postgres_cpu(postmaster) if postmaster else None
    client_before = process_cpu()
    began = time.perf_counter()
    tags = [f"{prefix}-{'p' if preview else 'n'}{n}" for n in range(size)]
    results = await asyncio.gather(*(run_turn(running, token, tag, preview) for tag in tags))
    wall = time.perf_counter() - began
    end_cpu = running.cpu()
    cpu = sum(end_cpu.values()) - before
    pg = postgres_cpu(postmaster) - pg_before if postmaster and pg_before is not None else None
    return Burst(
        preview=preview,
        turns=[measure(turn, fake) for turn in results],
        wall=wall,
        cpu=cpu,
        web_cpu=end_cpu[web] - start_cpu[web],
        postgres=pg,
        client=process_cpu() - client_before,
        load=load_average(),
    )


async def quiet(seconds: float) -> None:
    """Let the processes settle (the worker's sweep, the web's rechecks) between phases."""
    await asyncio.sleep(seconds)


# --- numbers ----------------------------------------------------------------------------------------------------


def ms(values: Sequence[float]) -> str:
    if not values:
        return "– | – | –"
    return f"{percentile(values, 0.5) * 1000:.0f} | {percentile(values, 0.95) * 1000:.0f} | {max(values) * 1000:.0f}"


def secs(values: Sequence[float]) -> str:
    if not values:
        return "– | – | –"
    return f"{percentile(values, 0.5):.2f} | {percentile(values, 0.95):.2f} | {max(values):.2f}"


def first_words(turns: Sequence[Turn]) -> list[float]:
    return [turn.first_word for turn in turns if turn.first_word is not None]


def card_delays(turns: Sequence[Turn], *, last: bool | None = None) -> list[float]:
    """Every exercise preview's delay; `last=False` without the workout's last exercise, `True` only it."""
    found = []
    for turn in turns:
        for index, delay in turn.cards.items():
            if last is None or (index == EXERCISES - 1) == last:
                found.append(delay)
    return found


def of(turns: Sequence[Turn], attribute: str) -> list[float]:
    return [value for turn in turns if (value := getattr(turn, attribute)) is not None]


def previewed(turns: Sequence[Turn]) -> str:
    """How many turns showed each number of exercise previews, and which exercises were not previewed."""
    counts: dict[int, int] = defaultdict(int)
    missing: dict[int, int] = defaultdict(int)
    for turn in turns:
        counts[len(turn.cards)] += 1
        for index in range(EXERCISES):
            if index not in turn.cards:
                missing[index] += 1
    text = ", ".join(f"{cards} cards: {n} turns" for cards, n in sorted(counts.items(), reverse=True))
    if missing:
        text += (
            " (not previewed: "
            + ", ".join(f"exercise {i + 1} in {n}" for i, n in sorted(missing.items()))
            + ")"
        )
    return text


def print_turn_table(title: str, with_previews: Sequence[Turn], without: Sequence[Turn]) -> None:
    print(f"\n### {title}\n")
    print("| measure | turns | p50 | p95 | max |")
    print("|---|---:|---:|---:|---:|")
    print(
        f"| first word at the client − model's first token of the message (ms) | {len(first_words(with_previews))} | {ms(first_words(with_previews))} |"
    )
    print(
        f"| each card at the client − model finished writing it (ms) | {len(card_delays(with_previews))} | {ms(card_delays(with_previews))} |"
    )
    print(
        f"| … exercises 1-{EXERCISES - 1} (ms) | {len(card_delays(with_previews, last=False))} | {ms(card_delays(with_previews, last=False))} |"
    )
    print(
        f"| … exercise {EXERCISES}, the last (ms) | {len(card_delays(with_previews, last=True))} | {ms(card_delays(with_previews, last=True))} |"
    )
    print(
        f"| first card after the request, previews (s) | {len(of(with_previews, 'first_card'))} | {secs(of(with_previews, 'first_card'))} |"
    )
    print(
        f'| first card after the request, `"preview": false`: the workout\'s tool_result (s) | {len(of(without, "first_card"))} | {secs(of(without, "first_card"))} |'
    )
    print(
        f"| delivered card (message_notify_user + artifact), previews (s) | {len(of(with_previews, 'delivered'))} | {secs(of(with_previews, 'delivered'))} |"
    )
    print(
        f'| delivered card, `"preview": false` (s) | {len(of(without, "delivered"))} | {secs(of(without, "delivered"))} |'
    )
    print(f"| `done`, previews (s) | {len(of(with_previews, 'done'))} | {secs(of(with_previews, 'done'))} |")
    print(f'| `done`, `"preview": false` (s) | {len(of(without, "done"))} | {secs(of(without, "done"))} |')
    print(f"\nExercise previews per turn (of {EXERCISES}): {previewed(with_previews)}.")
    failed = [turn for turn in (*with_previews, *without) if not turn.ok]
    print(f"Turns that failed: {len(failed)}" + (f" ({failed[0].stream.error})" if failed else "") + ".")
    print(
        "\nWhere the time to the first card goes (medians, ms; without previews the card is the workout's tool_result):\n"
    )
    print('| step | previews | `"preview": false` |')
    print("|---|---:|---:|")
    for step in STEPS:
        on = [turn.steps[step] for turn in with_previews if step in turn.steps]
        off = [turn.steps[step] for turn in without if step in turn.steps]
        if on or off:
            print(f"| {step} | {fmt_ms(median(on))} | {fmt_ms(median(off))} |")


def print_bursts(bursts: Sequence[Burst]) -> None:
    if not bursts:
        return
    print("\n### Bursts\n")
    print(
        "| burst | previews | ok | errors | wall (s) | first word p95 (ms) | card p95 (ms) | first card p95 (s) "
        "| done p95 (s) | CPU web+worker per turn (ms) | … web | … worker | PostgreSQL per turn (ms) "
        "| this process (s) | load |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for number, item in enumerate(bursts, 1):
        size = len(item.turns)
        pg = f"{item.postgres / size * 1000:.0f}" if item.postgres is not None else "–"
        print(
            f"| {number} | {'yes' if item.preview else 'no'} | {size - len(item.errors)} | {len(item.errors)} "
            f"| {item.wall:.1f} | {fmt_ms(percentile(first_words(item.turns), 0.95))} "
            f"| {fmt_ms(percentile(card_delays(item.turns), 0.95))} "
            f"| {percentile(of(item.turns, 'first_card'), 0.95):.2f} | {percentile(of(item.turns, 'done'), 0.95):.2f} "
            f"| {item.cpu / size * 1000:.0f} | {item.web_cpu / size * 1000:.0f} "
            f"| {(item.cpu - item.web_cpu) / size * 1000:.0f} | {pg} | {item.client:.1f} | {item.load} |"
        )
    for item in bursts:
        if item.errors:
            print(
                f"\nBurst errors ({'previews' if item.preview else 'no previews'}): {sorted(set(item.errors))[:5]}"
            )
    on = [item for item in bursts if item.preview]
    off = [item for item in bursts if not item.preview]
    if on and off:
        cpu_on = sum(item.cpu for item in on) / sum(len(item.turns) for item in on)
        cpu_off = sum(item.cpu for item in off) / sum(len(item.turns) for item in off)
        print(
            f"\nCPU per turn, web + worker: {cpu_on * 1000:.0f} ms with previews, {cpu_off * 1000:.0f} ms without: "
            f"{(cpu_on / cpu_off - 1) * 100:+.1f} %."
        )
        turns = [turn for item in on for turn in item.turns]
        print(
            f"With previews over all bursts: first word p50/p95/max {ms(first_words(turns))} ms, "
            f"card {ms(card_delays(turns))} ms (exercises 1-{EXERCISES - 1}: {ms(card_delays(turns, last=False))}), "
            f"first card {secs(of(turns, 'first_card'))} s; exercise previews per turn: {previewed(turns)}."
        )


def fmt_ms(value: float) -> str:
    return "–" if value != value else f"{value * 1000:.0f}"


# --- main -------------------------------------------------------------------------------------------------------


async def run(args: argparse.Namespace, running: Cluster, fake: FakeModelServer) -> None:
    from datasources_app.demo import DEMO_USER_ID

    token = running.token(DEMO_USER_ID)
    print("warming up ...", file=sys.stderr)
    warm = await alone(running, fake, 1, token, "warm")
    if not all(turn.ok for turn in warm):
        raise SystemExit(
            f"the warm-up turns failed: {[turn.stream.error for turn in warm]}\n{running.webs[0].log_tail()}"
        )
    print(f"{args.turns} + {args.turns} turns one at a time ...", file=sys.stderr)
    solo = await alone(running, fake, args.turns, token, "solo")
    bursts = []
    for round_number in range(args.rounds):
        for preview in (True, False) if round_number % 2 == 0 else (False, True):
            await quiet(3)
            print(f"burst of {args.burst}, previews {'on' if preview else 'off'} ...", file=sys.stderr)
            bursts.append(await burst(running, fake, args.burst, token, f"b{round_number}", preview))

    print(f"## Previews: {args.turns} turns alone, bursts of {args.burst}\n")
    print(
        f"Commit {revision()}; {platform.python_version()}; {running.engine}; 1 web (daphne) + 1 worker × "
        f"{args.threads} threads; fake model {args.ttft * 1000:.0f} ms to the first token, {args.tps:g} tokens/s; "
        f"initializer: {args.initializer}; workout: {args.workout}; preview interval {running.env.get('PREVIEW_INTERVAL_SECONDS', '0.075 (default)')} s; "
        f"load average at the end {load_average()}."
    )
    print_turn_table(
        "Turns one at a time",
        [turn for turn in solo if turn.preview],
        [turn for turn in solo if not turn.preview],
    )
    print_bursts(bursts)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--turns", type=int, default=20, help="turns one at a time, with and without previews each"
    )
    parser.add_argument("--burst", type=int, default=50, help="concurrent turns per burst")
    parser.add_argument(
        "--rounds", type=int, default=2, help="pairs of bursts (previews, no previews); 0: none"
    )
    parser.add_argument("--ttft", type=float, default=0.6, help="fake model: seconds to the first token")
    parser.add_argument("--tps", type=float, default=150.0, help="fake model: output tokens per second")
    parser.add_argument("--threads", type=int, default=64, help="worker threads (concurrent turns)")
    parser.add_argument("--initializer", choices=("fake", "offline"), default="fake")
    parser.add_argument(
        "--workout",
        choices=("write", "draft"),
        default="write",
        help="the fake writes the workout out (generate_workout, previewed) or drafts it from a brief (draft_workout)",
    )
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the servers")
    args = parser.parse_args()
    script = WorkoutTurnScript(EXERCISES, draft=args.workout == "draft")
    initializer = MODEL_ID if args.initializer == "fake" else "offline"
    run_against_fake(args, script, run, name="previews", extra_env={"INITIALIZER_MODEL": initializer})


def run_against_fake(
    args: argparse.Namespace,
    script: WorkoutTurnScript,
    body: Callable[[argparse.Namespace, Cluster, FakeModelServer], Coroutine[Any, Any, None]],
    *,
    name: str,
    extra_env: dict[str, str],
) -> None:
    """Run `body` against one web and one worker (`--threads`) on PostgreSQL, the trainer's model the streaming
    fake at `--ttft`/`--tps` (`--env NAME=VALUE` pairs win over `extra_env`); the fake stops after."""
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        raise SystemExit(
            "DATABASE_URL must point at a PostgreSQL server (a database of its own is made there)"
        )
    fake = FakeModelServer(script, ttft=args.ttft, tps=args.tps).start()
    extra = {
        "ANTHROPIC_BASE_URL": fake.base_url,
        "ANTHROPIC_API_KEY": "benchmark-key",
        "PRIMARY_MODEL": MODEL_ID,
        **extra_env,
        **dict(item.split("=", 1) for item in args.env),
    }
    try:
        with cluster(
            name=name, models={}, web=1, workers=1, threads=args.threads, extra_env=extra
        ) as running:
            asyncio.run(body(args, running, fake))
    finally:
        fake.stop()


if __name__ == "__main__":
    main()
