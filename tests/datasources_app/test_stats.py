"""Statistics from the logs, checked against hand-computed figures."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest

from datasources_app import stats
from tests.datasources_app.factories import UserSettingsFactory, WorkoutLogEntryFactory, WorkoutLogFactory

pytestmark = pytest.mark.django_db

NOW = dt.datetime(2024, 5, 15, 12, 0, tzinfo=dt.UTC)  # a Wednesday
# Its week's last moment: how a range ending on Sunday 19 May ends (tools_app.analytics_tools.resolve_range).
END_OF_WEEK = dt.datetime(2024, 5, 20, tzinfo=dt.UTC) - dt.timedelta(microseconds=1)
MONDAY_MORNING = dt.datetime(2024, 5, 20, 7, 0, tzinfo=dt.UTC)
LB = 2.20462


def _history(user_id: uuid.UUID) -> None:
    """Tue 14 May: bench 8/8/6 @ 60 kg RPE 8, plank 3 sets RPE 6. Fri 10 May: bench 3×5 @ 70 kg RPE 9,
    30 min run. Mon 6 May: squat 2×5 @ 100 lb RPE 7."""
    tuesday = WorkoutLogFactory.create(
        user_id=user_id, completed_at=dt.datetime(2024, 5, 14, 18, tzinfo=dt.UTC)
    )
    WorkoutLogEntryFactory.create(
        log=tuesday,
        exercise_name="Bench Press",
        exercise_slug="bench-press",
        actual_sets=3,
        actual_reps=[8, 8, 6],
        actual_load_each=[60, 60, 60],
        rpe=8,
    )
    WorkoutLogEntryFactory.create(
        log=tuesday,
        exercise_name="Plank",
        exercise_slug="plank",
        exercise_type="hold",
        actual_sets=3,
        actual_reps=[],
        actual_load_each=[],
        actual_hold_sec=[45, 45, 40],
        rpe=6,
    )
    friday = WorkoutLogFactory.create(
        user_id=user_id, completed_at=dt.datetime(2024, 5, 10, 18, tzinfo=dt.UTC)
    )
    WorkoutLogEntryFactory.create(
        log=friday,
        exercise_name="Bench Press",
        exercise_slug="bench-press",
        actual_sets=3,
        actual_reps=[5],
        actual_load_each=[70],
        rpe=9,
    )
    WorkoutLogEntryFactory.create(
        log=friday,
        exercise_name="Run",
        exercise_slug="run",
        exercise_type="duration",
        actual_sets=None,
        actual_reps=[],
        actual_load_each=[],
        actual_duration_min=30,
    )
    monday = WorkoutLogFactory.create(
        user_id=user_id, completed_at=dt.datetime(2024, 5, 6, 18, tzinfo=dt.UTC)
    )
    WorkoutLogEntryFactory.create(
        log=monday,
        exercise_name="Back Squat",
        exercise_slug="back-squat",
        actual_sets=2,
        actual_reps=[5, 5],
        actual_load_each=[100, 100],
        load_unit="lb",
        rpe=7,
    )


def test_workout_statistics_in_kg() -> None:
    """3 workouts, 11 sets, volume 60·22 + 70·15 + 1000 lb/2.20462, 30 min, RPE 7.5, 0.7 per week."""
    user_id = uuid.uuid4()
    _history(user_id)
    result = stats.workout_statistics(user_id=user_id, start=NOW - dt.timedelta(days=30), end=NOW)
    assert (result.unit, result.workouts, result.exercises, result.sets) == ("kg", 3, 5, 11)
    assert result.total_volume == pytest.approx(1320 + 1050 + 1000 / LB)
    assert result.total_minutes == 30
    assert result.average_rpe == pytest.approx(7.5)
    assert result.workouts_per_week == pytest.approx(3 / (30 / 7))
    assert result.active_days == 3


def test_workout_statistics_in_the_users_pounds() -> None:
    """A lb user's volume converts the kg sets: 2370 kg·2.20462 + 1000 lb."""
    user_id = uuid.uuid4()
    UserSettingsFactory.create(user_id=user_id, weight_unit="lb")
    _history(user_id)
    result = stats.workout_statistics(user_id=user_id, start=NOW - dt.timedelta(days=30), end=NOW)
    assert result.unit == "lb"
    assert result.total_volume == pytest.approx(2370 * LB + 1000)


def test_workout_statistics_window_and_all_time() -> None:
    """The window keeps only its workouts; without a start, frequency counts from the first log."""
    user_id = uuid.uuid4()
    _history(user_id)
    week = stats.workout_statistics(user_id=user_id, start=NOW - dt.timedelta(days=7), end=NOW)
    assert (week.workouts, week.sets) == (2, 9)
    everything = stats.workout_statistics(user_id=user_id, end=NOW)
    assert everything.workouts == 3
    # First log Mon 6 May 18:00, 8.75 days = 1.25 weeks before NOW.
    assert everything.workouts_per_week == pytest.approx(3 / 1.25)


def test_exercise_breakdown_records() -> None:
    """Bench: 2 sessions, 6 sets, 2370 kg, best set 70×5, e1RM 70·(1+5/30); squat converted from lb."""
    user_id = uuid.uuid4()
    _history(user_id)
    rows = stats.exercise_breakdown(user_id=user_id, end=NOW)
    assert [row.name for row in rows] == ["Bench Press", "Plank", "Back Squat", "Run"]
    bench = rows[0]
    assert (bench.sessions, bench.sets, bench.volume) == (2, 6, pytest.approx(2370))
    assert bench.best_set == stats.SetDone(reps=5, load=70.0)
    assert bench.best_estimated_1rm == pytest.approx(70 * (1 + 5 / 30))
    assert bench.last_performed == dt.datetime(2024, 5, 14, 18, tzinfo=dt.UTC)
    assert bench.average_rpe == pytest.approx(8.5)
    squat = rows[2]
    assert squat.best_set is not None and squat.best_set.load == pytest.approx(100 / LB)
    assert squat.best_estimated_1rm == pytest.approx(100 / LB * (1 + 5 / 30))
    run = rows[3]
    assert (run.best_set, run.best_estimated_1rm, run.volume) == (None, None, 0)


def test_exercise_breakdown_for_one_exercise_by_loose_name() -> None:
    """A loosely spelled name ("bench presses") keeps only that exercise."""
    user_id = uuid.uuid4()
    _history(user_id)
    rows = stats.exercise_breakdown(user_id=user_id, end=NOW, exercise_name="bench presses", unit="lb")
    assert [row.name for row in rows] == ["Bench Press"]
    assert rows[0].best_estimated_1rm == pytest.approx(70 * LB * (1 + 5 / 30))


def test_grouped_breakdown_by_exercise_type() -> None:
    """Volume proxy 8 sets of reps, 30/5 = 6 for duration, 3 for hold, out of 17."""
    user_id = uuid.uuid4()
    _history(user_id)
    rows = stats.grouped_breakdown(user_id=user_id, by="exercise_type", end=NOW)
    assert [(row.name, row.entries, round(row.volume_share, 4)) for row in rows] == [
        ("reps", 3, round(8 / 17, 4)),
        ("duration", 1, round(6 / 17, 4)),
        ("hold", 1, round(3 / 17, 4)),
    ]


def test_weekly_trend_volume_sessions_and_sets() -> None:
    """Monday-based weeks, oldest first; at the week's end, sessions 2 → 1 is down 50%; bench volume 1050 →
    1320 is up."""
    user_id = uuid.uuid4()
    _history(user_id)
    sessions = stats.weekly_trend(user_id=user_id, weeks=2, metric="sessions", now=END_OF_WEEK)
    assert not sessions.unfinished_week
    assert [point.week_start for point in sessions.weeks] == [dt.date(2024, 5, 6), dt.date(2024, 5, 13)]
    assert [(point.sessions, point.sets) for point in sessions.weeks] == [(2, 5), (1, 6)]
    assert (sessions.direction, sessions.change) == ("down", pytest.approx(-0.5))
    assert sessions.weeks[0].volume == pytest.approx(1050 + 1000 / LB)
    assert sessions.weeks[0].average_rpe == pytest.approx(8)

    bench = stats.weekly_trend(user_id=user_id, weeks=2, exercise_name="Bench Press", now=END_OF_WEEK)
    assert [point.volume for point in bench.weeks] == [pytest.approx(1050), pytest.approx(1320)]
    assert (bench.direction, bench.change) == ("up", pytest.approx(270 / 1050))
    assert bench.weeks[1].best_estimated_1rm == pytest.approx(76.0)


def test_weekly_totals_trend_leaves_out_the_week_not_over() -> None:
    """On Monday morning this week holds nothing yet: sessions 2, 1, 0 are not 'down 100%' (the first week
    against this empty one) but 2 → 1 over the whole weeks, down 50%; on the Wednesday, 2 then 1 so far: no
    trend yet."""
    user_id = uuid.uuid4()
    _history(user_id)
    monday = stats.weekly_trend(user_id=user_id, weeks=3, metric="sessions", now=MONDAY_MORNING)
    assert [point.sessions for point in monday.weeks] == [2, 1, 0]
    assert monday.unfinished_week
    assert (monday.direction, monday.change) == ("down", pytest.approx(-0.5))
    wednesday = stats.weekly_trend(user_id=user_id, weeks=2, metric="sessions", now=NOW)
    assert [point.sessions for point in wednesday.weeks] == [2, 1]
    assert (wednesday.direction, wednesday.change) == ("flat", None)


def test_weekly_totals_trend_leaves_out_a_first_week_the_range_cuts() -> None:
    """A range from Friday 10 May holds only that Friday's bench of the week of 6 May (1050 kg, not the Monday
    squat): against the whole week of 13 May (1320 kg + the plank) it is no trend at all, not 'up'."""
    user_id = uuid.uuid4()
    _history(user_id)
    start = dt.datetime(2024, 5, 10, tzinfo=dt.UTC)
    trend = stats.weekly_trend(user_id=user_id, weeks=2, metric="volume", now=END_OF_WEEK, start=start)
    assert [point.volume for point in trend.weeks] == [pytest.approx(1050), pytest.approx(1320)]
    assert trend.cut_first_week
    assert (trend.direction, trend.change) == ("flat", None)


@pytest.mark.parametrize(
    ("values", "direction", "change"),
    [
        ([100, 100, 120, 130], "up", 0.25),
        ([100, 100, 95, 100], "flat", -0.025),
        ([100, 50], "down", -0.5),
        ([1, 5, 1], "flat", 0.0),
        ([0, 0, 3], "up", None),
        ([0, 0], "flat", None),
        ([7], "flat", None),
    ],
)
def test_trend_direction_compares_halves(values: list[float], direction: str, change: float | None) -> None:
    """Second half's mean against the first's, ±10% threshold, middle of an odd count ignored."""
    assert stats.trend_direction(values) == (direction, pytest.approx(change) if change is not None else None)


def test_units_and_epley() -> None:
    """lb↔kg at 2.20462, km↔mi at 1.609344, Epley load·(1+reps/30)."""
    assert stats.convert_weight(100, from_unit="kg", to_unit="lb") == pytest.approx(220.462)
    assert stats.convert_weight(220.462, from_unit="lb", to_unit="kg") == pytest.approx(100)
    assert stats.convert_distance(5, from_unit="km", to_unit="mi") == pytest.approx(3.10686, rel=1e-5)
    assert stats.epley_one_rep_max(100, 10) == pytest.approx(133.3333, rel=1e-5)


def test_period_start() -> None:
    """Named periods end now; all_time has no start; unknown names raise."""
    assert stats.period_start(period="month", now=NOW) == NOW - dt.timedelta(days=30)
    assert stats.period_start(period="all_time", now=NOW) is None
    with pytest.raises(ValueError, match="week, month"):
        stats.period_start(period="decade", now=NOW)
