"""Where the previews' CPU goes in the worker and the web, counted per thread (issue 25's ≤ +15 % per turn).

    DATABASE_URL=postgres://postgres@127.0.0.1:5439/postgres .venv/bin/python benchmarks/preview_threads.py
    DATABASE_URL=... .venv/bin/python benchmarks/preview_threads.py --burst 20 --rounds 3 --env NAME=VALUE

The cluster and the turns of `benchmarks/previews.py` (1 web, 1 worker, the streaming fake model in this
process), in smaller bursts alternating with and without previews (on, off, off, on, ...). Around each burst it
reads every thread of the worker and the web (`/proc/<pid>/task/<tid>/stat`: user and system time;
`.../status`: voluntary and involuntary context switches). Context switches are counts of blocking (a thread
waiting for a socket, a lock, the GIL), so unlike times they barely move with the box's load: the A/B of counts
in one run is the measurement to trust, the times beside it. Threads are grouped as the main thread, the
previews' sender (the thread that appears with the first turn with previews), and the rest (the turns' threads,
the pool's, the listener). Prints Markdown.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
if str(BASE_DIR) not in sys.path:
    sys.path.insert(0, str(BASE_DIR))

from benchmarks.cluster import (  # noqa: E402
    CLK_TCK,
    Cluster,
    load_average,
    percentile,
    revision,
)
from benchmarks.previews import (  # noqa: E402
    EXERCISES,
    MODEL_ID,
    alone,
    burst,
    card_delays,
    first_words,
    run_against_fake,
)
from tests.support.fake_model_server import FakeModelServer, WorkoutTurnScript  # noqa: E402


@dataclass
class ThreadCounts:
    user: float  # s
    system: float  # s
    voluntary: int
    involuntary: int

    def __sub__(self, other: ThreadCounts) -> ThreadCounts:
        return ThreadCounts(
            self.user - other.user,
            self.system - other.system,
            self.voluntary - other.voluntary,
            self.involuntary - other.involuntary,
        )

    def __add__(self, other: ThreadCounts) -> ThreadCounts:
        return ThreadCounts(
            self.user + other.user,
            self.system + other.system,
            self.voluntary + other.voluntary,
            self.involuntary + other.involuntary,
        )


ZERO = ThreadCounts(0.0, 0.0, 0, 0)


def thread_counts(pid: int) -> dict[int, ThreadCounts]:
    found = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            status = dict(
                line.split(":", 1) for line in (task / "status").read_text().splitlines() if ":" in line
            )
            found[int(task.name)] = ThreadCounts(
                int(fields[11]) / CLK_TCK,
                int(fields[12]) / CLK_TCK,
                int(status["voluntary_ctxt_switches"]),
                int(status["nonvoluntary_ctxt_switches"]),
            )
    return found


def delta(after: dict[int, ThreadCounts], before: dict[int, ThreadCounts]) -> dict[int, ThreadCounts]:
    return {tid: counts - before.get(tid, ZERO) for tid, counts in after.items()}


def total(counts: dict[int, ThreadCounts], tids: set[int] | None = None) -> ThreadCounts:
    result = ZERO
    for tid, each in counts.items():
        if tids is None or tid in tids:
            result = result + each
    return result


@dataclass
class Measured:
    preview: bool
    turns: int
    ok: int
    worker: dict[int, ThreadCounts]
    web: dict[int, ThreadCounts]
    load: str
    first_word_p95: float | None  # ms after the model's first token of the message
    card_p95: float | None  # ms after the model wrote the exercise


def p95_ms(values: list[float]) -> float | None:
    return percentile(values, 0.95) * 1000 if values else None


def gc_stats(pid: int) -> dict[str, list[float]]:
    """What `--gc`'s sitecustomize (GCSTATS) last wrote for the process: runs, seconds, collected per key."""
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(Path(f"/tmp/gcstats-{pid}.json").read_text())
        return {key: value for key, value in data.items() if key.startswith("gen")}
    return {}


def gc_delta(after: dict[str, list[float]], before: dict[str, list[float]]) -> dict[str, list[float]]:
    return {
        key: [value - base for value, base in zip(values, before.get(key, [0, 0, 0]), strict=False)]
        for key, values in after.items()
    }


def record(directory: str | None, pid: int, name: str) -> subprocess.Popen[bytes] | None:
    """`perf record` of the worker during one burst (with PYTHONPERFSUPPORT=1 it names Python functions)."""
    if not directory:
        return None
    Path(directory).mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        ["perf", "record", "-q", "-F", "997", "-g", "-p", str(pid), "-o", f"{directory}/{name}.data"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def per_turn(counts: ThreadCounts, turns: int) -> tuple[float, float, float, float]:
    return (
        counts.user * 1000 / turns,
        counts.system * 1000 / turns,
        counts.voluntary / turns,
        counts.involuntary / turns,
    )


def row(label: str, measured: list[Measured], pick: dict[str, set[int] | None], process: str) -> str:
    cells = []
    for preview in (True, False):
        runs = [each for each in measured if each.preview == preview]
        values = [per_turn(total(getattr(each, process), pick[process]), each.turns) for each in runs]
        means = [statistics.mean(column) for column in zip(*values, strict=True)] if values else [0.0] * 4
        cells.append(" / ".join(f"{value:.1f}" for value in means))
    return f"| {label} | {cells[0]} | {cells[1]} |"


async def run(args: argparse.Namespace, running: Cluster, fake: FakeModelServer) -> None:
    from datasources_app.demo import DEMO_USER_ID

    token = running.token(DEMO_USER_ID)
    worker, web = running.workers[0].pid, running.webs[0].pid
    before_previews = set(thread_counts(worker))
    warm = await alone(running, fake, 1, token, "warm")
    if not all(turn.ok for turn in warm):
        raise SystemExit(f"the warm-up turns failed: {[turn.stream.error for turn in warm]}")
    sender = set(thread_counts(worker)) - before_previews  # started by the first publication
    measured: list[Measured] = []
    gc_runs: list[tuple[bool, dict[str, list[float]]]] = []
    for round_number in range(args.rounds):
        for preview in (True, False) if round_number % 2 == 0 else (False, True):
            await asyncio.sleep(3)
            print(f"burst of {args.burst}, previews {'on' if preview else 'off'} ...", file=sys.stderr)
            worker_before, web_before = thread_counts(worker), thread_counts(web)
            gc_before = gc_stats(worker)
            recording = record(args.perf, worker, f"r{round_number}-{'on' if preview else 'off'}")
            done = await burst(running, fake, args.burst, token, f"t{round_number}", preview)
            if recording is not None:
                recording.send_signal(signal.SIGINT)
                recording.wait()
            await asyncio.sleep(0.6)  # the GC counts' writer (GCSTATS, --gc) writes every 0.25 s
            gc_runs.append((preview, gc_delta(gc_stats(worker), gc_before)))
            measured.append(
                Measured(
                    preview=preview,
                    turns=args.burst,
                    ok=sum(1 for turn in done.turns if turn.ok),
                    worker=delta(thread_counts(worker), worker_before),
                    web=delta(thread_counts(web), web_before),
                    load=load_average(),
                    first_word_p95=p95_ms(first_words(done.turns)),
                    card_p95=p95_ms(card_delays(done.turns)),
                )
            )
    others = set().union(*(set(each.worker) for each in measured)) - sender - {worker}
    print(f"## Previews per thread: bursts of {args.burst}, {args.rounds} pairs\n")
    print(
        f"Commit {revision()}; 1 web + 1 worker × {args.threads} threads; fake model {args.ttft * 1000:.0f} ms "
        f"to the first token, {args.tps:g} tokens/s, {EXERCISES} exercises; env {args.env or '-'}; "
        f"load average at the end {load_average()}; turns ok: "
        f"{sum(each.ok for each in measured)}/{sum(each.turns for each in measured)}.\n"
    )
    print(
        "Per turn, means over the bursts: user ms / system ms / voluntary / involuntary context switches.\n"
    )
    print("| threads | previews | none |")
    print("|---|---|---|")
    print(row("worker, all", measured, {"worker": None}, "worker"))
    print(row("worker, main thread", measured, {"worker": {worker}}, "worker"))
    print(row("worker, the previews' sender", measured, {"worker": sender}, "worker"))
    print(row("worker, the others (turns, pool, listener)", measured, {"worker": others}, "worker"))
    print(row("web, all", measured, {"web": None}, "web"))
    print("\nEach burst (worker all; web all):\n")
    for each in measured:
        w = per_turn(total(each.worker), each.turns)
        s = per_turn(total(each.worker, sender), each.turns)
        b = per_turn(total(each.web), each.turns)
        print(
            f"- {'on ' if each.preview else 'off'}: worker {w[0]:.1f} / {w[1]:.1f} / {w[2]:.0f} / {w[3]:.0f}"
            f" (sender {s[2]:.1f} vol); web {b[0]:.1f} / {b[1]:.1f} / {b[2]:.0f} / {b[3]:.0f}; load {each.load}"
            + (
                f"; first word p95 {each.first_word_p95:.0f} ms, card p95 {each.card_p95:.0f} ms"
                if each.first_word_p95 is not None and each.card_p95 is not None
                else ""
            )
        )
    if any(stats for _, stats in gc_runs):
        print("\nThe worker's garbage collections per turn (runs, ms), means over the bursts:\n")
        for preview in (True, False):
            collections = [stats for on, stats in gc_runs if on == preview]
            keys = sorted(set().union(*collections))
            cells = [
                f"{key} {sum(stats.get(key, [0, 0])[0] for stats in collections) / len(collections) / args.burst:.2f}"
                + (
                    f" ({sum(stats.get(key, [0, 0])[1] for stats in collections) * 1000 / len(collections) / args.burst:.1f} ms)"
                    if ":" not in key
                    else ""
                )
                for key in keys
            ]
            print(f"- previews {'on' if preview else 'off'}: " + ", ".join(cells))
    if args.top:
        for preview in (True, False):
            runs = [each for each in measured if each.preview == preview]
            summed: dict[int, ThreadCounts] = {}
            for each in runs:
                for tid, counts in each.worker.items():
                    summed[tid] = summed.get(tid, ZERO) + counts
            busiest = sorted(summed.items(), key=lambda item: -item[1].voluntary)[: args.top]
            print(f"\nBusiest worker threads, previews {'on' if preview else 'off'} (summed over bursts):")
            for tid, counts in busiest:
                print(f"- {tid}: {counts}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--burst", type=int, default=20, help="concurrent turns per burst")
    parser.add_argument("--rounds", type=int, default=3, help="pairs of bursts (previews, no previews)")
    parser.add_argument("--threads", type=int, default=64, help="worker threads")
    parser.add_argument("--ttft", type=float, default=0.6)
    parser.add_argument("--tps", type=float, default=150.0)
    parser.add_argument("--top", type=int, default=0, help="list the N worker threads that switched most")
    parser.add_argument(
        "--gc",
        action="store_true",
        help="count the worker's garbage collections (benchmarks/gc_counts/sitecustomize.py in the servers)",
    )
    parser.add_argument("--perf", help="a directory: `perf record` the worker during each burst there")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the servers")
    args = parser.parse_args()
    extra = {
        "INITIALIZER_MODEL": MODEL_ID,
        **({"PYTHONPATH": str(BASE_DIR / "benchmarks" / "gc_counts"), "GCSTATS": "1"} if args.gc else {}),
    }
    run_against_fake(args, WorkoutTurnScript(EXERCISES), run, name="preview-threads", extra_env=extra)


if __name__ == "__main__":
    main()
