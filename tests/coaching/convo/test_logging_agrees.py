"""Logging and statistics agree (issue 17, item 4): sets logged during a workout belong to it, one titled
history entry per session workout, "done" completes it, dumbbell pairs count both hands, and per-hand loads
are said to be per hand wherever they are shown."""

from __future__ import annotations

import re
from typing import Any

import pytest

from datasources_app.formatters import Units, log_entry
from datasources_app.models import UserSettings
from datasources_app.selectors import get_current_workout, get_settings, user_timezone
from datasources_app.services import upsert_settings
from datasources_app.sources import fetch_and_format
from sessions_app.services import create_session
from tests.coaching.convo.conftest import Chat, main_exercises, tools_of
from tests.trainer_agent.offline.conftest import created_workout
from tools_app.registry import execute_tool
from tools_app.types import ToolContext

pytestmark = pytest.mark.django_db


def pair_and_other(exercises: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A loaded dumbbell-pair exercise of the workout and the other main exercises."""
    main = main_exercises(exercises)
    pair = next((e for e in main if e.get("implements") == 2), None)
    assert pair is not None, [e["exercise_name"] for e in main]
    return pair, [e for e in main if e["id"] != pair["id"]]


def log_tool(chat: Chat, arguments: dict[str, Any]) -> str:
    """Run log_completed_exercise as a model would, in a session of the user; its observation."""
    session = create_session(user_id=chat.user_id)
    result = execute_tool(
        "log_completed_exercise", arguments, ToolContext(user_id=chat.user_id, session=session)
    )
    assert result.success, result.formatted
    return result.raw_formatted


def test_sets_logged_mid_workout_and_done_make_one_titled_history_entry(chat: Chat) -> None:
    """The issue's session: one exercise logged, then "done": one workout in history, titled, each exercise once."""
    exercises = chat.workout()
    pair, _ = pair_and_other(exercises)
    chat.say(f"I did 3 sets of 10 at 20 kg on {pair['exercise_name']}")

    done = chat.say("done")

    assert tools_of(done)[0] == "log_workout"
    (log,) = chat.logs()
    assert log.title == created_workout(chat.turns[0])["title"]
    names = [entry.exercise_name for entry in log.entries.order_by("order")]
    assert sorted(names) == sorted(e["exercise_name"] for e in exercises)
    assert chat.statistics().workouts == 1
    assert get_current_workout(user_id=chat.user_id) is None


def test_the_first_set_logged_already_titles_the_history_entry(chat: Chat) -> None:
    """Before "done", the history shows the workout by its title, not an untitled entry."""
    exercises = chat.workout()
    pair, _ = pair_and_other(exercises)

    chat.say(f"I did 3 sets of 10 at 20 kg on {pair['exercise_name']}")

    (log,) = chat.logs()
    assert log.title == created_workout(chat.turns[0])["title"]
    history = fetch_and_format(user_id=chat.user_id, source="workout_history").text
    assert log.title in history


def test_every_exercise_logged_one_by_one_then_done_is_still_one_entry(chat: Chat) -> None:
    """Logging each main exercise as it is done and then saying "done" logs nothing twice."""
    exercises = chat.workout()
    for exercise in main_exercises(exercises):
        chat.say(f"I did 2 sets of 8 on {exercise['exercise_name']}")

    chat.say("done")

    (log,) = chat.logs()
    names = [entry.exercise_name for entry in log.entries.all()]
    assert len(names) == len(set(names)) == len(exercises)
    assert chat.statistics().workouts == 1


def test_sets_logged_before_a_swap_stay_with_the_workout(chat: Chat) -> None:
    """A swap makes a new version of the workout; what was logged before it still belongs to it."""
    exercises = chat.workout()
    pair, others = pair_and_other(exercises)
    chat.say(f"I did 3 sets of 10 at 20 kg on {pair['exercise_name']}")
    swapped = chat.say(f"swap the {others[-1]['exercise_name']}")
    assert chat.calls(swapped, "swap_exercise")

    chat.say("done")

    (log,) = chat.logs()
    assert pair["exercise_name"] in [entry.exercise_name for entry in log.entries.all()]
    assert chat.statistics().workouts == 1


def test_an_unplanned_exercise_done_during_the_workout_joins_its_entry(chat: Chat) -> None:
    """Sets of an exercise that is not in the plan, logged mid-workout, are part of the same session."""
    chat.workout()
    chat.say("I did 3 sets of 12 on goblet squat")

    chat.say("done")

    (log,) = chat.logs()
    assert "Goblet Squat" in [entry.exercise_name for entry in log.entries.all()]


def test_two_workouts_in_one_session_are_two_titled_entries(chat: Chat) -> None:
    """A second workout's sets never land in the first workout's entry, even on the same day and session."""
    first = chat.workout()
    chat.say("done")
    second = chat.workout("Give me a quick back workout")
    pair_or_first = main_exercises(second)[0]
    chat.say(f"I did 3 sets of 10 on {pair_or_first['exercise_name']}")

    chat.say("done")

    logs = chat.logs()
    assert len(logs) == 2 and all(log.title for log in logs)
    assert {entry.exercise_name for entry in logs[0].entries.all()} == {e["exercise_name"] for e in first}
    assert {entry.exercise_name for entry in logs[1].entries.all()} == {e["exercise_name"] for e in second}
    assert chat.statistics().workouts == 2


def test_undoing_the_only_logged_set_then_done_still_gives_one_entry(chat: Chat) -> None:
    """Undo removes the entry (and its empty log); "done" then records the workout once."""
    exercises = chat.workout()
    pair, _ = pair_and_other(exercises)
    chat.say(f"I did 3 sets of 10 at 20 kg on {pair['exercise_name']}")
    session = chat.session()
    undone = execute_tool(
        "undo_logged_exercise",
        {"exercise_id": pair["id"]},
        ToolContext(user_id=chat.user_id, session=session),
    )
    assert undone.success, undone.formatted
    assert chat.logs() == []

    chat.say("done")

    (log,) = chat.logs()
    assert log.entries.count() == len(exercises)


def test_dumbbell_pair_volume_counts_both_hands_in_the_stats_reply(chat: Chat) -> None:
    """3×10 at 20 kg on a dumbbell pair is 1,200 kg lifted, not 600."""
    exercises = chat.workout()
    pair, _ = pair_and_other(exercises)
    chat.say(f"I did 3 sets of 10 at 20 kg on {pair['exercise_name']}")
    logged = chat.entries(pair["exercise_name"])[0]
    assert logged.actual_load_each == [20, 20, 20]

    assert chat.statistics().total_volume == pytest.approx(1200)
    reply = chat.reply(chat.say("how am I doing this week"))
    assert re.search(r"\b1,200 ?kg\b", reply), reply


@pytest.mark.parametrize(
    ("name", "volume"),
    [
        ("Dumbbell Curl", 1200),
        ("One-Arm Dumbbell Row", 600),
        ("Goblet Squat", 600),
        ("Barbell Bench Press", 600),
    ],
)
def test_volume_counts_what_the_exercise_holds(chat: Chat, name: str, volume: float) -> None:
    """A pair counts twice; one dumbbell (goblet, one-arm) and a barbell count once."""
    log_tool(chat, {"exercise_name": name, "sets": 3, "reps": [10, 10, 10], "load_each": [20, 20, 20]})

    assert chat.statistics().total_volume == pytest.approx(volume)


def test_a_pound_user_sees_per_hand_pounds_and_both_hands_in_volume(chat: Chat) -> None:
    """In lb: the log line says "@ 45lb each hand" and the volume is 2 × 3 × 10 × 45 lb."""
    upsert_settings(user_id=chat.user_id, weight_unit="lb")
    text = log_tool(
        chat, {"exercise_name": "Dumbbell Shoulder Press", "sets": 3, "reps": [10] * 3, "load_each": [45] * 3}
    )

    assert "@ 45lb each hand" in text
    assert chat.statistics().total_volume == pytest.approx(2700)


def test_cards_and_the_coach_state_per_hand_loads(chat: Chat) -> None:
    """The workout card marks a pair's load as per hand, the model's view of the workout says "each hand", and
    so does the coach's reply after logging it; a non-dumbbell load is not called per hand."""
    exercises = chat.workout()
    pair, _ = pair_and_other(exercises)
    assert pair["implements"] == 2
    assert not any(
        e.get("implements") == 2 for e in exercises if "dumbbells" not in (e.get("equipment") or ())
    )

    current = fetch_and_format(user_id=chat.user_id, source="current_workout_session").text
    line = next(line for line in current.splitlines() if pair["exercise_name"] in line)
    assert "each hand" in line

    reply = chat.reply(chat.say(f"I did 3 sets of 10 at 20 kg on {pair['exercise_name']}"))
    assert "20kg each hand" in reply.replace(" kg", "kg"), reply


def test_history_lines_state_per_hand_loads_once(chat: Chat) -> None:
    """A logged pair reads "@ 20kg each hand" in the history the model gets; its target is not repeated when met."""
    log_tool(
        chat, {"exercise_name": "Dumbbell Bench Press", "sets": 3, "reps": [10] * 3, "load_each": [20] * 3}
    )
    settings: UserSettings = get_settings(user_id=chat.user_id)
    entry = chat.entries("Dumbbell Bench Press")[0]

    line = log_entry(entry, Units.from_settings(settings, user_timezone(user_id=chat.user_id)))

    assert line == "Dumbbell Bench Press 3×10 @ 20kg each hand"


def test_the_exercise_breakdown_counts_both_hands_and_says_its_best_set_is_per_hand(chat: Chat) -> None:
    """The statistics tool a model reads: a pair's volume is both hands, its best set is "each hand"; a barbell's is not."""
    chat.say("hello")
    log_tool(chat, {"exercise_name": "Dumbbell Curl", "sets": 3, "reps": [10] * 3, "load_each": [12] * 3})
    log_tool(chat, {"exercise_name": "Barbell Curl", "sets": 3, "reps": [10] * 3, "load_each": [30] * 3})

    result = execute_tool(
        "get_training_stats", {"view": "breakdown"}, ToolContext(user_id=chat.user_id, session=chat.session())
    )

    assert result.success, result.formatted
    lines = {
        line.split(" (")[0].lstrip("- "): line
        for line in result.raw_formatted.splitlines()
        if " sets" in line
    }
    assert (
        "volume 720kg" in lines["Dumbbell Curl"] and "best set 12kg × 10 each hand" in lines["Dumbbell Curl"]
    )
    assert "volume 900kg" in lines["Barbell Curl"] and "each hand" not in lines["Barbell Curl"]
