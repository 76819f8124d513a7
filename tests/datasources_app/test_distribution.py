"""Distribution of recent training over muscles and goal categories, and recently trained muscles."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest

from datasources_app import distribution
from tests.datasources_app.factories import (
    CategoryGoalFactory,
    MuscleGoalFactory,
    WorkoutLogEntryFactory,
    WorkoutLogFactory,
)

pytestmark = pytest.mark.django_db

NOW = dt.datetime(2024, 5, 15, 12, 0, tzinfo=dt.UTC)


def _log_three_entries(user_id: uuid.UUID) -> None:
    """Reps 3 sets (Chest .7/Triceps .3, strength), 20 min run (Quadriceps, endurance), 3 rounds (Back,
    endurance .5/strength .5), plus a skipped entry and one outside the 14-day window."""
    log = WorkoutLogFactory.create(user_id=user_id, completed_at=NOW - dt.timedelta(days=2))
    WorkoutLogEntryFactory.create(log=log, actual_sets=3)
    WorkoutLogEntryFactory.create(
        log=log,
        exercise_type="duration",
        actual_duration_min=20,
        muscles=[{"muscle": "Quadriceps", "share": 1.0}],
        goals=[{"goal": "endurance", "share": 1.0}],
    )
    WorkoutLogEntryFactory.create(
        log=log,
        exercise_type="intervals",
        actual_rounds=3,
        muscles=[{"muscle": "back", "share": 1.0}],
        goals=[{"goal": "endurance", "share": 0.5}, {"goal": "strength", "share": 0.5}],
    )
    WorkoutLogEntryFactory.create(log=log, skipped=True, muscles=[{"muscle": "Calves", "share": 1.0}])
    old = WorkoutLogFactory.create(user_id=user_id, completed_at=NOW - dt.timedelta(days=20))
    WorkoutLogEntryFactory.create(log=old, muscles=[{"muscle": "Neck", "share": 1.0}])


def test_muscle_distribution_shares_and_debt_by_hand() -> None:
    """Muscles share out working sets only: the 3 sets (×.7/.3) give Chest 2.1 and Triceps 0.9 of 3; the run and
    the interval rounds are no sets for the quads or the back (Back: none of its goal met, debt .5); debt = goal −
    share, largest first."""
    user_id = uuid.uuid4()
    _log_three_entries(user_id)
    MuscleGoalFactory.create(user_id=user_id, muscle="Chest", weight=0.5)
    MuscleGoalFactory.create(user_id=user_id, muscle="Back", weight=0.5)

    result = distribution.muscle_distribution(user_id=user_id, now=NOW)

    assert result.entry_count == 3 and result.total_volume == pytest.approx(3.0)
    assert [row.name for row in result.rows] == ["Back", "Chest", "Triceps"]
    expected = {"Back": (0.5, 0.0, 0.5), "Chest": (0.5, 0.7, -0.2), "Triceps": (0, 0.3, -0.3)}
    for name, (target, actual, debt) in expected.items():
        row = result.row(name)
        assert row is not None
        assert (row.target, row.actual, row.debt) == pytest.approx((target, actual, debt))


def test_warm_ups_and_stretches_are_no_sets_for_a_muscle() -> None:
    """A warm-up's 2 sets of band pull-aparts (section warmup) and a hamstring stretch (mobility only) add
    nothing to the shoulders or hamstrings: the split is the row's 3 sets, all back."""
    user_id = uuid.uuid4()
    log = WorkoutLogFactory.create(user_id=user_id, completed_at=NOW - dt.timedelta(days=1))
    WorkoutLogEntryFactory.create(
        log=log, actual_sets=2, section="warmup", muscles=[{"muscle": "Shoulders", "share": 1.0}]
    )
    WorkoutLogEntryFactory.create(log=log, actual_sets=3, muscles=[{"muscle": "Back", "share": 1.0}])
    WorkoutLogEntryFactory.create(
        log=log,
        exercise_type="hold",
        actual_sets=2,
        actual_hold_sec=[45, 45],
        muscles=[{"muscle": "Hamstrings", "share": 1.0}],
        goals=[{"goal": "mobility", "share": 1.0}],
    )

    result = distribution.muscle_distribution(user_id=user_id, now=NOW)

    assert [(row.name, row.volume, row.actual) for row in result.rows] == [("Back", 3.0, 1.0)]


def test_category_distribution_matches_goal_names_ignoring_case() -> None:
    """Goal "Strength" matches logged "strength": 4.5/10 actual; an untrained goal has its whole weight as debt."""
    user_id = uuid.uuid4()
    _log_three_entries(user_id)
    CategoryGoalFactory.create(user_id=user_id, category="Strength", weight=0.7)
    CategoryGoalFactory.create(user_id=user_id, category="Mobility", weight=0.3)

    result = distribution.category_distribution(user_id=user_id, now=NOW)

    assert [(row.name, round(row.actual, 3), round(row.debt, 3)) for row in result.rows] == [
        ("Mobility", 0.0, 0.3),
        ("Strength", 0.45, 0.25),
        ("endurance", 0.55, -0.55),
    ]


def test_distribution_without_logs_has_goals_as_debt() -> None:
    """No logs in the window: every actual share is 0 and debt equals the goal weight."""
    user_id = uuid.uuid4()
    MuscleGoalFactory.create(user_id=user_id, muscle="Glutes", weight=1.0)
    result = distribution.muscle_distribution(user_id=user_id, days=7, now=NOW)
    assert (result.entry_count, result.total_volume, result.window_days) == (0, 0.0, 7)
    assert [(row.name, row.debt) for row in result.rows] == [("Glutes", 1.0)]


@pytest.mark.parametrize(
    ("fields", "volume"),
    [
        ({"actual_sets": None, "actual_reps": [10, 10]}, 2.0),
        ({"actual_sets": None, "actual_reps": [], "target_sets": 4}, 4.0),
        ({"actual_sets": None, "actual_reps": [], "target_sets": None, "target_reps": []}, 1.0),
        ({"exercise_type": "hold", "actual_sets": None, "actual_hold_sec": [30, 30, 30]}, 3.0),
        ({"exercise_type": "duration", "actual_duration_min": None, "target_duration_min": 15}, 3.0),
        ({"exercise_type": "intervals", "actual_rounds": None, "target_rounds": 8}, 8.0),
        ({"skipped": True}, 0.0),
    ],
)
def test_entry_volume_falls_back_from_actual_to_target(fields: dict[str, object], volume: float) -> None:
    """Volume proxy: sets (or per-set list length), minutes/5, rounds; target when actual is missing."""
    entry = WorkoutLogEntryFactory.build(**fields)
    assert distribution.entry_volume(entry) == volume


def test_recently_trained_muscles_uses_prime_movers_in_the_window() -> None:
    """Muscles with share ≥ 0.3 in the last 48 h, with hours since the latest such entry; helpers and older
    work are left out."""
    user_id = uuid.uuid4()
    for hours, muscles in (
        (10, [{"muscle": "Chest", "share": 0.7}, {"muscle": "Triceps", "share": 0.3}]),
        (5, [{"muscle": "Chest", "share": 1.0}]),
        (30, [{"muscle": "Back", "share": 0.8}, {"muscle": "Biceps", "share": 0.2}]),
        (60, [{"muscle": "Quadriceps", "share": 1.0}]),
    ):
        log = WorkoutLogFactory.create(user_id=user_id, completed_at=NOW - dt.timedelta(hours=hours))
        WorkoutLogEntryFactory.create(log=log, muscles=muscles)
    WorkoutLogEntryFactory.create(completed_at=NOW, muscles=[{"muscle": "Neck", "share": 1.0}])

    assert distribution.recently_trained_muscles(user_id=user_id, now=NOW) == {
        "Chest": 5.0,
        "Triceps": 10.0,
        "Back": 30.0,
    }
    assert distribution.recently_trained_muscles(user_id=user_id, hours=72, min_share=0.75, now=NOW) == {
        "Chest": 5.0,
        "Back": 30.0,
        "Quadriceps": 60.0,
    }


def test_one_window_read_gives_the_same_shares_and_recovery_as_separate_reads() -> None:
    """A draft reads the last 14 days once for the muscle shares and the recovery: the same figures as each
    read on its own; a window shorter than the hours asked reads what it lacks."""
    user_id = uuid.uuid4()
    MuscleGoalFactory.create(user_id=user_id, muscle="Chest", weight=1.0)
    for hours, muscles in (
        (5, [{"muscle": "Chest", "share": 1.0}]),
        (60, [{"muscle": "Back", "share": 1.0}]),
    ):
        log = WorkoutLogFactory.create(user_id=user_id, completed_at=NOW - dt.timedelta(hours=hours))
        WorkoutLogEntryFactory.create(log=log, muscles=muscles)
    window = distribution.training_window(user_id=user_id, now=NOW)
    assert distribution.muscle_distribution(user_id=user_id, window=window) == (
        distribution.muscle_distribution(user_id=user_id, now=NOW)
    )
    shared = distribution.recently_trained_muscles(user_id=user_id, hours=72, window=window)
    assert shared == distribution.recently_trained_muscles(user_id=user_id, hours=72, now=NOW)
    assert shared == {"Chest": 5.0, "Back": 60.0}
    short = distribution.training_window(user_id=user_id, days=1, now=NOW)
    assert distribution.recently_trained_muscles(user_id=user_id, hours=72, window=short, now=NOW) == shared


def test_recently_trained_muscles_ignores_mobility_only_entries() -> None:
    """A logged stretch (goal mobility only) does not count as hard training; a strength entry does."""
    user_id = uuid.uuid4()
    log = WorkoutLogFactory.create(user_id=user_id, completed_at=NOW - dt.timedelta(hours=3))
    WorkoutLogEntryFactory.create(
        log=log, muscles=[{"muscle": "Chest", "share": 1.0}], goals=[{"goal": "mobility", "share": 1.0}]
    )
    WorkoutLogEntryFactory.create(
        log=log, muscles=[{"muscle": "Glutes", "share": 1.0}], goals=[{"goal": "strength", "share": 1.0}]
    )
    assert distribution.recently_trained_muscles(user_id=user_id, now=NOW) == {"Glutes": 3.0}
