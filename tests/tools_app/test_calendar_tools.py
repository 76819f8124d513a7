"""schedule_workout, update_scheduled_workout, delete_scheduled_workout, create_workout_plan (docs/contracts.md §11.5 (tool list))
and the pure plan builder behind the last one."""

from __future__ import annotations

import datetime as dt
import re
import uuid
from typing import Any

import pytest
from django.utils import timezone

from datasources_app.formatters import day
from datasources_app.models import ScheduledWorkout, WorkoutPlan
from datasources_app.services import upsert_profile
from sessions_app.services import append_event
from tests.datasources_app.factories import ScheduledWorkoutFactory, WorkoutPlanFactory
from tests.tools_app.workout_support import Trainee, make_trainee, told, upper_body_workout
from tools_app.calendar_tools import next_monday
from tools_app.plan_builder import build_plan, classify_goal, parse_weekdays, progression_problems
from tools_app.registry import get_tool
from tools_app.types import ToolResult

pytestmark = pytest.mark.django_db


@pytest.fixture
def trainee() -> Trainee:
    return make_trainee()


def in_days(days: int) -> dt.date:
    return timezone.localdate() + dt.timedelta(days=days)


@pytest.mark.parametrize(
    ("name", "start", "done", "observation"),
    [
        ("schedule_workout", "Adding it to your calendar...", "Workout scheduled", "summary"),
        ("update_scheduled_workout", "Updating your calendar...", "Schedule updated", "summary"),
        (
            "delete_scheduled_workout",
            "Removing it from your calendar...",
            "Workout removed from calendar",
            "confirmation",
        ),
        ("create_workout_plan", "Building your plan...", "Plan ready", "full"),
    ],
)
def test_calendar_tools_metadata(name: str, start: str, done: str, observation: str) -> None:
    """Status messages and observation sizes as in docs/contracts.md §11.2 (observations and status messages)."""
    tool = get_tool(name)
    assert (tool.status_start, tool.status_done, tool.category, tool.observation) == (
        start,
        done,
        "calendar",
        observation,
    )


# --- schedule_workout ------------------------------------------------------------------------------------------
def test_schedule_workout(trainee: Trainee) -> None:
    """A workout goes on the calendar with its date, time, length and notes; the summary gives the id."""
    when = in_days(3)
    result = trainee.run(
        "schedule_workout",
        {
            "date": when.isoformat(),
            "time": "18:00",
            "title": "Upper Body",
            "duration_minutes": 45,
            "notes": "heavy",
        },
    )
    assert result.success, result.formatted
    item = ScheduledWorkout.objects.get(user_id=trainee.user_id)
    assert (item.scheduled_date, item.scheduled_time, item.title, item.duration_minutes, item.notes) == (
        when,
        dt.time(18, 0),
        "Upper Body",
        45,
        "heavy",
    )
    assert result.raw_formatted == (
        f"scheduled: Upper Body on {when:%a} {when.day} {when:%b} 18:00, id={item.id}"
    )
    assert result.data["scheduled_workout"]["workout_id"] == str(item.id)


def test_schedule_workout_accepts_seed_001_spelling(trainee: Trainee) -> None:
    """scheduled_date with a time, workout_type as title and an exercises list as the workout."""
    when = in_days(1)
    result = trainee.run(
        "schedule_workout",
        {
            "scheduled_date": f"{when.isoformat()}T07:30:00Z",
            "workout_type": "Easy run",
            "exercises": [{"exercise_name": "Outdoor Run"}],
        },
    )
    assert result.success, result.formatted
    item = ScheduledWorkout.objects.get(user_id=trainee.user_id)
    assert (item.scheduled_date, item.scheduled_time, item.title) == (when, dt.time(7, 30), "Easy run")
    assert item.workout == {"exercises": [{"exercise_name": "Outdoor Run"}]}


def test_schedule_today_is_allowed_but_the_past_is_not(trainee: Trainee) -> None:
    """Today is fine; yesterday fails and stores nothing more."""
    assert trainee.run("schedule_workout", {"date": in_days(0).isoformat(), "title": "Now"}).success
    past = trainee.run("schedule_workout", {"date": in_days(-1).isoformat(), "title": "Then"})
    assert not past.success and "in the past" in past.data["error"]
    assert ScheduledWorkout.objects.filter(user_id=trainee.user_id).count() == 1


def test_schedule_rejects_bad_dates_and_titles(trainee: Trainee) -> None:
    """An unparsable date and a blank title are named in one validation failure."""
    result = trainee.run("schedule_workout", {"date": "next friday", "title": " "})
    assert not result.success
    assert "date" in result.data["error"] and "title" in result.data["error"]


# --- schedule_workout with a workout made earlier (artifact_id) ---------------------------------------------------
def made_workout(trainee: Trainee, *, title: str = "Upper body") -> dict[str, Any]:
    """A workout generate_workout made in the trainee's session, its artifact stored as the loop stores it."""
    result = trainee.run("generate_workout", {"workout": upper_body_workout() | {"title": title}})
    assert result.success and result.artifact is not None, result.formatted
    append_event(session=trainee.session, event_type="artifact", data=result.artifact)
    return result.artifact


def schedule_by_id(trainee: Trainee, artifact_id: str, *, days: int = 1, **more: Any) -> ToolResult:
    """schedule_workout of the made workout `artifact_id`, `days` from today."""
    return trainee.run(
        "schedule_workout", {"date": in_days(days).isoformat(), "artifact_id": artifact_id, **more}
    )


def test_schedule_a_made_workout_by_its_artifact_id(trainee: Trainee) -> None:
    """artifact_id puts the made workout on the day exactly as it is: its exercises, title and estimated length."""
    artifact = made_workout(trainee)
    when = in_days(2)
    result = schedule_by_id(trainee, artifact["artifact_id"], days=2)
    assert result.success, result.formatted
    item = ScheduledWorkout.objects.get(user_id=trainee.user_id)
    assert item.workout is not None and item.workout["exercises"] == artifact["payload"]["exercises"]
    assert item.workout["artifact_id"] == artifact["artifact_id"]
    assert (item.scheduled_date, item.title) == (when, "Upper body")
    assert item.duration_minutes == round(artifact["summary"]["estimated_duration_min"])
    assert result.raw_formatted == (
        f"scheduled: Upper body on {day(when)}, workout {artifact['artifact_id']} attached (6 exercises), "
        f"id={item.id}"
    )


def test_a_workout_given_only_by_its_id_is_the_made_workout(trainee: Trainee) -> None:
    """`workout: {"artifact_id": …}` schedules the made workout, not a day without exercises."""
    artifact = made_workout(trainee)
    args = {"date": in_days(1).isoformat(), "workout": {"artifact_id": artifact["artifact_id"]}}
    assert trainee.run("schedule_workout", args).success
    item = ScheduledWorkout.objects.get(user_id=trainee.user_id)
    assert item.workout is not None and item.workout["exercises"] == artifact["payload"]["exercises"]
    assert item.title == "Upper body"


def test_a_given_title_and_length_win_over_the_made_workouts(trainee: Trainee) -> None:
    """The model may still name the day and its length; the exercises stay the made workout's."""
    artifact = made_workout(trainee)
    assert schedule_by_id(trainee, artifact["artifact_id"], title="Push day", duration_minutes=40).success
    item = ScheduledWorkout.objects.get(user_id=trainee.user_id)
    assert (item.title, item.duration_minutes) == ("Push day", 40)
    assert item.workout is not None and item.workout["exercises"] == artifact["payload"]["exercises"]


def test_a_written_out_workout_without_a_title_names_the_day_by_its_own(trainee: Trainee) -> None:
    """A workout written out with its title but no top-level title is scheduled under that title, not refused
    (a retry would mean writing the whole workout again)."""
    args = {"date": in_days(1).isoformat(), "workout": upper_body_workout()}
    assert trainee.run("schedule_workout", args).success
    assert ScheduledWorkout.objects.get(user_id=trainee.user_id).title == "Upper body"


def test_the_current_workout_is_scheduled_without_todays_progress(trainee: Trainee) -> None:
    """The current workout (made in another conversation, one exercise done today) goes on the calendar as
    planned: its exercises without the completion the logging tools added."""
    result = trainee.run("generate_workout", {"workout": upper_body_workout()})
    assert result.artifact is not None
    planned = result.artifact["payload"]["exercises"]
    assert trainee.run("mark_exercise_complete", {"exercise_id": planned[1]["id"]}).success
    assert schedule_by_id(trainee, result.artifact["artifact_id"]).success, (
        "the current workout's id is accepted"
    )
    item = ScheduledWorkout.objects.get(user_id=trainee.user_id)
    assert item.workout is not None and item.workout["exercises"] == planned


def test_another_users_workout_cannot_be_scheduled(trainee: Trainee) -> None:
    """An artifact id of another user's session is not found, as any unknown id, and nothing is written."""
    other = make_trainee()
    theirs = made_workout(other)
    result = schedule_by_id(trainee, theirs["artifact_id"])
    assert not result.success
    assert result.data["error"].startswith(
        f"No workout {theirs['artifact_id']}, and no workout has been made yet"
    )
    assert not ScheduledWorkout.objects.exists()


def test_an_unknown_artifact_id_lists_the_workouts_there_are(trainee: Trainee) -> None:
    """The error names the current workout first, then the others made in the conversation, newest first."""
    legs = made_workout(trainee, title="Legs")
    arms = made_workout(trainee, title="Arms")
    result = schedule_by_id(trainee, "art_000000000000")
    assert not result.success
    assert result.data["error"] == (
        "No workout art_000000000000. Workouts you can schedule by artifact_id: "
        f"{arms['artifact_id']} 'Arms' (the current workout); {legs['artifact_id']} 'Legs'."
    )
    assert not ScheduledWorkout.objects.exists()


def test_an_artifact_that_is_no_workout_is_refused(trainee: Trainee) -> None:
    """A timer's artifact id says it is no workout, and lists the workouts."""
    legs = made_workout(trainee, title="Legs")
    timer = {"artifact_id": "art_timer0000001", "type": "timer", "title": "Plank timer", "payload": {}}
    append_event(session=trainee.session, event_type="artifact", data=timer)
    result = schedule_by_id(trainee, "art_timer0000001")
    assert not result.success
    assert result.data["error"] == (
        "art_timer0000001 is a timer, not a workout. Workouts you can schedule by artifact_id: "
        f"{legs['artifact_id']} 'Legs' (the current workout)."
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"artifact_id": "art_x", "workout": {"exercises": []}}, "Give either artifact_id"),
        ({}, "title is required (unless artifact_id names a workout you made"),
    ],
)
def test_artifact_id_or_workout_and_a_title(trainee: Trainee, args: dict[str, Any], message: str) -> None:
    """A workout by id and one written out are exclusive; without an id the title is required."""
    result = trainee.run("schedule_workout", {"date": in_days(1).isoformat(), **args})
    assert not result.success and result.data["error"].startswith(message)
    assert not ScheduledWorkout.objects.exists()


def test_an_unknown_argument_still_fails_loudly(trainee: Trainee) -> None:
    """A near-miss name for artifact_id is named in the error, not dropped (which would schedule no workout)."""
    result = trainee.run(
        "schedule_workout", {"date": in_days(1).isoformat(), "title": "x", "workout_artifact": "a"}
    )
    assert not result.success and "workout_artifact" in result.data["error"]
    assert not ScheduledWorkout.objects.exists()


# --- update / delete --------------------------------------------------------------------------------------------
def test_update_moves_and_marks_a_scheduled_workout(trainee: Trainee) -> None:
    """Given fields change; the others stay; null clears the time."""
    item = ScheduledWorkoutFactory.create(user_id=trainee.user_id, scheduled_time=dt.time(9, 0), notes="keep")
    new_date = in_days(5)
    result = trainee.run(
        "update_scheduled_workout",
        {"workout_id": str(item.id), "date": new_date.isoformat(), "time": None, "status": "skipped"},
    )
    assert result.success, result.formatted
    item.refresh_from_db()
    assert (item.scheduled_date, item.scheduled_time, item.status, item.notes) == (
        new_date,
        None,
        "skipped",
        "keep",
    )
    assert result.raw_formatted.startswith(f"updated: {item.title} on ")
    assert result.raw_formatted.endswith("[skipped], changed date, status, time")


def test_update_replaces_a_days_workout_with_a_made_one_by_its_artifact_id(trainee: Trainee) -> None:
    """'Put this on Thursday instead of what's there' (a plan day): the day keeps its date and id and now holds
    the made workout, its title and length; the old workout's message and the plan session's notes are gone, and
    the week chain's pending preparation can no longer overwrite it."""
    made = made_workout(trainee, title="Push day")
    plan = WorkoutPlanFactory.create(user_id=trainee.user_id)
    thursday = ScheduledWorkoutFactory.create(
        user_id=trainee.user_id,
        plan=plan,
        notes="main lifts 4×5 @ 70% 1RM, RPE 7; accessories 3×8-10",
        title="Full Body A (week 1)",
        duration_minutes=60,
        workout={"exercises": [{"exercise_name": "Goblet Squat"}]},
        message="Mon: Full Body A, 1. Goblet Squat 3x10",
        preparation="pending",
    )
    result = trainee.run(
        "update_scheduled_workout", {"workout_id": str(thursday.id), "artifact_id": made["artifact_id"]}
    )
    assert result.success, result.formatted
    thursday.refresh_from_db()
    assert thursday.workout is not None
    assert thursday.workout["exercises"] == made["payload"]["exercises"]
    assert (thursday.title, thursday.duration_minutes) == ("Push day", _estimated(made))
    assert (thursday.message, thursday.notes, thursday.preparation) == ("", "", "ready")
    assert result.raw_formatted == (
        f"updated: Push day on {day(thursday.scheduled_date)} [scheduled], workout {made['artifact_id']} "
        "attached (6 exercises), changed duration_minutes, notes, title, workout"
    )


def test_a_plan_day_given_a_written_out_workout_loses_the_plans_notes_and_old_message_too(
    trainee: Trainee,
) -> None:
    """The same clean-up whichever way the new workout comes (written out here, not by artifact_id): the plan
    session's notes and the old message described what is replaced."""
    made = made_workout(trainee, title="Push day")
    thursday = ScheduledWorkoutFactory.create(
        user_id=trainee.user_id,
        plan=WorkoutPlanFactory.create(user_id=trainee.user_id),
        notes="main lifts 4×5 @ 70% 1RM, RPE 7",
        workout={"exercises": [{"exercise_name": "Goblet Squat"}]},
        message="Mon: Full Body A, 1. Goblet Squat 3x10",
    )
    workout = {"title": "Push day", "exercises": made["payload"]["exercises"]}
    result = trainee.run("update_scheduled_workout", {"workout_id": str(thursday.id), "workout": workout})
    assert result.success, result.formatted
    thursday.refresh_from_db()
    assert (thursday.message, thursday.notes) == ("", "")
    assert "changed notes, workout" in result.raw_formatted


def _estimated(artifact: dict[str, Any]) -> int:
    return round(artifact["summary"]["estimated_duration_min"])


def test_update_by_artifact_id_keeps_a_title_and_length_that_are_given(trainee: Trainee) -> None:
    """A title and a length given with artifact_id win over the made workout's."""
    made = made_workout(trainee)
    item = ScheduledWorkoutFactory.create(user_id=trainee.user_id, title="Thursday")
    args = {
        "workout_id": str(item.id),
        "artifact_id": made["artifact_id"],
        "title": "Chest",
        "duration_minutes": 50,
    }
    assert trainee.run("update_scheduled_workout", args).success
    item.refresh_from_db()
    assert (item.title, item.duration_minutes) == ("Chest", 50)


@pytest.mark.parametrize("which", ["other user", "unknown", "both"])
def test_update_by_artifact_id_refuses_what_schedule_workout_refuses(trainee: Trainee, which: str) -> None:
    """Another user's workout id is not found, as any unknown id, and an id with a written-out workout is
    refused: the day is left as it was."""
    theirs = made_workout(make_trainee())
    item = ScheduledWorkoutFactory.create(user_id=trainee.user_id, title="Mine", workout={"exercises": []})
    args: dict[str, Any] = {
        "other user": {"artifact_id": theirs["artifact_id"]},
        "unknown": {"artifact_id": "art_000000000000", "title": "New"},
        "both": {"artifact_id": theirs["artifact_id"], "workout": {"exercises": []}},
    }[which]
    result = trainee.run("update_scheduled_workout", {"workout_id": str(item.id), **args})
    assert not result.success
    assert result.data["error"].startswith(
        "Give either artifact_id" if which == "both" else f"No workout {args['artifact_id']}"
    )
    item.refresh_from_db()
    assert (item.title, item.workout) == ("Mine", {"exercises": []})


@pytest.mark.parametrize(
    ("which", "message"),
    [
        ("unknown", "not found"),
        ("not-a-uuid", "not found"),
        ("other user", "not found"),
        ("nothing", "Nothing to change"),
        ("past", "in the past"),
    ],
)
def test_update_failures(trainee: Trainee, which: str, message: str) -> None:
    """Unknown or foreign ids, no changes and past dates fail; the foreign workout is untouched."""
    own = ScheduledWorkoutFactory.create(user_id=trainee.user_id, title="Mine")
    foreign = ScheduledWorkoutFactory.create(title="Theirs")
    args: dict[str, Any] = {
        "unknown": {"workout_id": str(uuid.uuid4()), "title": "X"},
        "not-a-uuid": {"workout_id": "monday", "title": "X"},
        "other user": {"workout_id": str(foreign.id), "title": "X"},
        "nothing": {"workout_id": str(own.id)},
        "past": {"workout_id": str(own.id), "date": in_days(-3).isoformat()},
    }[which]
    result = trainee.run("update_scheduled_workout", args)
    assert not result.success and message in result.data["error"]
    if message == "not found":
        assert str(own.id) in result.data["error"]  # the user's upcoming workouts are listed
    foreign.refresh_from_db()
    own.refresh_from_db()
    assert (foreign.title, own.title) == ("Theirs", "Mine")


def test_delete_scheduled_workout(trainee: Trainee) -> None:
    """Deleting answers with a bare confirmation."""
    item = ScheduledWorkoutFactory.create(user_id=trainee.user_id)
    result = trainee.run("delete_scheduled_workout", {"workout_id": str(item.id)})
    assert result.success and result.raw_formatted == "deleted"
    assert not ScheduledWorkout.objects.filter(id=item.id).exists()


@pytest.mark.parametrize("which", ["unknown", "other user"])
def test_delete_unknown_or_foreign_scheduled_workout_fails(trainee: Trainee, which: str) -> None:
    """Only the user's own scheduled workouts can be deleted."""
    foreign = ScheduledWorkoutFactory.create()
    reference = str(uuid.uuid4()) if which == "unknown" else str(foreign.id)
    result = trainee.run("delete_scheduled_workout", {"workout_id": reference})
    assert not result.success and "not found" in result.data["error"]
    assert ScheduledWorkout.objects.filter(id=foreign.id).exists()


# --- create_workout_plan ------------------------------------------------------------------------------------------
def test_a_plan_with_core_work_and_a_cardio_finisher_ends_every_session_with_them(trainee: Trainee) -> None:
    """'3 days a week to get stronger, core work at the end and a cardio finisher': a strength plan (not an
    endurance one) whose every session's prescription ends with both, lighter in the deload week, and the user
    is told so."""
    result = trainee.run(
        "create_workout_plan",
        {
            "name": "Strength + Core",
            "goal": "get stronger",
            "weeks": 6,
            "days_per_week": 3,
            "extras": ["core work at the end of each session", "a cardio finisher"],
        },
    )
    assert result.success, result.formatted
    plan = WorkoutPlan.objects.get(user_id=trainee.user_id)
    assert (plan.plan["goal_type"], plan.plan["extras"]) == (
        "strength",
        ["core work at the end of each session", "a cardio finisher"],
    )
    days = [day for week in plan.plan["weeks"] for day in week["days"]]
    build = "; core finisher: plank 3×30s, dead bug 3×10; cardio finisher: 10 min bike intervals 30s hard / 90s easy"
    assert [day["prescription"].endswith(build) for day in days] == [
        day["title"].find("deload") < 0 for day in days
    ]
    assert all(
        "core finisher: plank 2×30s, dead bug 2×10" in day["prescription"]
        for day in days
        if "deload" in day["title"]
    )
    assert (
        "Every session ends with core work (plank and dead bugs) and a 10-minute cardio finisher (bike intervals, or bodyweight cardio where there is no bike)."
        in told(result)
    )


def test_a_plan_extra_it_cannot_add_is_refused_before_anything_is_written(trainee: Trainee) -> None:
    """An addition the plan cannot put in a session fails naming what it can add; no plan is stored."""
    args = {"name": "P", "goal": "get stronger", "weeks": 4, "extras": ["a sauna after each session"]}
    result = trainee.run("create_workout_plan", args)
    assert not result.success
    assert result.data["error"].startswith(
        "Plan not created: extras: I can add core work or a cardio finisher to every session, not 'a sauna"
    )
    assert not WorkoutPlan.objects.exists()


def test_create_plan_stores_an_active_plan_and_fills_the_calendar(trainee: Trainee) -> None:
    """12 weeks × 3 days by default: 36 sessions on the calendar, deloads in weeks 5 and 10."""
    start = next_monday(in_days(1))
    result = trainee.run(
        "create_workout_plan",
        {
            "name": "Strength Block",
            "goal": "get stronger at squat and bench",
            "days_per_week": 3,
            "start_date": start.isoformat(),
        },
    )
    assert result.success, result.formatted
    plan = WorkoutPlan.objects.get(user_id=trainee.user_id)
    assert (plan.status, plan.weeks, plan.start_date, plan.plan["goal_type"]) == (
        "active",
        12,
        start,
        "strength",
    )
    assert plan.plan["deload_weeks"] == [5, 10]
    sessions = ScheduledWorkout.objects.filter(plan=plan).order_by("scheduled_date")
    assert sessions.count() == 36
    assert [item.scheduled_date.weekday() for item in sessions[:3]] == [0, 2, 4]
    assert sessions[0].scheduled_date == start and sessions[0].title == "Full Body A (week 1)"
    lines = result.raw_formatted.splitlines()
    assert lines[0].startswith(f"Plan: Strength Block id={plan.id} [active] strength, 12 weeks")
    assert "36 sessions added to the calendar" in lines[0]
    assert lines[2] == "  Week 1: 3 workouts (build, RPE 7, 70% 1RM): Full Body A, Full Body B, Full Body C"
    assert lines[6] == "  Week 5: 3 workouts (deload, RPE 6, 60% 1RM): Full Body A, Full Body B, Full Body C"
    assert result.data["scheduled_sessions"] == 36
    assert told(result) == (
        f"Your 12-week strength plan starts {day(start)}: 3 days a week (Mon, Wed, Fri) at Home, adding load each "
        "build week, with weeks 5 and 10 lighter to recover. I'm preparing week 1's workouts now; each one shows "
        "up in your schedule as soon as it's ready."
    )


@pytest.mark.parametrize(
    ("goal", "what_it_says"),
    [
        (
            "build strength",
            "Your 4-week strength plan starts {start}: 3 days a week (Mon, Wed, Fri) at Gym, adding load each build "
            "week. For your knee, the workouts leave out squats, lunges, jumping and kneeling.",
        ),
        (
            "run a 5K",
            "Your 6-week endurance plan starts {start}: 3 days a week (Mon, Wed, Fri) at Gym, adding about 10 % more "
            "time each build week, with week 5 lighter to recover. For your knee, your cardio is on the bike "
            "instead of running, and the workouts leave out squats, lunges, jumping and kneeling.",
        ),
    ],
)
def test_a_plan_shaped_by_a_knee_says_what_it_keeps_the_knee_safe_from(
    trainee: Trainee, goal: str, what_it_says: str
) -> None:
    """A sore knee: the user hears the plan in a coach's words (weeks, days a week, the goal, the deload) and what
    it leaves out for the knee, not a list of dates and session counts."""
    upsert_profile(user_id=trainee.user_id, injuries="sore left knee")
    start = next_monday(in_days(1))
    weeks = 4 if goal == "build strength" else 6
    result = trainee.run(
        "create_workout_plan",
        {"name": "Block", "goal": goal, "weeks": weeks, "start_date": start.isoformat(), "location": "Gym"},
    )
    assert result.success, result.formatted
    assert told(result).startswith(what_it_says.format(start=day(start)))


def test_a_plan_for_a_mildly_bothered_knee_says_what_it_keeps(trainee: Trainee) -> None:
    """Mild discomfort in deep lunges: the plan leaves out the deep knee bends and says the knee-friendly leg work
    stays (it used to say every squat was left out, and the weeks had no quad work)."""
    upsert_profile(
        user_id=trainee.user_id,
        injuries="Mild discomfort in the left knee during deep lunges",
        limitations=["knee"],
    )
    start = next_monday(in_days(1))
    result = trainee.run(
        "create_workout_plan",
        {
            "name": "Block",
            "goal": "build muscle",
            "weeks": 4,
            "start_date": start.isoformat(),
            "location": "Gym",
        },
    )
    assert result.success, result.formatted
    assert (
        "For your knee, the workouts leave out deep squats, lunges and jumping and keep the leg work knee-friendly, "
        "in a pain-free range."
    ) in told(result)


def test_the_bike_is_said_for_the_injury_that_rules_out_running(trainee: Trainee) -> None:
    """A lower back and an ankle, a 5K plan moved to the bike: the ankle is why (running loads it), not the lower
    back, which comes first in the rules' order."""
    upsert_profile(user_id=trainee.user_id, injuries="", limitations=["lower back", "ankle"])
    start = next_monday(in_days(1))
    result = trainee.run(
        "create_workout_plan",
        {"name": "Block", "goal": "run a 5K", "weeks": 6, "start_date": start.isoformat(), "location": "Gym"},
    )
    assert result.success, result.formatted
    said = told(result)
    assert "For your ankle, your cardio is on the bike instead of running" in said
    assert "For your lower back, your cardio" not in said


def test_create_plan_accepts_seed_001_spelling_and_defaults_to_next_monday(trainee: Trainee) -> None:
    """plan_name, goal_description, duration_weeks, workouts_per_week and preferred_days are accepted."""
    result = trainee.run(
        "create_workout_plan",
        {
            "plan_name": "5K Plan",
            "goal_description": "Run a 5K under 25 minutes",
            "duration_weeks": 6,
            "preferred_days": ["Tuesday", "thu", "Sat"],
        },
    )
    assert result.success, result.formatted
    plan = WorkoutPlan.objects.get(user_id=trainee.user_id)
    assert (plan.name, plan.weeks, plan.plan["goal_type"], plan.plan["weekdays"]) == (
        "5K Plan",
        6,
        "endurance",
        ["Tue", "Thu", "Sat"],
    )
    assert plan.start_date == next_monday(timezone.localdate())
    assert plan.scheduled_workouts.count() == 18


def test_a_new_plan_archives_the_active_one_and_cancels_its_future_sessions(trainee: Trainee) -> None:
    """Only one plan is active: the old one is archived and its upcoming sessions cancelled."""
    old = WorkoutPlanFactory.create(user_id=trainee.user_id, status="active")
    upcoming = ScheduledWorkoutFactory.create(user_id=trainee.user_id, plan=old, scheduled_date=in_days(2))
    result = trainee.run(
        "create_workout_plan", {"name": "New", "goal": "build muscle", "weeks": 4, "days_per_week": 4}
    )
    assert result.success, result.formatted
    old.refresh_from_db()
    upcoming.refresh_from_db()
    assert (old.status, upcoming.status) == ("archived", "cancelled")
    assert result.data["archived_plans"] == [str(old.id)]
    assert f"Archived the previous active plan: {old.name} id={old.id}." in result.raw_formatted


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"start_date": "2001-01-01"}, "in the past"),
        (
            {"days_per_week": 2, "preferred_days": ["Mon", "Wed", "Fri"]},
            "preferred_days lists 3 days but days_per_week is 2",
        ),
        ({"preferred_days": ["Mon", "Funday"]}, "unknown weekday 'Funday'"),
        ({"weeks": 4, "deload_weeks": [6]}, "deload weeks [6] are outside weeks 1..4"),
    ],
)
def test_create_plan_failures(trainee: Trainee, args: dict[str, Any], message: str) -> None:
    """A past start, mismatched or unknown days and impossible deload weeks fail; nothing is stored."""
    result = trainee.run("create_workout_plan", {"name": "P", "goal": "fitness", **args})
    assert not result.success and message in result.data["error"]
    assert not WorkoutPlan.objects.filter(user_id=trainee.user_id).exists()


def test_create_plan_bounds_are_validated(trainee: Trainee) -> None:
    """weeks above 52 and 8 days per week are schema failures naming both fields."""
    result = trainee.run("create_workout_plan", {"name": "P", "goal": "g", "weeks": 60, "days_per_week": 8})
    assert not result.success
    assert "weeks" in result.data["error"] and "days_per_week" in result.data["error"]


# --- build_plan (pure) --------------------------------------------------------------------------------------------------
MONDAY = dt.date(2026, 1, 5)


def test_build_plan_is_deterministic() -> None:
    """The same arguments give the same plan."""
    kwargs: dict[str, Any] = {"goal": "get strong", "weeks": 12, "days_per_week": 4, "start_date": MONDAY}
    assert build_plan(**kwargs) == build_plan(**kwargs)


def test_strength_plan_progresses_and_resumes_after_deloads() -> None:
    """Intensity +2.5% per build week; deload weeks drop to 60%; the next build week continues the climb."""
    plan = build_plan(goal="strength", weeks=12, days_per_week=3, start_date=MONDAY)
    intensity = [week["intensity_pct"] for week in plan["weeks"]]
    assert intensity == [70, 72.5, 75, 77.5, 60, 80, 82.5, 85, 87.5, 60, 90, 92.5]
    assert [week["deload"] for week in plan["weeks"]].count(True) == 2
    assert [week["volume_factor"] for week in plan["weeks"]][4] == 0.6
    assert plan["end_date"] == "2026-03-29"


def test_endurance_plan_adds_about_ten_percent_a_week() -> None:
    """The long session grows ~10% per build week and shrinks in the deload week."""
    plan = build_plan(goal="run a faster 10K", weeks=6, days_per_week=3, start_date=MONDAY)
    long_runs = [week["days"][2]["duration_minutes"] for week in plan["weeks"]]
    assert [day["session"] for day in plan["weeks"][0]["days"]] == ["Easy Run", "Intervals Run", "Long Run"]
    assert long_runs == [45, 50, 55, 60, 25, 65]


@pytest.mark.parametrize("goal", ["get stronger", "build muscle", "run a 10K", "lose fat", "feel better"])
@pytest.mark.parametrize(("weeks", "deloads"), [(4, None), (12, None), (8, [4, 8]), (6, [3])])
def test_the_progression_text_is_read_from_its_weeks(
    goal: str, weeks: int, deloads: list[int] | None
) -> None:
    """The progression names the deload weeks the plan has (or says it has none) and ends its climb on the last
    build week's value: a 4-week strength block does not promise 92.5% 1RM, a plan without deloads names none."""
    plan = build_plan(goal=goal, weeks=weeks, days_per_week=3, start_date=MONDAY, deload_weeks=deloads)
    text = plan["progression"]
    last_build = [week for week in plan["weeks"] if not week["deload"]][-1]
    said = re.search(r"Weeks? ([\d, and]+?) (?:is|are) (?:a )?lighter deload", text)
    assert ([int(n) for n in re.findall(r"\d+", said[1])] if said else []) == plan["deload_weeks"]
    assert ("No deload week in this block." in text) == (not plan["deload_weeks"])
    if plan["goal_type"] != "endurance":
        assert (
            f"{last_build['target_rpe']:g} " in text or f"RPE {last_build['target_rpe']:g} throughout" in text
        )
    if plan["goal_type"] == "strength":
        assert f"to {last_build['intensity_pct']:g}% 1RM" in text
        assert (weeks == 12) == ("92.5" in text)
    assert progression_problems(text, plan["deload_weeks"]) == []


def test_an_endurance_week_after_a_deload_is_not_told_it_adds_to_the_deload() -> None:
    """The week after a deload resumes from the last build week: its notes do not say 'more than last week', and
    week 1 (with no week before it) does not either."""
    plan = build_plan(goal="run a 10K", weeks=6, days_per_week=3, start_date=MONDAY)
    notes = {week["week"]: week["days"][2]["notes"] for week in plan["weeks"]}
    assert "last week" not in notes[1] and "last week" not in notes[6]
    assert "About 10 % more time than last week." in notes[2]


@pytest.mark.parametrize(
    ("progression", "deloads", "problem"),
    [
        ("Loads rise weekly; week 4 is a deload week.", [5], "names week 4 as a deload"),
        ("Build for three weeks, no deload in this block.", [4], "says there is no deload"),
        ("Weeks 5 and 10 are lighter deload weeks.", [5, 10], None),
        ("Build weeks 1-3, then deload in week 4.", [4], None),
        ("Build through week 4, deload in week 5, then build to week 9, deload week 10.", [5, 10], None),
        ("Loads rise to week 4 - deload in week 5.", [5], None),
        ("Week 3 (deload): 60 % of the volume.", [4], "names week 3 as a deload"),
    ],
)
def test_a_models_progression_that_names_the_wrong_deload_is_caught(
    progression: str, deloads: list[int], problem: str | None
) -> None:
    """The fitness_plan sub-agent's answer is checked with this: a week named as a deload must be one."""
    found = progression_problems(progression, deloads)
    assert (problem in found[0]) if problem else found == []


def test_days_fall_on_the_chosen_weekdays_from_a_mid_week_start() -> None:
    """Starting on a Wednesday with Mon/Wed/Fri: week 1 is Wed, Fri, then the next Monday."""
    plan = build_plan(goal="fitness", weeks=2, days_per_week=3, start_date=dt.date(2026, 1, 7))
    dates = [day["date"] for week in plan["weeks"] for day in week["days"]]
    assert dates == ["2026-01-07", "2026-01-09", "2026-01-12", "2026-01-14", "2026-01-16", "2026-01-19"]


@pytest.mark.parametrize(
    ("goal", "expected"),
    [
        ("Run my first marathon", "endurance"),
        ("Get stronger", "strength"),
        ("Build muscle mass", "hypertrophy"),
        ("lose fat before summer", "fat_loss"),
        ("feel better", "general"),
        ("get stronger, with a cardio finisher", "strength"),  # an addition to the sessions, not the goal
        ("improve my cardio", "endurance"),
    ],
)
def test_goals_are_classified_by_keywords(goal: str, expected: str) -> None:
    """The goal text decides the kind of plan."""
    assert classify_goal(goal) == expected


def test_splits_by_days_per_week() -> None:
    """Upper/lower for 4 days, push/pull/legs for 3 days of hypertrophy."""
    assert build_plan(goal="strength", weeks=1, days_per_week=4, start_date=MONDAY)["split"] == [
        "Upper A",
        "Lower A",
        "Upper B",
        "Lower B",
    ]
    assert build_plan(goal="build muscle", weeks=1, days_per_week=3, start_date=MONDAY)["split"] == [
        "Push",
        "Pull",
        "Legs",
    ]


def test_parse_weekdays_rejects_repeats() -> None:
    """A weekday given twice is an error."""
    with pytest.raises(ValueError, match="given twice"):
        parse_weekdays(["Mon", "monday"])


def test_prepare_week_tells_the_user_which_days_are_on_their_way(trainee: Trainee) -> None:
    """prepare_week for week 2 of a plan: the user hears each day of that week, by date and session, coming."""
    start = next_monday(in_days(1))
    created = trainee.run(
        "create_workout_plan", {"name": "Base", "goal": "get fitter", "start_date": start.isoformat()}
    )
    assert created.success, created.formatted
    result = trainee.run("prepare_week", {"week": 2})
    assert result.success, result.formatted
    days = [start + dt.timedelta(days=7 + offset) for offset in (0, 2, 4)]
    listing = ", ".join(
        f"{day(when)} Full Body {name} (week 2)" for when, name in zip(days, "ABC", strict=True)
    )
    assert told(result) == (
        f"On it: I'm preparing {listing}. Each workout and its message show up in your schedule as soon as it's "
        "ready."
    )
