"""get_workout_statistics, get_exercise_breakdown, get_progress_trends, generate_stats_summary (docs/contracts.md §11.5 (tool list)):
real figures from the logs, checked against hand-computed values."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from datasources_app.models import WorkoutLogEntry
from tests.datasources_app.factories import WorkoutLogEntryFactory, WorkoutLogFactory
from tests.tools_app.workout_support import Trainee, make_trainee
from tools_app.registry import get_tool

pytestmark = pytest.mark.django_db

CHEST = [{"muscle": "Chest", "share": 1.0}]
LEGS = [{"muscle": "Quadriceps", "share": 1.0}]


def log_entry(
    trainee: Trainee, when: dt.datetime, name: str, reps: list[int], load: list[float], **extra: Any
) -> WorkoutLogEntry:
    log = WorkoutLogFactory.create(user_id=trainee.user_id, completed_at=when)
    values: dict[str, Any] = {
        "exercise_name": name,
        "exercise_slug": "",
        "actual_sets": len(reps),
        "actual_reps": reps,
        "actual_load_each": load,
        "muscles": CHEST if "Bench" in name else LEGS,
        **extra,
    }
    entry: WorkoutLogEntry = WorkoutLogEntryFactory.create(log=log, **values)
    return entry


def days_ago(days: int) -> dt.datetime:
    return timezone.now() - dt.timedelta(days=days)


def seed_history(trainee: Trainee) -> None:
    """3 days ago: bench 3×8 @ 60 (1440 kg) + squat 3×5 @ 100 (1500 kg) + a 30 min run, RPE 8;
    10 days ago: bench 3×8 @ 55 (1320 kg); 40 days ago: bench 3×5 @ 70 (1050 kg, e1RM 81.7)."""
    recent = WorkoutLogFactory.create(user_id=trainee.user_id, completed_at=days_ago(3))
    common = {"exercise_slug": "", "actual_sets": 3, "rpe": 8}
    WorkoutLogEntryFactory.create(
        log=recent,
        exercise_name="Bench Press",
        actual_reps=[8, 8, 8],
        actual_load_each=[60, 60, 60],
        muscles=CHEST,
        **common,
    )
    WorkoutLogEntryFactory.create(
        log=recent,
        exercise_name="Barbell Squat",
        actual_reps=[5, 5, 5],
        actual_load_each=[100] * 3,
        muscles=LEGS,
        **common,
    )
    WorkoutLogEntryFactory.create(
        log=recent,
        exercise_name="Easy Run",
        exercise_slug="",
        exercise_type="duration",
        actual_sets=None,
        actual_reps=[],
        actual_load_each=[],
        actual_duration_min=30,
        muscles=LEGS,
    )
    log_entry(trainee, days_ago(10), "Bench Press", [8, 8, 8], [55, 55, 55])
    log_entry(trainee, days_ago(40), "Bench Press", [5, 5, 5], [70, 70, 70])


@pytest.fixture
def trainee() -> Trainee:
    return make_trainee()


@pytest.mark.parametrize(
    ("name", "start", "done"),
    [
        ("get_workout_statistics", "Crunching your numbers...", "Stats ready"),
        ("get_exercise_breakdown", "Analyzing your exercises...", "Breakdown ready"),
        ("get_progress_trends", "Checking your progress...", "Trends ready"),
        ("generate_stats_summary", "Summarizing your training...", "Summary ready"),
    ],
)
def test_analytics_tools_metadata(name: str, start: str, done: str) -> None:
    """Status messages as in docs/contracts.md §11.2 (observations and status messages); statistics are full-data observations."""
    tool = get_tool(name)
    assert (tool.status_start, tool.status_done, tool.category, tool.observation) == (
        start,
        done,
        "analytics",
        "full",
    )


def test_workout_statistics_over_the_last_30_days(trainee: Trainee) -> None:
    """2 workouts, 4 exercises, 9 sets, 1440 + 1500 + 1320 = 4260 kg, 30 min, RPE 8, 2 per 30 days."""
    seed_history(trainee)
    result = trainee.run("get_workout_statistics", {})
    assert result.success, result.formatted
    overview = result.data["overview"]
    assert (overview["workouts"], overview["exercises"], overview["sets"]) == (2, 4, 9)
    assert (overview["total_volume"], overview["total_minutes"], overview["average_rpe"]) == (4260, 30, 8)
    assert overview["workouts_per_week"] == round(2 / (30 / 7), 2)
    lines = result.raw_formatted.splitlines()
    assert lines[0] == "Statistics, last 30 days (weights in kg):"
    assert lines[1] == (
        "2 workouts (0.5/week) on 2 days, 4 exercises, 9 sets, volume 4,260kg, 30 min of cardio/intervals, "
        "average RPE 8"
    )
    assert (
        "  Bench Press (reps): 2 sessions, 6 sets, volume 2,760kg, best set 60kg × 8, e1RM 76kg (60kg × 8)"
        in result.raw_formatted
    )
    assert "Best estimated 1RM: Barbell Squat 116.7kg; Bench Press 76kg" in result.raw_formatted


def test_workout_statistics_in_pounds_and_seed_001_time_period(db: None) -> None:
    """A pound user sees pounds; time_period 'week' means the last 7 days."""
    trainee = make_trainee(weight_unit="lb")
    seed_history(trainee)
    result = trainee.run("get_workout_statistics", {"time_period": "week"})
    assert result.success, result.formatted
    assert result.data["scope"] == "last 7 days"
    assert result.data["overview"]["total_volume"] == round(2940 * 2.20462, 1)
    assert "volume 6,482lb" in result.raw_formatted


def test_workout_statistics_without_logs(trainee: Trainee) -> None:
    """No logs is a successful, explicit 'nothing logged' answer."""
    result = trainee.run("get_workout_statistics", {"days_back": 14})
    assert result.success and result.raw_formatted == "No workouts logged in last 14 days."


def test_exercise_breakdown_for_one_exercise_over_all_history(trainee: Trainee) -> None:
    """All bench sessions: 3 sessions, 9 sets, 3810 kg; best set 70 × 5 and its e1RM 81.7 kg."""
    seed_history(trainee)
    result = trainee.run("get_exercise_breakdown", {"exercise_name": "bench press"})
    assert result.success, result.formatted
    (bench,) = result.data["exercises"]
    assert (bench["sessions"], bench["sets"], bench["volume"]) == (3, 9, 3810)
    assert bench["best_set"] == {"load": 70, "reps": 5}
    assert bench["best_estimated_1rm"] == 81.7
    assert "best set 70kg × 5, e1RM 81.7kg (70kg × 5)" in result.raw_formatted


def test_exercise_breakdown_by_muscle_and_seed_001_breakdown_type(trainee: Trainee) -> None:
    """group_by (or breakdown_type) muscle gives each muscle's share of the volume proxy."""
    seed_history(trainee)
    result = trainee.run("get_exercise_breakdown", {"breakdown_type": "muscle", "days_back": 30})
    assert result.success, result.formatted
    shares = {group["name"]: group["share"] for group in result.data["groups"]}
    # The volume proxy: chest 3 + 3 sets = 6; legs 3 squat sets + the run's 30 min / 5 = 9; of 15.
    assert shares == {"Chest": 0.4, "Quadriceps": 0.6}
    assert result.raw_formatted.startswith("Share of training by muscle, last 30 days:")


def test_exercise_breakdown_of_an_unknown_exercise_fails_listing_the_logged_ones(trainee: Trainee) -> None:
    """A name with no logs fails and names the exercises that were logged."""
    seed_history(trainee)
    result = trainee.run("get_exercise_breakdown", {"exercise_name": "deadlift", "days_back": 30})
    assert not result.success
    assert "No logged 'deadlift' in last 30 days" in result.data["error"]
    assert "Bench Press" in result.data["error"] and "Barbell Squat" in result.data["error"]


def weekly_history(trainee: Trainee) -> None:
    """Monday noon of the 4 oldest of the last 7 weeks: 1000 kg; of the 3 latest: 2000 kg."""
    today = timezone.localdate()
    this_monday = today - dt.timedelta(days=today.weekday())
    for weeks_back, load in ((7, 100), (6, 100), (5, 100), (4, 100), (3, 200), (2, 200), (1, 200)):
        monday = this_monday - dt.timedelta(weeks=weeks_back)
        when = dt.datetime.combine(monday, dt.time(12), tzinfo=dt.UTC)
        log_entry(trainee, when, "Bench Press", [10], [load], rpe=7)


def test_progress_trends_weekly_volume_goes_up(trainee: Trainee) -> None:
    """8 weeks: 1000 ×4, 2000 ×3, 0 this week: the second half's mean (1500) is 50 % above the first."""
    weekly_history(trainee)
    result = trainee.run("get_progress_trends", {"weeks": 8})
    assert result.success, result.formatted
    assert [week["volume"] for week in result.data["weeks"]] == [1000] * 4 + [2000] * 3 + [0]
    assert (result.data["direction"], result.data["change"]) == ("up", 0.5)
    assert result.raw_formatted.splitlines()[-1] == "Trend: up +50% (second half of the weeks vs the first)"


def test_progress_trends_e1rm_for_one_exercise_with_seed_001_metric(trainee: Trainee) -> None:
    """Seed 001's metric 'weight' is the best estimated 1RM: 100 × (1 + 10/30) = 133.3 → 266.7 kg."""
    weekly_history(trainee)
    result = trainee.run(
        "get_progress_trends", {"metric": "weight", "exercise_name": "Bench Press", "weeks": 8}
    )
    assert result.success, result.formatted
    assert result.data["metric"] == "e1rm"
    assert [week["best_estimated_1rm"] for week in result.data["weeks"]][:5] == [133.3] * 4 + [266.7]
    assert result.data["direction"] == "up"


def test_progress_trends_failures(trainee: Trainee) -> None:
    """An exercise not logged in the window fails; an unknown metric is a validation failure."""
    weekly_history(trainee)
    missing = trainee.run("get_progress_trends", {"exercise_name": "Deadlift"})
    assert not missing.success and "No logged 'Deadlift'" in missing.data["error"]
    bad_metric = trainee.run("get_progress_trends", {"metric": "reps"})
    assert not bad_metric.success and "metric" in bad_metric.data["error"]


def test_stats_summary_of_the_week(trainee: Trainee) -> None:
    """This week against the one before; the squat is a first record, the bench is not (81.7 earlier)."""
    seed_history(trainee)
    result = trainee.run("generate_stats_summary", {"period": "week"})
    assert result.success, result.formatted
    text = result.raw_formatted
    assert result.data["summary"] == text
    assert "- Overview: 1 workouts" in text
    assert "vs previous week: workouts 0%, volume +123%" in text  # 2940 vs 1320 kg
    assert "- New personal records: Barbell Squat e1RM 116.7kg (100kg × 5), first record" in text
    assert "Bench Press e1RM" not in text
    assert [record["name"] for record in result.data["personal_records"]] == ["Barbell Squat"]
    assert "- By muscle: " in text and "- Weekly volume (kg, last 4 weeks)" in text


def test_stats_summary_sections_and_empty_period(trainee: Trainee) -> None:
    """include_sections limits the report; a period without workouts says so."""
    empty = trainee.run("generate_stats_summary", {"time_period": "month"})
    assert empty.success and "No workouts logged in this period." in empty.raw_formatted
    seed_history(trainee)
    only = trainee.run("generate_stats_summary", {"period": "month", "include_sections": ["top_exercises"]})
    lines = only.raw_formatted.splitlines()
    assert len(lines) == 2 and lines[1].startswith("- Top exercises: Bench Press 2× (6 sets)")


def test_stats_summary_rejects_unknown_periods_and_sections(trainee: Trainee) -> None:
    """period and include_sections are enums; both problems are named."""
    result = trainee.run("generate_stats_summary", {"period": "decade", "include_sections": ["gossip"]})
    assert not result.success
    assert "period" in result.data["error"] and "include_sections.0" in result.data["error"]
