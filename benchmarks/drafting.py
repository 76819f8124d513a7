"""Drafting benchmark: this process's CPU and the queries of one `draft_workout` call, split by phase.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test .venv/bin/python benchmarks/drafting.py [--drafts N]
    .venv/bin/python benchmarks/drafting.py        # SQLite file var/bench.sqlite3
    DATABASE_URL=... .venv/bin/python benchmarks/drafting.py --profile   # cProfile (CPU) of the drafts

When the model asks for a workout with `draft_workout` (a short brief), the tool composes it from the user's
facts and the catalogue, checks it and saves it as `generate_workout` does; the GIL is held for all of it, so 50
drafts at once queue behind each other (issue 25). Migrates the target database, loads the exercise catalogue,
seeds the demo user (this RESETS the demo user's data: 90 days of logged workouts, Home with dumbbells, bench
and bands, a knee limitation, a "no burpees" preference) and runs each brief of `BRIEFS` `--drafts` times
(default 20) through `execute_tool`, as the agent loop does, after one untimed warm-up draft (the catalogue is
kept per process). Reports, per brief, the median CPU time of this process per draft (`time.process_time`) and
the queries per draft (`CaptureQueriesContext`, counted in a second, untimed pass), each split by phase:

- compose: the brief to a workout (the user's facts, choosing exercises, loads), less the checks it makes;
- validate: checking a workout against the user's facts (`check_exercises`, wherever it is called, and the
  `load_training_context` reads it needs; where the facts read for composing serve the check too, those reads
  count as compose);
- save: `generate_workout` (or `save_checked_workout`), less its checks: storing the checked workout
  (artifact, current workout, warnings).

Each brief's result is also reduced to a digest (the tool's text and data, and the stored current workout, with
the random `art_`/`ex_` ids and the clock's "N h ago" masked), so two checkouts can be compared for identical output.

`--against CHECKOUT` is an A/B in one run: each run measures the code of CHECKOUT (A, e.g. a worktree of main)
and this checkout's (B) in turn, A first in even runs and B first in odd ones, each in a process of its own
(this harness, with the other checkout's code first on sys.path), on DATABASE_URL (or `--against-database` for
A), and the table sets them side by side (CPU: the median of the runs' medians) with whether every run's
digests agree:

    DATABASE_ASSUME_ROLE=trainer_app DATABASE_URL=postgres://…/b .venv/bin/python benchmarks/drafting.py \
        --against ../main --runs 2

Runs with DEBUG off. Prints Markdown tables (docs/benchmarks.md keeps the recorded results).
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import os
import platform
import pstats
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
# --against runs this harness on another checkout's code: that checkout first on sys.path.
CODE_DIR = Path(os.environ.get("DRAFTING_CODE_DIR") or BASE_DIR).resolve()
if str(CODE_DIR) not in sys.path:
    sys.path.insert(0, str(CODE_DIR))

from benchmarks.event_store import cpu_reference_ms, describe_database, setup_django  # noqa: E402

DEFAULT_DRAFTS = 20
HISTORY_DAYS = 90
PHASES = ("compose", "validate", "save")
# name → the draft_workout brief (the demo user's profile has a knee limitation; their current location is Home).
BRIEFS: dict[str, dict[str, Any]] = {
    "full body 35 min": {"focus": ["full body"], "minutes": 35},
    "legs 45 min (knee limitation)": {"focus": ["legs"], "minutes": 45},
    "upper body at home, dumbbells only": {
        "focus": ["upper body"],
        "minutes": 40,
        "avoid": ["bench", "resistance bands"],
    },
    "HIIT bodyweight 20 min": {"style": "hiit", "minutes": 20, "bodyweight_only": True},
    "chest & triceps 30 min, hard, no push-ups": {
        "focus": ["chest", "triceps"],
        "minutes": 30,
        "intensity": "hard",
        "avoid": ["push-ups"],
    },
    "mobility 20 min": {"style": "mobility", "minutes": 20},
    "cardio 30 min": {"style": "cardio", "minutes": 30},
}
_IDS = re.compile(r"\b(?:art|ex)_[0-9a-f]{6,12}\b")
_HOURS_AGO = re.compile(r"\b\d+(?:\.\d+)? h ago\b")  # the warnings' "trained 34.6 h ago" moves with the clock


class PhaseClock:
    """CPU time and queries per phase: functions wrapped by `wrap` charge their time to their phase, less the
    time of wrapped functions they call (which charge theirs to their own phase)."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = defaultdict(float)
        self.queries: dict[str, int] = defaultdict(int)
        self._stack: list[tuple[str, float, int]] = []
        self.query_count: Callable[[], int] = lambda: 0

    def wrap(self, phase: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            with self.charge(phase):
                return function(*args, **kwargs)

        timed.__wrapped__ = function  # type: ignore[attr-defined]
        return timed

    @contextmanager
    def charge(self, phase: str) -> Iterator[None]:
        started, queries = time.process_time(), self.query_count()
        if self._stack:  # pause the caller's phase
            outer, outer_started, outer_queries = self._stack[-1]
            self.cpu[outer] += started - outer_started
            self.queries[outer] += queries - outer_queries
        self._stack.append((phase, started, queries))
        try:
            yield
        finally:
            ended, queries_now = time.process_time(), self.query_count()
            _, phase_started, phase_queries = self._stack.pop()
            self.cpu[phase] += ended - phase_started
            self.queries[phase] += queries_now - phase_queries
            if self._stack:  # resume the caller's phase
                outer, _, _ = self._stack[-1]
                self._stack[-1] = (outer, ended, queries_now)

    def reset(self) -> None:
        self.cpu.clear()
        self.queries.clear()


def install_phase_clock() -> PhaseClock:
    """Wrap the phase functions in every tools_app module that refers to them (by name, so both checkouts'
    code is measured the same way)."""
    import tools_app.workout_drafting
    import tools_app.workout_tools
    import tools_app.workout_validation

    clock = PhaseClock()
    phases = {
        "check_exercises": "validate",
        "load_training_context": "validate",
        "generate_workout": "save",
        "save_checked_workout": "save",
    }
    for module in (tools_app.workout_validation, tools_app.workout_tools, tools_app.workout_drafting):
        for name, phase in phases.items():
            function = getattr(module, name, None)
            if callable(function):
                setattr(module, name, clock.wrap(phase, getattr(function, "__wrapped__", function)))
    # The registered tool's handler was bound at import: wrap it for the compose phase (everything else).
    from tools_app.registry import get_tool

    tool = get_tool("draft_workout")
    handler = tool.handler
    object.__setattr__(tool, "handler", clock.wrap("compose", handler))
    return clock


def prepare() -> Any:
    """The catalogue, the demo user (reset, 90 days of logs) and a session for the drafts."""
    from datasources_app import services
    from datasources_app.demo import DEMO_USER_ID
    from sessions_app.services import create_session
    from tools_app.types import ToolContext

    services.load_exercise_catalog()
    services.seed_demo_user(reset=True, history_days=HISTORY_DAYS)
    session = create_session(user_id=DEMO_USER_ID, metadata={"benchmark": "drafting"})
    return ToolContext(user_id=DEMO_USER_ID, session=session)


def digest(result: Any, user_id: Any) -> str:
    """The tool's text and data and the stored current workout, random ids masked, as a short hash."""
    from datasources_app.selectors import get_current_workout

    current = get_current_workout(user_id=user_id)
    seen = {
        "text": result.raw_formatted,
        "success": result.success,
        "data": result.data,
        "stored": current.workout if current is not None else None,
    }
    return hashlib.sha256(_IDS.sub("id", json.dumps(seen, sort_keys=True, default=str)).encode()).hexdigest()[
        :12
    ]


def measure(drafts: int) -> dict[str, Any]:
    """Every brief `drafts` times: per-draft CPU and queries by phase, and each brief's digest."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tools_app.registry import execute_tool

    ctx = prepare()
    clock = install_phase_clock()
    rows: dict[str, Any] = {}
    try:
        execute_tool("draft_workout", BRIEFS["full body 35 min"], ctx)  # the catalogue, once per process
        for name, brief in BRIEFS.items():
            cpu: dict[str, list[float]] = {phase: [] for phase in (*PHASES, "total")}
            for _ in range(drafts):
                clock.reset()
                started = time.process_time()
                result = execute_tool("draft_workout", brief, ctx)
                total = time.process_time() - started
                assert result.success, result.raw_formatted
                for phase in PHASES:
                    cpu[phase].append(clock.cpu[phase] * 1000)
                cpu["total"].append(total * 1000)
            clock.reset()
            with CaptureQueriesContext(connection) as captured:
                clock.query_count = captured.__len__
                result = execute_tool("draft_workout", brief, ctx)
                clock.query_count = lambda: 0
            queries = {phase: clock.queries[phase] for phase in PHASES}
            queries["total"] = len(captured.captured_queries)
            rows[name] = {
                "cpu": {phase: statistics.median(values) for phase, values in cpu.items()},
                "queries": queries,
                "digest": digest(result, ctx.user_id),
                "exercises": result.data.get("exercise_count"),
            }
    finally:
        from sessions_app.services import delete_session

        delete_session(session=ctx.session)
    return rows


def profile(drafts: int) -> None:
    """cProfile (CPU time) of `drafts` drafts of each brief; prints the top functions by cumulative time."""
    from tools_app.registry import execute_tool

    ctx = prepare()
    execute_tool("draft_workout", BRIEFS["full body 35 min"], ctx)
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    for brief in BRIEFS.values():
        for _ in range(drafts):
            execute_tool("draft_workout", brief, ctx)
    profiler.disable()
    stats = pstats.Stats(profiler)
    stats.sort_stats("cumulative").print_stats(45)
    stats.sort_stats("tottime").print_stats(30)


def run_as_json(drafts: int) -> None:
    """One measurement of this process's code, printed as one JSON line for `--against`."""
    from benchmarks.cluster import revision

    reference = cpu_reference_ms()
    rows = measure(drafts)
    print(
        json.dumps(
            {
                "revision": revision(),
                "database": describe_database(),
                "cpu_reference_ms": reference,
                "rows": rows,
            }
        )
    )


def run_side(checkout: Path, database: str, drafts: int) -> dict[str, Any]:
    import subprocess

    env = {**os.environ, "DRAFTING_CODE_DIR": str(checkout)}
    if database:
        env["DATABASE_URL"] = database
    completed = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--run-json", "--drafts", str(drafts)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def _phases(row: dict[str, Any], key: str, fmt: str) -> str:
    return " / ".join(format(row[key][phase], fmt) for phase in PHASES)


def compare_checkouts(against: Path, against_database: str, drafts: int, runs: int) -> None:
    """A/B: checkout `against` (A) and this one (B), each in a fresh process, alternating; side by side."""
    sides = {"A": (against.resolve(), against_database), "B": (BASE_DIR, os.environ.get("DATABASE_URL", ""))}
    load_before = " / ".join(f"{value:.2f}" for value in os.getloadavg())
    results: dict[str, list[dict[str, Any]]] = {"A": [], "B": []}
    for run in range(runs):
        for side in ("A", "B") if run % 2 == 0 else ("B", "A"):
            checkout, database = sides[side]
            results[side].append(run_side(checkout, database, drafts))
            print(f"run {run + 1} {side} ({results[side][-1]['revision']}) done", file=sys.stderr)
    load = " / ".join(f"{value:.2f}" for value in os.getloadavg())
    a0, b0 = results["A"][0], results["B"][0]
    references = ", ".join(f"{side} {r['cpu_reference_ms']:.0f}" for side in "AB" for r in results[side])
    print(
        f"database: {b0['database']}; A {a0['revision']} ({sides['A'][0]}), B {b0['revision']} ({sides['B'][0]}); "
        f"{runs} run(s) of each, {drafts} drafts per brief per run, alternating (A first in odd runs); "
        f"Python {platform.python_version()}; load average before: {load_before}, after: {load}; "
        f"cpu_reference_ms per run: {references}"
    )
    print()
    print(
        "| brief | exercises | CPU per draft, median A / B (ms) | A: compose / validate / save (ms) "
        "| B: compose / validate / save (ms) | queries A / B | A: compose / validate / save "
        "| B: compose / validate / save | same output |"
    )
    print("|---|---:|---|---|---|---|---|---|---|")
    totals: dict[str, list[float]] = {"A": [], "B": []}
    for name in BRIEFS:

        def pooled(side: str, phase: str, name: str = name) -> float:
            return statistics.median(r["rows"][name]["cpu"][phase] for r in results[side])

        a = {**a0["rows"][name], "cpu": {phase: pooled("A", phase) for phase in (*PHASES, "total")}}
        b = {**b0["rows"][name], "cpu": {phase: pooled("B", phase) for phase in (*PHASES, "total")}}
        totals["A"].append(a["cpu"]["total"])
        totals["B"].append(b["cpu"]["total"])
        digests = {r["rows"][name]["digest"] for side in "AB" for r in results[side]}
        print(
            f"| {name} | {b['exercises']} | {a['cpu']['total']:.1f} / **{b['cpu']['total']:.1f}** "
            f"| {_phases(a, 'cpu', '.1f')} | {_phases(b, 'cpu', '.1f')} "
            f"| {a['queries']['total']} / **{b['queries']['total']}** | {_phases(a, 'queries', 'd')} "
            f"| {_phases(b, 'queries', 'd')} | {'yes' if len(digests) == 1 else 'NO'} |"
        )
    print(
        f"| **mean of the briefs** | | {statistics.mean(totals['A']):.1f} / **{statistics.mean(totals['B']):.1f}** "
        "| | | | | | |"
    )


def print_single(result: dict[str, Any], drafts: int) -> None:
    load = " / ".join(f"{value:.2f}" for value in os.getloadavg())
    print(
        f"database: {result['database']}; {result['revision']}; {drafts} drafts per brief; Python "
        f"{platform.python_version()}; load average: {load}; cpu_reference_ms: {result['cpu_reference_ms']:.0f}"
    )
    print()
    print(
        "| brief | exercises | CPU per draft, median (ms) | compose / validate / save (ms) | queries "
        "| compose / validate / save | digest |"
    )
    print("|---|---:|---:|---|---:|---|---|")
    for name, row in result["rows"].items():
        print(
            f"| {name} | {row['exercises']} | {row['cpu']['total']:.1f} | {_phases(row, 'cpu', '.1f')} "
            f"| {row['queries']['total']} | {_phases(row, 'queries', 'd')} | {row['digest']} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--drafts", type=int, default=DEFAULT_DRAFTS, help="timed drafts per brief (default 20)"
    )
    parser.add_argument("--runs", type=int, default=1, help="with --against: runs of each side")
    parser.add_argument("--profile", action="store_true", help="cProfile (CPU) of the drafts instead")
    parser.add_argument(
        "--against",
        type=Path,
        metavar="CHECKOUT",
        help="A/B in one run: alternate runs of CHECKOUT's code (A) and this checkout's (B)",
    )
    parser.add_argument("--against-database", metavar="URL", default="", help="A's database (default: B's)")
    parser.add_argument("--run-json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.against is not None:
        compare_checkouts(args.against, args.against_database, args.drafts, args.runs)
        return
    setup_django()
    if args.profile:
        profile(args.drafts)
    elif args.run_json:
        run_as_json(args.drafts)
    else:
        from benchmarks.cluster import revision

        reference = cpu_reference_ms()
        rows = measure(args.drafts)
        result = {"revision": revision(), "database": describe_database(), "cpu_reference_ms": reference}
        print_single({**result, "rows": rows}, args.drafts)


if __name__ == "__main__":
    main()
