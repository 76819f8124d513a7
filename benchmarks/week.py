"""Week chain benchmark: how long one plan week takes to prepare with the offline sub-agents, how many model
calls a week costs, and how much the prepared messages add to the `scheduled_workouts` source.

    .venv/bin/python benchmarks/week.py                  # SQLite file var/bench.sqlite3
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/h_week .venv/bin/python benchmarks/week.py --runs 20

Seeds the demo user with 90 days of history (this RESETS the demo user's data in the target database), creates
an active 12-week plan for each `--days` value (3 and 5 days a week by default) through `create_workout_plan`,
then prepares week 1 `--runs` times in this process (`prepare_plan_week`, the body of `prepare_week_task`),
marking the week pending before each run outside the timing. Reports p50 / p95 of the whole chain, the sub-agent
runs per week (from `agent_metrics`) and the `scheduled_workouts` source's size for the next 14 days before and
after the week is prepared. The real-model figure is the call count times the model's latency: the chain runs
its calls one after another.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.event_store import describe_database, percentile, setup_django

HISTORY_DAYS = 90


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--days", type=int, nargs="+", default=[3, 5])
    args = parser.parse_args()
    setup_django()

    from django.test.utils import override_settings

    from datasources_app.demo import DEMO_USER_ID
    from datasources_app.models import Preparation, ScheduledWorkout, WorkoutPlan
    from datasources_app.services import seed_demo_user, start_week_preparation
    from datasources_app.sources import fetch_and_format
    from sessions_app.services import create_session
    from tools_app.plan_builder import set_week_preparer, week_dates
    from tools_app.registry import execute_tool
    from tools_app.types import ToolContext
    from trainer_agent.agents.callbacks import agent_metrics
    from trainer_agent.agents.week import prepare_plan_week

    print(f"# Week chain: {describe_database()}, Python {platform.python_version()}, {args.runs} runs")
    print()
    print(
        "| days/week | sub-agent runs per week | p50 ms | p95 ms | schedule source chars (14 d) before → after |"
    )
    print("|---|---|---|---|---|")
    # The plan tool only marks week 1 pending here (no task is enqueued); the runs below are the task's body.
    set_week_preparer(lambda **kwargs: None)
    with override_settings(PRIMARY_MODEL="offline"):
        for days in args.days:
            seed_demo_user(reset=True, history_days=HISTORY_DAYS)
            ScheduledWorkout.objects.filter(user_id=DEMO_USER_ID).delete()
            WorkoutPlan.objects.filter(user_id=DEMO_USER_ID).delete()
            session = create_session(user_id=DEMO_USER_ID)
            ctx = ToolContext(user_id=DEMO_USER_ID, session=session)
            created = execute_tool(
                "create_workout_plan",
                {"name": "Bench", "goal": "get stronger", "days_per_week": days},
                ctx,
            )
            assert created.success, created.formatted
            plan = WorkoutPlan.objects.get(user_id=DEMO_USER_ID, status="active")
            first, last = week_dates(plan.plan, 1)
            before = fetch_and_format(
                user_id=DEMO_USER_ID, source="scheduled_workouts", params={"days_ahead": 14}
            ).chars
            timings: list[float] = []
            runs_before = sum(agent_metrics.snapshot().get(a, {}).get("runs", 0) for a in _CHAIN)
            for _ in range(args.runs):
                start_week_preparation(user_id=DEMO_USER_ID, plan_id=plan.id, first=first, last=last)
                started = time.perf_counter()
                outcome = prepare_plan_week(user_id=DEMO_USER_ID, plan_id=plan.id, week=1, session=session)
                timings.append((time.perf_counter() - started) * 1000)
                assert len(outcome.prepared) == days and not outcome.failed, outcome
            runs_after = sum(agent_metrics.snapshot().get(a, {}).get("runs", 0) for a in _CHAIN)
            after = fetch_and_format(
                user_id=DEMO_USER_ID, source="scheduled_workouts", params={"days_ahead": 14}
            ).chars
            assert all(
                item.preparation == Preparation.READY
                for item in plan.scheduled_workouts.filter(scheduled_date__lte=last)
            )
            print(
                f"| {days} | {(runs_after - runs_before) // args.runs} | {statistics.median(timings):.0f} "
                f"| {percentile(timings, 0.95):.0f} | {before:,} → {after:,} |"
            )


_CHAIN = ("microcycle", "workout_structure", "workout_message")


if __name__ == "__main__":
    main()
