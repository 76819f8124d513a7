"""Ending a workout and answering the coach's other questions: however "done" is said, it completes the
workout that is on (one history entry); the options the coach offers do what they say when picked."""

from __future__ import annotations

import pytest

from datasources_app.models import Location
from datasources_app.selectors import get_current_workout
from tests.coaching.convo.conftest import Chat, main_exercises, tools_of

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("done", ["done", "I'm done", "finished my workout", "all done, log it", "I did it!"])
def test_each_way_of_saying_done_completes_the_workout_once(chat: Chat, done: str) -> None:
    """After one exercise is logged mid-workout, "done" in any wording gives one complete, titled entry."""
    exercises = chat.workout()
    first = main_exercises(exercises)[0]
    chat.say(f"I did 2 sets of 8 on {first['exercise_name']}")

    result = chat.say(done)

    assert "log_workout" in tools_of(result), tools_of(result)
    (log,) = chat.logs()
    assert log.title and log.entries.count() == len(exercises)
    assert get_current_workout(user_id=chat.user_id) is None


def test_the_finished_chip_of_the_workout_question_logs_it(chat: Chat) -> None:
    """An unclear message mid-workout gets options; "I finished it, log it" picked from them logs the workout."""
    exercises = chat.workout()
    asked = chat.say("hmm")
    question = chat.question(asked)
    assert question is not None
    finished = next(option for option in question["options"] if "log" in option.lower())

    result = chat.say(finished)

    assert tools_of(result)[0] == "log_workout"
    (log,) = chat.logs()
    assert log.entries.count() == len(exercises)


def test_the_harder_chip_changes_the_workout_and_logs_nothing(chat: Chat) -> None:
    """ "Make it harder" picked from the options adjusts exercises; nothing is logged."""
    exercises = chat.workout()
    question = chat.question(chat.say("hmm"))
    assert question is not None and "Make it harder" in question["options"]

    result = chat.say("Make it harder")

    assert "adjust_exercise" in tools_of(result)
    assert result.response["exercises"] != exercises
    assert chat.logs() == []


def test_with_no_workout_a_typed_catalogue_name_answers_which_exercise(chat: Chat) -> None:
    """No workout on: "Which exercise was that?" has no options, and a typed catalogue name logs the sets."""
    asked = chat.say("I did 3 sets of 12 at 16 kg")
    question = chat.question(asked)
    assert question is not None and question["question"]
    assert chat.logs() == []

    answered = chat.say("goblet squat")

    assert tools_of(answered)[0] == "log_completed_exercise"
    (entry,) = chat.entries("Goblet Squat")
    assert (entry.actual_sets, entry.actual_load_each) == (3, [16, 16, 16])
    assert chat.statistics().total_volume == pytest.approx(3 * 12 * 16)  # one dumbbell (or kettlebell)


def test_a_build_one_question_answered_yes_builds_a_workout(chat: Chat) -> None:
    """ "Want me to build one?" → "yes" delivers a workout, the question's request and nothing else."""
    asked = chat.say("swap the squats")
    question = chat.question(asked)
    assert question is not None and "build" in question["question"].lower()

    result = chat.say("yes")

    assert "draft_workout" in tools_of(result)
    assert result.response["exercises"]


def test_heavier_with_no_heavier_weight_here_adds_reps_and_says_why(chat: Chat) -> None:
    """ "A bit heavier" on a dumbbell lift already at the heaviest dumbbell at home: the reps go up, the load
    stays, and the reply says it is the heaviest weight there (not a refusal in the tool's words)."""
    exercises = chat.workout("Give me a quick leg workout, no lunges")
    lift = next((e for e in main_exercises(exercises) if e.get("load_each")), None)
    if lift is None:
        pytest.skip("this leg workout has no loaded lift")
    home = Location.objects.get(user_id=chat.user_id, is_current=True)
    home.available_weights_kg = {
        **(home.available_weights_kg or {}),
        "dumbbells": [5, max(lift["load_each"])],
    }
    home.save()

    result = chat.say(f"make exercise {lift['order']} a bit heavier")

    assert tools_of(result)[0] == "adjust_exercise"
    (after,) = [e for e in result.response["exercises"] if e["exercise_name"] == lift["exercise_name"]]
    assert after["load_each"] == lift["load_each"] and after["reps"][0] == lift["reps"][0] + 2
    assert "heaviest weight you have here" in chat.reply(result)
