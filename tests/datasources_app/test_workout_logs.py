"""Workout logs: whole workouts, single exercises, undo and history."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from django.utils import timezone

from datasources_app import selectors, services
from datasources_app.models import WorkoutLog, WorkoutLogEntry
from tests.datasources_app.factories import UserSettingsFactory, WorkoutLogEntryFactory, WorkoutLogFactory

pytestmark = pytest.mark.django_db


def _entry(**overrides: object) -> dict[str, object]:
    return {
        "exercise_name": "Goblet Squat",
        "exercise_type": "reps",
        "muscles": [{"muscle": "Quadriceps", "share": 0.6}, {"muscle": "Glutes", "share": 0.4}],
        "goals": [{"goal": "strength", "share": 1.0}],
        "target_sets": 3,
        "target_reps": [10, 10, 10],
        "target_load_each": [20, 20, 20],
        "actual_sets": 3,
        "actual_reps": [10, 9, 8],
        "actual_load_each": [20, 20, 22.5],
        "rpe": 8,
        **overrides,
    }


def test_record_workout_log_keeps_target_and_actual_apart() -> None:
    """Entries are stored in order with targets and actuals as given; aliases are normalised."""
    user_id = uuid.uuid4()
    log = services.record_workout_log(
        user_id=user_id,
        title="Legs",
        artifact_id="art_abc",
        entries=[
            _entry(),
            {
                "name": "Plank",
                "type": "hold",
                "muscles_utilized": {"Abs": 1.0},
                "goals_addressed": [{"goal": "stability", "share": 1}],
                "actual_hold_sec": [45, 40],
            },
        ],
    )
    entries = list(log.entries.order_by("order"))
    assert [entry.exercise_name for entry in entries] == ["Goblet Squat", "Plank"]
    squat, plank = entries
    assert (squat.target_reps, squat.actual_reps) == ([10, 10, 10], [10, 9, 8])
    assert squat.actual_load_each == [20, 20, 22.5] and squat.load_unit == "kg" and squat.rpe == 8
    assert plank.exercise_type == "hold" and plank.actual_hold_sec == [45, 40]
    assert plank.muscles == [{"muscle": "Abs", "share": 1.0}]
    assert squat.completed_at == log.completed_at


def test_record_workout_log_names_every_problem_and_writes_nothing() -> None:
    """Bad entries raise one error naming each problem; no log is created."""
    user_id = uuid.uuid4()
    with pytest.raises(services.InvalidLogEntryError) as error:
        services.record_workout_log(
            user_id=user_id,
            entries=[_entry(exercise_type="sprint", rpe=11), {"exercise_name": "", "colour": "red"}],
        )
    message = str(error.value)
    for fragment in ("entry 1", "exercise_type", "rpe", "entry 2", "unknown field 'colour'", "exercise_name"):
        assert fragment in message
    assert not WorkoutLog.objects.filter(user_id=user_id).exists()


def test_record_workout_log_needs_entries() -> None:
    """An empty workout cannot be logged."""
    with pytest.raises(ValueError, match="at least one entry"):
        services.record_workout_log(user_id=uuid.uuid4(), entries=[])


def test_log_single_exercise_appends_to_todays_log_of_the_session() -> None:
    """Two exercises on one day in one session share a log; another session gets its own."""
    user_id = uuid.uuid4()
    session_id = uuid.uuid4()
    # Midday, so five minutes later is the same day (a run at 23:56 UTC would cross into the next one).
    now = timezone.now().replace(hour=12, minute=0, second=0, microsecond=0)
    first = services.log_single_exercise(user_id=user_id, entry=_entry(), session_id=session_id, now=now)
    second = services.log_single_exercise(
        user_id=user_id,
        entry=_entry(exercise_name="Lunge"),
        session_id=session_id,
        now=now + dt.timedelta(minutes=5),
    )
    elsewhere = services.log_single_exercise(
        user_id=user_id, entry=_entry(), session_id=uuid.uuid4(), now=now
    )
    assert first.log_id == second.log_id != elsewhere.log_id
    assert (first.order, second.order) == (0, 1)
    first.log.refresh_from_db()
    assert first.log.completed_at == now + dt.timedelta(minutes=5)


def test_log_single_exercise_starts_a_new_log_on_a_new_local_day() -> None:
    """A log from the user's previous local day is not reused (time zone taken from settings)."""
    user_id = uuid.uuid4()
    UserSettingsFactory.create(user_id=user_id, timezone="America/New_York")
    session_id = uuid.uuid4()
    # 23:30 and 00:30 New York time on consecutive days, though both fall on the same UTC date.
    late = dt.datetime(2024, 3, 6, 4, 30, tzinfo=dt.UTC)
    next_day = dt.datetime(2024, 3, 6, 5, 30, tzinfo=dt.UTC)
    earlier = dt.datetime(2024, 3, 5, 23, 0, tzinfo=dt.UTC)  # 18:00 on the 5th in New York
    a = services.log_single_exercise(user_id=user_id, entry=_entry(), session_id=session_id, now=late)
    b = services.log_single_exercise(user_id=user_id, entry=_entry(), session_id=session_id, now=next_day)
    assert a.log_id != b.log_id
    c = services.log_single_exercise(user_id=user_id, entry=_entry(), session_id=session_id, now=earlier)
    assert c.log_id == a.log_id


def test_undo_log_entry_removes_own_entries_and_emptied_logs() -> None:
    """Undo refuses others' entries, deletes own ones and the log once it is empty."""
    entry = WorkoutLogEntryFactory.create()
    sibling = WorkoutLogEntryFactory.create(log=entry.log)
    user_id = entry.log.user_id
    assert services.undo_log_entry(user_id=uuid.uuid4(), entry_id=entry.id) is False
    assert services.undo_log_entry(user_id=user_id, entry_id=entry.id) is True
    assert WorkoutLog.objects.filter(pk=entry.log_id).exists()
    assert services.undo_log_entry(user_id=user_id, entry_id=sibling.id) is True
    assert not WorkoutLog.objects.filter(pk=entry.log_id).exists()
    assert services.undo_log_entry(user_id=user_id, entry_id=sibling.id) is False


def test_workout_history_newest_first_with_limit_and_window() -> None:
    """History is newest first, limited, optionally windowed by days, and has entries prefetched."""
    user_id = uuid.uuid4()
    now = timezone.now()
    logs = [
        WorkoutLogFactory.create(user_id=user_id, completed_at=now - dt.timedelta(days=d)) for d in (1, 5, 20)
    ]
    for log in logs:
        WorkoutLogEntryFactory.create(log=log)
    WorkoutLogFactory.create()
    assert services.workout_history(user_id=user_id) == logs
    assert selectors.workout_history(user_id=user_id, limit=2) == logs[:2]
    recent = selectors.workout_history(user_id=user_id, days_back=14, now=now)
    assert recent == logs[:2]
    assert [len(log.entries.all()) for log in recent] == [1, 1]


def test_rpe_outside_1_to_10_is_refused_by_the_database() -> None:
    """The check constraint holds even for writes that bypass the service."""
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        WorkoutLogEntryFactory.create(rpe=12)
    assert WorkoutLogEntry.objects.filter(rpe=12).count() == 0
