"""A log lands on the workout the user did (docs/contracts.md §12.6 (workout tools)): log_workout and
log_completed_exercise take the artifact_id of a workout made earlier, and a current workout on the calendar for
a later day is not taken for today's."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from datasources_app.formatters import day
from datasources_app.models import WorkoutLog
from datasources_app.selectors import get_current_workout, local_today
from sessions_app.services import append_event
from tests.tools_app.workout_support import Trainee, full_workout, make_trainee, told, upper_body_workout

pytestmark = pytest.mark.django_db


@pytest.fixture
def trainee() -> Trainee:
    return make_trainee()


def made(trainee: Trainee, workout: dict[str, Any], title: str) -> dict[str, Any]:
    """A workout generate_workout made in the trainee's session (it becomes the current one), its artifact stored
    as the loop stores it."""
    result = trainee.run("generate_workout", {"workout": workout | {"title": title}})
    assert result.success and result.artifact is not None, result.formatted
    append_event(session=trainee.session, event_type="artifact", data=result.artifact)
    return result.artifact


def tomorrow(trainee: Trainee) -> dt.date:
    return local_today(user_id=trainee.user_id) + dt.timedelta(days=1)


@pytest.fixture
def legs_then_cardio(trainee: Trainee) -> tuple[dict[str, Any], dict[str, Any]]:
    """The trial's day: a workout for today ("Legs"), then one for tomorrow ("Home Cardio"), put on tomorrow's
    calendar by its artifact_id: the second is the current workout now."""
    legs = made(trainee, upper_body_workout(), "Legs")
    cardio = made(trainee, full_workout(), "Home Cardio")
    scheduled = trainee.run(
        "schedule_workout", {"date": tomorrow(trainee).isoformat(), "artifact_id": cardio["artifact_id"]}
    )
    assert scheduled.success, scheduled.formatted
    return legs, cardio


def current_id(trainee: Trainee) -> str | None:
    current = get_current_workout(user_id=trainee.user_id)
    return current.artifact_id if current is not None else None


def test_done_is_not_logged_to_a_workout_meant_for_a_later_day(
    trainee: Trainee, legs_then_cardio: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    """ "Done" with tomorrow's workout current logs nothing and names the workouts to pick from, today's among them."""
    legs, cardio = legs_then_cardio
    result = trainee.run("log_workout", {"others_as_planned": True})
    assert not result.success
    assert result.data["error"] == (
        f"Nothing was logged: the current workout 'Home Cardio' is on the calendar for {day(tomorrow(trainee))}, "
        "not today. Call log_workout again with the artifact_id of the workout the user did: "
        f"{cardio['artifact_id']} 'Home Cardio' (the current workout, for {day(tomorrow(trainee))}); "
        f"{legs['artifact_id']} 'Legs'. A workout not listed (made in an earlier conversation): log what the user "
        "did with log_completed_exercise by exercise_name."
    )
    assert not WorkoutLog.objects.exists()
    assert current_id(trainee) == cardio["artifact_id"]


def test_done_is_not_logged_to_tomorrows_workout_changed_since_it_was_scheduled(
    trainee: Trainee, legs_then_cardio: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    """A change gives tomorrow's workout a new id while its day keeps the version scheduled: it is still tomorrow's,
    so "done" logs nothing into it (before, the legs session went into "Home Cardio", for today)."""
    legs, cardio = legs_then_cardio
    removed = trainee.run("remove_exercise", {"exercise_id": "2"})
    assert removed.success, removed.formatted
    assert current_id(trainee) != cardio["artifact_id"]
    result = trainee.run("log_workout", {"others_as_planned": True})
    assert not result.success, result.formatted
    assert f"'Home Cardio' is on the calendar for {day(tomorrow(trainee))}, not today" in result.data["error"]
    assert f"(the current workout, for {day(tomorrow(trainee))})" in result.data["error"]
    assert legs["artifact_id"] in result.data["error"]
    assert not WorkoutLog.objects.exists()


def test_log_workout_by_artifact_id_records_the_workout_done_and_keeps_the_current_one(
    trainee: Trainee, legs_then_cardio: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    """The trial's bug: the legs lifts went into a log titled "Home Cardio". Named by its id, the legs workout is
    logged with its plan as the targets, and tomorrow's workout stays current."""
    legs, cardio = legs_then_cardio
    result = trainee.run(
        "log_workout",
        {
            "artifact_id": legs["artifact_id"],
            "completed_exercises": [{"exercise_id": "Seated Dumbbell Shoulder Press", "notes": "felt heavy"}],
            "others_as_planned": True,
        },
    )
    assert result.success, result.formatted
    log = WorkoutLog.objects.get(user_id=trainee.user_id)
    assert (log.title, log.artifact_id) == ("Legs", legs["artifact_id"])
    entries = list(log.entries.order_by("order"))
    assert [entry.exercise_name for entry in entries] == [
        "Jumping Jack",
        "Dumbbell Bench Press",
        "Seated Dumbbell Shoulder Press",
        "Dumbbell Biceps Curl",
        "Band Pull-Apart",
        "Push-Up",
    ]
    press = entries[2]
    assert (press.target_load_each, press.actual_load_each, press.notes) == (
        [12, 12, 12],
        [12, 12, 12],
        "felt heavy",
    )
    assert result.raw_formatted.startswith(f"Workout logged: 'Legs' ({legs['artifact_id']}, for today). ")
    assert (
        f"The current workout, 'Home Cardio' ({cardio['artifact_id']}, on the calendar for "
        f"{day(tomorrow(trainee))}, not today), is kept." in result.raw_formatted
    )
    assert (result.data["artifact_id"], result.data["title"]) == (legs["artifact_id"], "Legs")
    assert current_id(trainee) == cardio["artifact_id"]


def test_tomorrows_workout_done_early_is_logged_by_its_id_and_says_its_day(
    trainee: Trainee, legs_then_cardio: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    """A user may do tomorrow's workout today: named by its id it is logged, the result saying which day it was for."""
    _, cardio = legs_then_cardio
    result = trainee.run("log_workout", {"artifact_id": cardio["artifact_id"], "others_as_planned": True})
    assert result.success, result.formatted
    assert WorkoutLog.objects.get(user_id=trainee.user_id).title == "Home Cardio"
    assert result.raw_formatted.startswith(
        f"Workout logged: 'Home Cardio' ({cardio['artifact_id']}, on the calendar for {day(tomorrow(trainee))}, "
        "not today). "
    )
    assert current_id(trainee) is None


def test_sets_logged_against_a_made_workout_go_to_its_log_and_done_completes_it(
    trainee: Trainee, legs_then_cardio: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    """A set logged to the legs workout by its id joins the legs log, ticks nothing off tomorrow's workout, and
    "done" for the legs completes that log without logging the set twice."""
    legs, cardio = legs_then_cardio
    logged = trainee.run(
        "log_completed_exercise",
        {"artifact_id": legs["artifact_id"], "exercise_id": "Dumbbell Bench Press", "reps": [10, 10, 6]},
    )
    assert logged.success, logged.formatted
    assert f"(logged to 'Legs' ({legs['artifact_id']}, for today))" in logged.raw_formatted
    current = get_current_workout(user_id=trainee.user_id)
    assert current is not None and not any(item.get("completed") for item in current.workout["exercises"])
    done = trainee.run("log_workout", {"artifact_id": legs["artifact_id"], "others_as_planned": True})
    assert done.success, done.formatted
    log = WorkoutLog.objects.get(user_id=trainee.user_id)
    assert log.title == "Legs"
    names = [entry.exercise_name for entry in log.entries.all()]
    assert names.count("Dumbbell Bench Press") == 1 and len(names) == 6
    assert done.data["already_logged_count"] == 1
    assert current_id(trainee) == cardio["artifact_id"]


def test_an_exercise_outside_tomorrows_workout_is_not_logged_into_it(
    trainee: Trainee, legs_then_cardio: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    """A lift logged by name, not in the current workout meant for tomorrow, is not filed under that workout."""
    result = trainee.run(
        "log_completed_exercise", {"exercise_name": "Dumbbell Biceps Curl", "reps": [10, 10]}
    )
    assert result.success, result.formatted
    log = WorkoutLog.objects.get(user_id=trainee.user_id)
    assert (log.title, log.artifact_id) == ("", "")


def test_an_earlier_version_of_the_current_workout_logs_the_current_one(trainee: Trainee) -> None:
    """The id of the workout before a change still means that workout: the version logged is the current one."""
    first = made(trainee, upper_body_workout(), "Legs")
    swapped = trainee.run("swap_exercise", {"exercise_id": "Band Pull-Apart", "replacement_name": "Push-Up"})
    assert swapped.success, swapped.formatted
    result = trainee.run("log_workout", {"artifact_id": first["artifact_id"], "others_as_planned": True})
    assert result.success, result.formatted
    log = WorkoutLog.objects.get(user_id=trainee.user_id)
    assert "Band Pull-Apart" not in [entry.exercise_name for entry in log.entries.all()]
    assert current_id(trainee) is None


def test_another_users_workout_is_not_found_and_nothing_is_logged(trainee: Trainee) -> None:
    """Another user's artifact id is "not found" like any unknown one; the error lists this user's workouts."""
    mine = made(trainee, upper_body_workout(), "Legs")
    other = make_trainee()
    theirs = made(other, full_workout(), "Theirs")
    result = trainee.run("log_workout", {"artifact_id": theirs["artifact_id"], "others_as_planned": True})
    assert not result.success
    assert result.data["error"] == (
        f"Nothing was logged: No workout {theirs['artifact_id']}. Workouts you can log by artifact_id: "
        f"{mine['artifact_id']} 'Legs' (the current workout)."
    )
    assert not WorkoutLog.objects.exists()
    assert current_id(trainee) == mine["artifact_id"]


def test_an_exercise_added_to_a_workout_already_logged_joins_its_log_and_asks_for_no_more(
    trainee: Trainee, legs_then_cardio: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    """The trial's "after the legs I also did pull-throughs": logged to the finished legs workout, the user is not
    told to finish the rest of it."""
    legs, _ = legs_then_cardio
    assert trainee.run("log_workout", {"artifact_id": legs["artifact_id"], "others_as_planned": True}).success
    result = trainee.run(
        "log_completed_exercise",
        {"artifact_id": legs["artifact_id"], "exercise_name": "Cable Pull Through", "reps": [15, 15, 15]},
    )
    assert result.success, result.formatted
    log = WorkoutLog.objects.get(user_id=trainee.user_id)
    assert log.entries.count() == 7 and log.title == "Legs"
    assert told(result) == "Logged Cable Pull-Through 3×15. Nice work!"


def test_the_only_workout_of_the_session_on_a_later_day_is_logged_only_by_its_id(trainee: Trainee) -> None:
    """The final trial: today's workout was made in an earlier conversation, this one made only tomorrow's, and
    "done with the upper workout" logged tomorrow's. Now "done" logs nothing while the only workout at hand is
    for a later day, and says how to log either; its id logs it when the user did it early ("put that on Thursday
    too", then "done")."""
    only = made(trainee, upper_body_workout(), "Upper body")
    scheduled = trainee.run(
        "schedule_workout", {"date": tomorrow(trainee).isoformat(), "artifact_id": only["artifact_id"]}
    )
    assert scheduled.success, scheduled.formatted
    refused = trainee.run("log_workout", {"others_as_planned": True})
    assert not refused.success and not WorkoutLog.objects.exists()
    assert (
        f"{only['artifact_id']} 'Upper body' (the current workout, for {day(tomorrow(trainee))})"
        in (refused.data["error"])
    )
    assert "log_completed_exercise by exercise_name" in refused.data["error"]
    result = trainee.run("log_workout", {"others_as_planned": True, "artifact_id": only["artifact_id"]})
    assert result.success, result.formatted
    assert WorkoutLog.objects.get(user_id=trainee.user_id).title == "Upper body"
    assert current_id(trainee) is None


def test_the_workouts_to_log_list_each_workout_once_at_its_latest_version(trainee: Trainee) -> None:
    """A changed workout is listed once, by its newest id, so the model is not offered an outdated version."""
    made(trainee, upper_body_workout(), "Legs")
    swapped = trainee.run("swap_exercise", {"exercise_id": "Band Pull-Apart", "replacement_name": "Push-Up"})
    assert swapped.success and swapped.artifact is not None, swapped.formatted
    append_event(session=trainee.session, event_type="artifact", data=swapped.artifact)
    cardio = made(trainee, full_workout(), "Home Cardio")
    assert trainee.run(
        "schedule_workout", {"date": tomorrow(trainee).isoformat(), "artifact_id": cardio["artifact_id"]}
    ).success
    result = trainee.run("log_workout", {"others_as_planned": True})
    assert not result.success
    assert (
        f"{cardio['artifact_id']} 'Home Cardio' (the current workout, for {day(tomorrow(trainee))}); "
        f"{swapped.artifact['artifact_id']} 'Legs'. A workout not listed"
    ) in result.data["error"]


def test_sets_logged_before_the_workout_was_displaced_are_completed_not_repeated(trainee: Trainee) -> None:
    """A set logged while the legs were current (then changed, then displaced by tomorrow's workout) stays in the
    one legs log that "done" completes by the newest version's id."""
    made(trainee, upper_body_workout(), "Legs")
    assert trainee.run("mark_exercise_complete", {"exercise_id": "Dumbbell Bench Press"}).success
    swapped = trainee.run("swap_exercise", {"exercise_id": "Band Pull-Apart", "replacement_name": "Push-Up"})
    assert swapped.success and swapped.artifact is not None, swapped.formatted
    append_event(session=trainee.session, event_type="artifact", data=swapped.artifact)
    made(trainee, full_workout(), "Home Cardio")
    done = trainee.run(
        "log_workout", {"artifact_id": swapped.artifact["artifact_id"], "others_as_planned": True}
    )
    assert done.success, done.formatted
    log = WorkoutLog.objects.get(user_id=trainee.user_id)
    names = [entry.exercise_name for entry in log.entries.all()]
    assert names.count("Dumbbell Bench Press") == 1 and "Band Pull-Apart" not in names
    assert done.data["already_logged_count"] == 1
