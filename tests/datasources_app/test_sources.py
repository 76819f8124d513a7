"""The data-source registry: fetching, formatting in the user's units, and fetching many at once."""

from __future__ import annotations

import datetime as dt
import threading
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction
from django.utils import timezone

from datasources_app import formatters, services, sources
from datasources_app.formatters import Units
from datasources_app.sources import DataSource, FormattedSource, NoParams, SourceError
from tests.datasources_app.factories import (
    CategoryGoalFactory,
    CurrentWorkoutFactory,
    LocationFactory,
    MilestoneGoalFactory,
    MuscleGoalFactory,
    PreferenceFactory,
    ScheduledWorkoutFactory,
    UserProfileFactory,
    UserSettingsFactory,
    WorkoutLogEntryFactory,
    WorkoutLogFactory,
    WorkoutPlanFactory,
)
from tests.support.clock import freeze_now

ALL_SOURCES = {
    "user_profile",
    "user_settings",
    "all_locations",
    "current_location",
    "workout_history",
    "category_goals",
    "muscle_goals",
    "exercise_distribution",
    "active_preferences",
    "current_workout_session",
    "scheduled_workouts",
    "workout_plans",
    "milestone_goals",
}


def _text(user_id: uuid.UUID, source: str, params: dict[str, Any] | None = None) -> str:
    return sources.fetch_and_format(user_id=user_id, source=source, params=params).text


def _lb_user() -> uuid.UUID:
    user_id = uuid.uuid4()
    UserSettingsFactory.create(
        user_id=user_id, weight_unit="lb", distance_unit="mi", timezone="America/New_York"
    )
    return user_id


# --- Registry -------------------------------------------------------------------------------------------------
def test_registry_lists_every_source_with_names_for_people_and_the_initializer() -> None:
    """All sources are registered, each with a display name and a description."""
    registered = sources.all_sources()
    assert {source.name for source in registered} == ALL_SOURCES
    assert all(source.display_name and len(source.description) > 20 for source in registered)
    assert sources.get_source("workout_history").display_name == "Workout history"
    assert set(sources.STABLE_PREFIX_SOURCES) <= ALL_SOURCES


def test_unknown_source_names_the_valid_ones() -> None:
    """An unknown name raises UnknownSourceError listing every valid source."""
    with pytest.raises(sources.UnknownSourceError) as error:
        sources.get_source("weather")
    assert "'weather'" in str(error.value) and "workout_history" in str(error.value)


@pytest.mark.django_db
def test_bad_params_name_every_problem() -> None:
    """Out-of-range, mistyped and unknown params are all named, with the accepted ones."""
    with pytest.raises(sources.InvalidSourceParamsError) as error:
        sources.fetch_and_format(
            user_id=uuid.uuid4(), source="workout_history", params={"limit": 0, "days_back": "x", "colour": 1}
        )
    message = str(error.value)
    for fragment in ("limit:", "days_back:", "colour:", "accepted: limit, days_back"):
        assert fragment in message


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("source", "empty"),
    [
        ("user_profile", "No profile saved yet."),
        ("user_settings", "Weight: kg · Distance: km · Time zone: UTC (defaults, never saved)"),
        ("all_locations", "No locations saved: assume bodyweight only."),
        ("current_location", "No current location set: assume bodyweight only."),
        ("workout_history", "No workouts logged yet."),
        ("category_goals", "No category goals set."),
        ("muscle_goals", "No muscle goals set."),
        ("exercise_distribution", "No training logged in the last 14 days."),
        ("active_preferences", "No active preferences."),
        ("current_workout_session", "No active workout."),
        ("scheduled_workouts", "No workouts scheduled in the next 14 days."),
        ("workout_plans", "No workout plans."),
        ("milestone_goals", "No milestone goals."),
    ],
)
def test_every_source_states_emptiness(source: str, empty: str) -> None:
    """A new user gets an explicit sentence, never an empty block."""
    result = sources.fetch_and_format(user_id=uuid.uuid4(), source=source)
    assert empty in result.text
    assert result.chars == len(result.text) and result.tokens == -(-result.chars // 4)


# --- Formatted sources ----------------------------------------------------------------------------------------
@pytest.mark.django_db
def test_a_workout_logged_all_at_once_shows_no_session_length() -> None:
    """Sets written down together after the session read "Legs: …", not "Legs (0min): …"; a timed one keeps it."""
    user_id = _lb_user()
    now = timezone.now()
    for title, took in (("Legs", dt.timedelta(seconds=40)), ("Push", dt.timedelta(minutes=38))):
        log = WorkoutLogFactory.create(user_id=user_id, title=title, completed_at=now - dt.timedelta(hours=1))
        log.started_at = log.completed_at - took
        log.save()
        WorkoutLogEntryFactory.create(log=log)
    text = _text(user_id, "workout_history", {"days_back": 2})
    assert " Legs: " in text
    assert " Push (38min): " in text


@pytest.mark.django_db
def test_workout_history_in_pounds_with_targets_and_window() -> None:
    """One line per workout in the user's zone and units; targets only where they differ; window and limit."""
    user_id = _lb_user()
    now = timezone.now()
    log = WorkoutLogFactory.create(user_id=user_id, title="Push", completed_at=now - dt.timedelta(days=1))
    log.started_at = log.completed_at - dt.timedelta(minutes=40)
    log.save()
    WorkoutLogEntryFactory.create(log=log, order=0, actual_reps=[8, 8, 6], rpe=8)
    WorkoutLogEntryFactory.create(
        log=log,
        order=1,
        exercise_name="Run",
        exercise_type="duration",
        target_sets=None,
        actual_sets=None,
        target_reps=[],
        actual_reps=[],
        target_load_each=[],
        actual_load_each=[],
        actual_duration_min=30,
        actual_distance=5,
    )
    WorkoutLogEntryFactory.create(log=log, order=2, exercise_name="Lunge", skipped=True)
    old = WorkoutLogFactory.create(user_id=user_id, completed_at=now - dt.timedelta(days=30))
    WorkoutLogEntryFactory.create(log=old)

    text = _text(user_id, "workout_history", {"days_back": 14})
    day = formatters.day(log.completed_at, sources.units_for(user_id=user_id))
    assert text == (
        '<workout_history days_back="14" count="1">\n'
        f"{day} Push (40min): Dumbbell Bench Press 3×8/8/6 @ 44lb each hand (target 3×8 @ 44lb) RPE 8; "
        "Run 30min 3.1mi; Lunge skipped\n"
        "</workout_history>"
    )
    assert 'count="1" limit="1"' in _text(user_id, "workout_history", {"limit": 1})
    assert "No workouts logged in the last 14 days." in _text(
        uuid.uuid4(), "workout_history", {"days_back": 14}
    )


@pytest.mark.django_db
def test_goals_sources_show_target_actual_and_debt() -> None:
    """Category and muscle goals come with the window's actual share and signed debt."""
    user_id = uuid.uuid4()
    CategoryGoalFactory.create(user_id=user_id, category="strength", weight=0.6, description="Lift heavy")
    CategoryGoalFactory.create(user_id=user_id, category="endurance", weight=0.4)
    MuscleGoalFactory.create(user_id=user_id, muscle="Chest", weight=1.0)
    log = WorkoutLogFactory.create(user_id=user_id)
    WorkoutLogEntryFactory.create(log=log)  # chest .7 / triceps .3, strength 1.0

    assert _text(user_id, "category_goals") == (
        '<category_goals window_days="14">\n'
        "endurance: target 40%, actual 0%, debt +40%\n"
        "strength: target 60%, actual 100%, debt -40% — Lift heavy\n"
        "</category_goals>"
    )
    assert _text(user_id, "muscle_goals", {"days": 7}) == (
        '<muscle_goals window_days="7">\n'
        "Chest: target 100%, actual 70%, debt +30%\n"
        "Triceps: no target, actual 30%, debt -30%\n"
        "</muscle_goals>"
    )
    assert "Chest 70% (target 100%), Triceps 30%" in _text(user_id, "exercise_distribution")


@pytest.mark.django_db
def test_goals_without_recent_training_say_so() -> None:
    """Goals but no logs in the window: targets listed, and the emptiness stated."""
    user_id = uuid.uuid4()
    CategoryGoalFactory.create(user_id=user_id, category="mobility", weight=1.0)
    assert _text(user_id, "category_goals") == (
        '<category_goals window_days="14">\n'
        "No training logged in the last 14 days: every debt equals its target.\n"
        "mobility: target 100%\n"
        "</category_goals>"
    )


@pytest.mark.django_db
def test_active_preferences_exclude_expired_and_show_ids() -> None:
    """Expired preferences are left out; ids, exclusions and expiry (in the user's zone) are shown."""
    user_id = _lb_user()
    permanent = PreferenceFactory.create(
        user_id=user_id,
        category="exercise",
        description="No burpees",
        guidance="Never",
        exclude_exercises=["burpee"],
    )
    expires = dt.datetime(2099, 1, 2, 3, 0, tzinfo=dt.UTC)
    temporary = PreferenceFactory.create(
        user_id=user_id,
        preference_type="temporary",
        category="injury",
        description="Sore shoulder",
        expires_at=expires,
    )
    PreferenceFactory.create(
        user_id=user_id, description="Old one", expires_at=timezone.now() - dt.timedelta(hours=1)
    )

    assert _text(user_id, "active_preferences") == (
        "<preferences>\n"
        "Temporary:\n"
        f"- [{temporary.id}] injury: Sore shoulder (until Thu 1 Jan 22:00)\n"
        "Permanent:\n"
        f"- [{permanent.id}] exercise: No burpees → Never (excludes exercises: burpee)\n"
        "</preferences>"
    )


@pytest.mark.django_db
def test_current_workout_session_shows_progress() -> None:
    """The current workout lists its exercises with done marks and a progress count."""
    workout = CurrentWorkoutFactory.create(artifact_id="art_abc")
    workout.workout["exercises"].append(
        {
            "exercise_name": "Plank",
            "exercise_type": "hold",
            "sets": 2,
            "hold_sec": [30, 30],
            "completed": True,
        }
    )
    workout.save()
    assert _text(workout.user_id, "current_workout_session") == (
        '<current_workout title="Push Day" artifact_id="art_abc">\n'
        "Progress: 1/2\n"
        "○ 1. Push-Up (reps) 3×10\n"
        "✓ 2. Plank (hold) 2×30s\n"
        "</current_workout>"
    )


@pytest.mark.django_db
def test_calendar_plans_and_milestones_sources() -> None:
    """Scheduled workouts in the window, plans with progress and milestones, each with its id."""
    user_id = uuid.uuid4()
    plan = WorkoutPlanFactory.create(
        user_id=user_id, name="Base", goal="Fitness", start_date=dt.date(2030, 1, 7)
    )
    soon = ScheduledWorkoutFactory.create(
        user_id=user_id,
        scheduled_date=timezone.localdate() + dt.timedelta(days=2),
        scheduled_time=dt.time(18, 0),
        title="Legs",
        duration_minutes=45,
        plan=plan,
    )
    ScheduledWorkoutFactory.create(
        user_id=user_id,
        plan=plan,
        status="completed",
        scheduled_date=timezone.localdate() - dt.timedelta(days=3),
    )
    ScheduledWorkoutFactory.create(
        user_id=user_id, scheduled_date=timezone.localdate() + dt.timedelta(days=20)
    )
    milestone = MilestoneGoalFactory.create(user_id=user_id, deadline=dt.date(2030, 6, 3))

    schedule = _text(user_id, "scheduled_workouts", {"days_ahead": 7})
    assert schedule.count("\n") == 2 and f"18:00 Legs (45min) [scheduled] plan: Base id={soon.id}" in schedule
    assert _text(user_id, "workout_plans") == (
        "<workout_plans>\n"
        f"- Base [active] 4 weeks from Mon 7 Jan 2030, goal: Fitness, 1 planned day, sessions 1/2 done id={plan.id}\n"
        "  Week 1: day 1 Upper body\n"
        "</workout_plans>"
    )
    assert "No archived workout plans." in _text(user_id, "workout_plans", {"status": "archived"})
    assert _text(user_id, "milestone_goals", {"status": "active"}) == (
        "<milestone_goals>\n"
        f"- Bench press 100 kg: bench press 1RM 80/100kg (80%) by Mon 3 Jun 2030 [active] id={milestone.id}\n"
        "</milestone_goals>"
    )


# --- User data XML ----------------------------------------------------------------------------------------------
@pytest.mark.django_db
def test_user_data_xml_in_pounds_is_deterministic(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/contracts.md §8.2 (user data block) layout, weights converted to lb, other locations listed, identical on every call."""
    # 03:30 UTC on Friday is still Thursday evening in New York: the date is the user's.
    freeze_now(monkeypatch, dt.datetime(2025, 11, 14, 3, 30, tzinfo=dt.UTC))
    user_id = _lb_user()
    UserProfileFactory.create(
        user_id=user_id,
        display_name="Sam",
        sex="female",
        birth_year=None,
        height_cm=170.0,
        weight_kg=65.0,
        body_fat_pct=None,
    )
    LocationFactory.create(
        user_id=user_id,
        name="Home",
        is_current=True,
        equipment=["pull_up_bar", "dumbbells"],
        available_weights_kg={"dumbbells": [10, 5]},
    )
    LocationFactory.create(user_id=user_id, name="Park", equipment=["pull_up_bar"])

    xml = sources.build_user_data_xml(user_id=user_id)
    assert xml == (
        "<user_data>\n"
        "<today>\nDate: Thursday 13 November 2025 (2025-11-13)\nTime zone: America/New_York\n"
        "This week: Mon 10 Nov – Sun 16 Nov\n</today>\n"
        "\n"
        "<unit_preferences>\nWeight: lb\nDistance: mi\n</unit_preferences>\n"
        "\n"
        "<body_stats>\nName: Sam\nSex: female\nHeight: 5'7\"\nWeight: 143lb\nExperience: beginner\n</body_stats>\n"
        "\n"
        "<current_location>\nLocation: Home\nEquipment:\n"
        "  - Pull-up Bar\n"
        "  - Dumbbells (free_weights): 11, 22lb\n"
        "</current_location>\n"
        "\n"
        "<other_locations>\n- Park: Pull-up Bar\n</other_locations>\n"
        "</user_data>"
    )
    assert sources.build_user_data_xml(user_id=user_id) == xml


@pytest.mark.django_db
def test_user_data_xml_for_an_unknown_user() -> None:
    """Without any data the block still has every section, with defaults stated."""
    xml = sources.build_user_data_xml(user_id=uuid.uuid4())
    assert "Weight: kg\nDistance: km" in xml
    assert "Unknown: no profile saved yet." in xml
    assert "No current location set: assume bodyweight only." in xml
    assert "<other_locations>" not in xml


# --- fetch_many -----------------------------------------------------------------------------------------------
def registered_source(
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    fetch: Callable[[uuid.UUID, Any], Any],
    *,
    format: Callable[[Any, Any], str] = lambda raw, units: "",
) -> None:
    """A test's own data source, in the registry for the test."""
    source = DataSource(
        name=name, display_name=name.title(), description="test", params=NoParams, fetch=fetch, format=format
    )
    monkeypatch.setitem(sources._REGISTRY, name, source)


@pytest.mark.django_db
def test_fetch_many_keeps_order_and_isolates_failures(monkeypatch: pytest.MonkeyPatch) -> None:
    """Results follow the request order; unknown sources, bad params and crashing fetches become errors."""

    def crash(user_id: uuid.UUID, params: Any) -> Any:
        raise RuntimeError("database on fire")

    registered_source(monkeypatch, "broken", crash)
    user_id = uuid.uuid4()
    results = sources.fetch_many(
        user_id=user_id,
        requests=[
            ("user_settings", None),
            ("weather", {}),
            ("workout_history", {"limit": -1}),
            ("broken", None),
            ("workout_history", {"days_back": 7}),
        ],
    )
    assert [type(result) for result in results] == [
        FormattedSource,
        SourceError,
        SourceError,
        SourceError,
        FormattedSource,
    ]
    assert isinstance(results[1], SourceError) and "valid sources" in results[1].error
    assert isinstance(results[2], SourceError) and "limit" in results[2].error
    assert isinstance(results[3], SourceError) and results[3].error == "RuntimeError: database on fire"
    assert isinstance(results[4], FormattedSource) and results[4].params == {"limit": 10, "days_back": 7}
    assert results[4].display_name == "Workout history"
    assert sources.fetch_many(user_id=user_id, requests=[]) == []


@pytest.mark.django_db
def test_a_source_whose_read_the_database_refuses_leaves_the_next_sources_theirs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One after another (the initializer's way; on PostgreSQL in one transaction), a source whose query fails
    becomes an error and the sources after it still read their data: each runs in a savepoint of its own."""

    def refused(user_id: uuid.UUID, params: Any) -> Any:
        with connection.cursor() as cursor:
            cursor.execute("SELECT * FROM no_such_table")

    registered_source(monkeypatch, "refused", refused)
    user_id = uuid.uuid4()
    services.set_category_goals(user_id=user_id, goals={"strength": 1})

    results = sources.fetch_many(
        user_id=user_id, requests=[("refused", None), ("category_goals", None)], max_workers=1
    )

    assert isinstance(results[0], SourceError) and "no_such_table" in results[0].error
    assert isinstance(results[1], FormattedSource) and "strength: target 100%" in results[1].text


@pytest.mark.django_db
def test_fetch_many_runs_sequentially_inside_a_transaction() -> None:
    """Inside an atomic block worker threads could not see uncommitted rows, so fetch_many stays in-thread."""
    with transaction.atomic():
        assert sources.runs_concurrently() is False


@pytest.mark.django_db(transaction=True)
def test_fetch_many_runs_sources_concurrently(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a database threads can share, the fetches run at the same time and see committed data.

    (The exercise catalogue the flush afterwards removes is reloaded by the conftest fixture; a serialized
    rollback here failed on duplicate content types after another transactional test had flushed.)
    """
    if not sources.runs_concurrently():
        pytest.skip("in-memory SQLite: fetch_many runs sequentially (see runs_concurrently)")
    parties = 3
    barrier = threading.Barrier(parties, timeout=30)
    threads: set[str] = set()

    def rendezvous(user_id: uuid.UUID, params: Any) -> str:
        barrier.wait()  # only returns once all three fetches are running at the same time
        threads.add(threading.current_thread().name)
        return _text(user_id, "category_goals")

    registered_source(monkeypatch, "rendezvous", rendezvous, format=lambda raw, units: raw)
    user_id = uuid.uuid4()
    services.set_category_goals(user_id=user_id, goals={"strength": 1})

    results = sources.fetch_many(user_id=user_id, requests=[("rendezvous", None)] * parties)

    assert all(
        isinstance(result, FormattedSource) and "strength: target 100%" in result.text for result in results
    )
    assert len(threads) == parties and all(name.startswith("datasource") for name in threads)


def test_units_default() -> None:
    """Units default to kg, km and UTC."""
    assert Units() == Units(weight="kg", distance="km", tz=dt.UTC)
