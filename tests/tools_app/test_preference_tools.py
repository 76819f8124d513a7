"""set_preference and delete_preference (docs/contracts.md §11.5 (tool list))."""

from __future__ import annotations

import datetime as dt
import uuid
import zoneinfo

import pytest
from django.utils import timezone

from datasources_app import selectors
from datasources_app.formatters import day
from datasources_app.models import Preference, Preparation, ScheduledWorkout, UserSettings
from datasources_app.selectors import active_preferences
from tests.datasources_app.factories import (
    PreferenceFactory,
    ScheduledWorkoutFactory,
    WorkoutPlanFactory,
)
from tests.tools_app.workout_support import Trainee, generate, make_trainee, reps_exercise, told
from tools_app.registry import get_tool

pytestmark = pytest.mark.django_db


@pytest.fixture
def trainee() -> Trainee:
    return make_trainee()


@pytest.mark.parametrize(
    ("name", "start", "done", "observation"),
    [
        ("set_preference", "Saving your preference...", "Preference saved", "summary"),
        ("delete_preference", "Removing preference...", "Preference removed", "confirmation"),
    ],
)
def test_preference_tools_metadata(name: str, start: str, done: str, observation: str) -> None:
    """Status messages and observation sizes as in docs/contracts.md §11.2 (observations and status messages)."""
    tool = get_tool(name)
    assert (tool.status_start, tool.status_done, tool.category, tool.observation) == (
        start,
        done,
        "preferences",
        observation,
    )


def test_permanent_preference_is_saved_and_enforced(trainee: Trainee) -> None:
    """A preference without an end is permanent; its excluded exercise is then refused by generate_workout."""
    result = trainee.run(
        "set_preference",
        {
            "category": "exercise",
            "description": "Hates dumbbell bench press",
            "guidance": "Never program it",
            "exclude_exercises": ["Dumbbell Bench Press"],
        },
    )
    assert result.success, result.formatted
    preference = Preference.objects.get(user_id=trainee.user_id)
    assert (preference.preference_type, preference.category, preference.exclude_exercises) == (
        "permanent",
        "exercise",
        ["Dumbbell Bench Press"],
    )
    assert result.raw_formatted == (
        f"saved: exercise - Hates dumbbell bench press id={preference.id}\n"
        "Tell the user: Got it: I'll leave that out of your workouts from now on."
    )
    refused = generate(trainee, {"title": "Push", "exercises": [reps_exercise(1)]})
    assert not refused.success and "Hates dumbbell bench press" in refused.data["error"]


def test_without_lists_the_users_words_say_what_to_leave_out_and_for_how_long(trainee: Trainee) -> None:
    """Only the user's words: the tool reads the exclusions and the expiry from them, and names what the new
    preference rules out of the current workout (for the model to swap)."""
    assert generate(trainee).success
    result = trainee.run(
        "set_preference",
        {"description": "no dumbbell bench press this week", "guidance": "Leave it out"},
    )
    assert result.success, result.formatted
    preference = Preference.objects.get(user_id=trainee.user_id)
    assert (preference.category, preference.exclude_exercises) == ("exercise", ["Dumbbell Bench Press"])
    assert preference.preference_type == "temporary" and preference.expires_at is not None
    assert "rules out of the current workout: ex_" in result.raw_formatted
    assert "(Dumbbell Bench Press)" in result.raw_formatted
    # It ends at midnight after the last day: the user reads the last day.
    last_day = preference.expires_at.astimezone(dt.UTC) - dt.timedelta(days=1)
    assert told(result) == f"Got it: I'll leave that out of your workouts through {day(last_day)}."


def test_seed_001_type_becomes_category_and_expiry_makes_it_temporary(trainee: Trainee) -> None:
    """Seed 001's `type: injury` is the category; an ISO expiry in the future makes it temporary."""
    expires = (timezone.now() + dt.timedelta(days=14)).replace(microsecond=0)
    result = trainee.run(
        "set_preference",
        {
            "type": "injury",
            "description": "Shoulder pain - temporary avoidance",
            "guidance": "Exclude all shoulder-focused exercises",
            "expires_at": expires.isoformat().replace("+00:00", "Z"),
        },
    )
    assert result.success, result.formatted
    preference = Preference.objects.get(user_id=trainee.user_id)
    assert (preference.preference_type, preference.category, preference.expires_at) == (
        "temporary",
        "injury",
        expires,
    )
    assert "(temporary until " in result.raw_formatted
    # An injury: planned around, for as long as it lasts.
    assert told(result).startswith("Got it: I'll plan around that in your workouts until ")


def test_date_only_expiry_lasts_through_that_day_in_the_users_zone(db: None) -> None:
    """'YYYY-MM-DD' expires at the next local midnight; a naive date-time is read in the user's zone."""
    trainee = make_trainee()
    UserSettings.objects.filter(user_id=trainee.user_id).update(timezone="Europe/Berlin")
    berlin = zoneinfo.ZoneInfo("Europe/Berlin")
    day = timezone.localdate() + dt.timedelta(days=10)
    result = trainee.run(
        "set_preference",
        {"description": "Short sessions", "guidance": "30 min max", "expires_at": day.isoformat()},
    )
    assert result.success, result.formatted
    stored = Preference.objects.get(user_id=trainee.user_id).expires_at
    assert stored == dt.datetime.combine(day + dt.timedelta(days=1), dt.time.min, tzinfo=berlin)
    naive = trainee.run(
        "set_preference",
        {"description": "Evenings", "guidance": "-", "expires_at": f"{day.isoformat()}T18:30:00"},
    )
    assert naive.success, naive.formatted
    assert Preference.objects.get(description="Evenings").expires_at == dt.datetime.combine(
        day, dt.time(18, 30), tzinfo=berlin
    )


def test_delete_after_use_preference_is_consumed_by_the_next_workout(trainee: Trainee) -> None:
    """delete_after_use makes a one-off temporary preference, gone after generate_workout uses it."""
    result = trainee.run(
        "set_preference",
        {
            "description": "Go easy today",
            "guidance": "RPE 6 max",
            "delete_after_use": True,
            "category": "intensity",
        },
    )
    assert result.success, result.formatted
    assert Preference.objects.get(user_id=trainee.user_id).preference_type == "temporary"
    assert "next workout only" in result.raw_formatted
    assert generate(trainee).success
    assert not Preference.objects.filter(user_id=trainee.user_id).exists()


def test_excluded_equipment_is_normalised_to_slugs(trainee: Trainee) -> None:
    """Equipment spelled as display names becomes catalogue slugs."""
    result = trainee.run(
        "set_preference",
        {"description": "No barbell work", "guidance": "-", "exclude_equipment": ["Barbell", "pull-up bar"]},
    )
    assert result.success, result.formatted
    assert Preference.objects.get(user_id=trainee.user_id).exclude_equipment == ["barbell", "pull_up_bar"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"expires_at": "2001-01-01T00:00:00Z"}, "in the past"),
        ({"expires_at": "next tuesday"}, "is not an ISO 8601 date"),
        ({"preference_type": "permanent", "delete_after_use": True}, "permanent preference cannot have"),
        ({"preference_type": "temporary"}, "temporary preference needs expires_at"),
        ({"exclude_equipment": ["flux capacitor"]}, "Unknown equipment in exclude_equipment: flux_capacitor"),
    ],
)
def test_set_preference_failures(trainee: Trainee, extra: dict[str, object], message: str) -> None:
    """Past or unparsable expiries, contradicting types and unknown equipment fail; nothing is stored."""
    result = trainee.run("set_preference", {"description": "Something", "guidance": "Do this", **extra})
    assert not result.success
    assert message in result.data["error"]
    assert not Preference.objects.filter(user_id=trainee.user_id).exists()


def test_set_preference_requires_description_and_guidance(trainee: Trainee) -> None:
    """Missing description and guidance are both named."""
    result = trainee.run("set_preference", {"description": " "})
    assert not result.success
    assert "description" in result.data["error"] and "guidance" in result.data["error"]


def test_delete_own_preference(trainee: Trainee) -> None:
    """Deleting answers with a confirmation naming what went (the model tells the user which) and removes the row."""
    preference = PreferenceFactory.create(user_id=trainee.user_id, description="Left shoulder hurts overhead")
    result = trainee.run("delete_preference", {"preference_id": str(preference.id)})
    assert result.success and result.raw_formatted == "deleted (Left shoulder hurts overhead)"
    assert result.data["preference_id"] == str(preference.id)
    assert active_preferences(user_id=trainee.user_id) == []


@pytest.mark.parametrize("which", ["unknown", "not-a-uuid", "other user"])
def test_delete_unknown_or_foreign_preference_fails(trainee: Trainee, which: str) -> None:
    """Only the user's own preferences can be deleted; the failure lists their active ones."""
    own = PreferenceFactory.create(user_id=trainee.user_id, description="Keep me")
    foreign = PreferenceFactory.create()
    reference = {"unknown": str(uuid.uuid4()), "not-a-uuid": "burpees", "other user": str(foreign.id)}[which]
    result = trainee.run("delete_preference", {"preference_id": reference})
    assert not result.success
    assert "not found" in result.data["error"] and str(own.id) in result.data["error"]
    assert Preference.objects.filter(id=foreign.id).exists()


def test_an_injury_note_is_confirmed_as_planned_around_not_left_out(trainee: Trainee) -> None:
    """The knee trial's note allowed box squats, and the user read "I'll leave that out of your workouts"."""
    result = trainee.run(
        "set_preference",
        {
            "description": "Left knee cranky on deep squats",
            "guidance": "Box squats to a box at parallel are fine; no deep squats.",
            "category": "injury",
            "exclude_exercises": ["Pistol Squat"],
        },
    )
    assert result.success, result.formatted
    assert told(result) == "Got it: I'll plan around that in your workouts from now on."


def _prepared_push_day(trainee: Trainee, days_ahead: int = 2) -> ScheduledWorkout:
    today = selectors.local_today(user_id=trainee.user_id)
    press = reps_exercise(
        2,
        exercise_name="Overhead Press",
        load_each=[35, 35, 35],
        equipment=["barbell", "squat_rack"],
        muscles_utilized=[{"muscle": "Shoulders", "share": 0.7}, {"muscle": "Triceps", "share": 0.3}],
    )
    bench = reps_exercise(
        1, exercise_name="Barbell Bench Press", equipment=["barbell", "bench", "squat_rack"]
    )
    plan = WorkoutPlanFactory.create(
        user_id=trainee.user_id,
        plan={"weeks": [], "location": {"id": str(trainee.gym.id), "name": "Gym"}},
    )
    return ScheduledWorkoutFactory.create(
        user_id=trainee.user_id,
        plan=plan,
        scheduled_date=today + dt.timedelta(days=days_ahead),
        title="Push (week 1)",
        workout={"title": "Push", "exercises": [bench, press]},
        preparation=Preparation.READY,
    )


def test_a_new_injury_names_the_prepared_days_it_affects(trainee: Trainee) -> None:
    """A shoulder that hurts pressing overhead names the prepared Push day holding Overhead Press, to redo."""
    item = _prepared_push_day(trainee)
    result = trainee.run(
        "set_preference",
        {
            "category": "injury",
            "description": "My left shoulder hurts when I press overhead",
            "guidance": "No overhead pressing; keep pressing below shoulder height",
        },
    )
    assert result.success, result.formatted
    assert f"{day(item.scheduled_date)} Push (week 1), id {item.id}: Overhead Press." in result.raw_formatted
    assert "Barbell Bench Press" not in result.raw_formatted


def test_equipment_left_out_names_the_prepared_days_that_use_it(trainee: Trainee) -> None:
    """'No barbell' for a few days names the prepared day's barbell lifts; a day after it ends is not named."""
    soon = _prepared_push_day(trainee, days_ahead=1)
    later = _prepared_push_day(trainee, days_ahead=9)
    until = selectors.local_today(user_id=trainee.user_id) + dt.timedelta(days=3)
    result = trainee.run(
        "set_preference",
        {
            "category": "equipment",
            "description": "No barbell this week",
            "guidance": "Use dumbbells instead",
            "exclude_equipment": ["barbell"],
            "expires_at": until.isoformat(),
        },
    )
    assert result.success, result.formatted
    assert f"id {soon.id}: Barbell Bench Press, Overhead Press." in result.raw_formatted
    assert str(later.id) not in result.raw_formatted
