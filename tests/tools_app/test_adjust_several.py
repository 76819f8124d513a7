"""adjust_exercise on several exercises in one call ("cut the rest on everything", "the presses"): one new version,
one line for the user naming every change and every exercise left as it was; singular words that match several
still ask which one."""

from __future__ import annotations

from typing import Any

import pytest

from datasources_app.selectors import get_current_workout
from tests.tools_app.workout_support import (
    Trainee,
    bodyweight_exercise,
    duration_exercise,
    generate,
    length_now,
    make_trainee,
    reps_exercise,
    told,
    upper_body_workout,
)
from tools_app.workout_tools import workout_exercises

pytestmark = pytest.mark.django_db


@pytest.fixture
def trainee() -> Trainee:
    trainee = make_trainee()
    result = generate(trainee, upper_body_workout())
    assert result.success, result.formatted
    return trainee


def rests(trainee: Trainee) -> dict[str, int | None]:
    current = get_current_workout(user_id=trainee.user_id)
    assert current is not None
    return {e["exercise_name"]: e.get("rest_sec") for e in workout_exercises(current.workout)}


BEFORE = {
    "Jumping Jack": 30,
    "Dumbbell Bench Press": 90,
    "Seated Dumbbell Shoulder Press": 90,
    "Dumbbell Biceps Curl": 90,
    "Band Pull-Apart": 60,
    "Push-Up": 60,
}


def test_all_cuts_the_rest_of_every_main_exercise_in_one_new_version(trainee: Trainee) -> None:
    """ "Cut the rest on everything": one call, one artifact, every main exercise 30 s shorter, the warm-up as it
    was, and one line for the user naming each change and the new length."""
    assert rests(trainee) == BEFORE
    result = trainee.run("adjust_exercise", {"exercise_id": "everything", "change": "less_rest"})
    assert result.success, result.formatted
    assert rests(trainee) == {
        "Jumping Jack": 30,
        "Dumbbell Bench Press": 60,
        "Seated Dumbbell Shoulder Press": 60,
        "Dumbbell Biceps Curl": 60,
        "Band Pull-Apart": 30,
        "Push-Up": 30,
    }
    assert told(result) == (
        "Done: changed 5 exercises: Dumbbell Bench Press: 90→60 s rest; Seated Dumbbell Shoulder Press: 90→60 s "
        "rest; Dumbbell Biceps Curl: 90→60 s rest; Band Pull-Apart: 60→30 s rest; Push-Up: 60→30 s rest. "
        + length_now(result)
    )
    assert [item["exercise_name"] for item in result.data["changed"]] == list(BEFORE)[1:]


@pytest.mark.parametrize(
    ("reference", "changed"),
    [
        ("all", list(BEFORE)[1:]),
        ("all main exercises", list(BEFORE)[1:]),
        ("every exercise", list(BEFORE)[1:]),
        ("everything including the warm-up", list(BEFORE)),
        ("all the warm-up", ["Jumping Jack"]),
        ("the presses", ["Dumbbell Bench Press", "Seated Dumbbell Shoulder Press"]),
        ("both presses", ["Dumbbell Bench Press", "Seated Dumbbell Shoulder Press"]),
        (
            "the dumbbell ones",
            ["Dumbbell Bench Press", "Seated Dumbbell Shoulder Press", "Dumbbell Biceps Curl"],
        ),
        ("the curl and the push-ups", ["Dumbbell Biceps Curl", "Push-Up"]),
        ("2, 4", ["Dumbbell Bench Press", "Dumbbell Biceps Curl"]),
        ("all but the curls", [name for name in list(BEFORE)[1:] if name != "Dumbbell Biceps Curl"]),
        ("everything except the push-ups", [name for name in list(BEFORE)[1:] if name != "Push-Up"]),
        (["2", 4], ["Dumbbell Bench Press", "Dumbbell Biceps Curl"]),
    ],
)
def test_words_meaning_several_exercises_change_each_of_them(
    trainee: Trainee, reference: Any, changed: list[str]
) -> None:
    """Plural words, "all" (main exercises only, unless the words name the warm-up) and lists change each
    exercise they mean, and no other."""
    result = trainee.run("adjust_exercise", {"exercise_id": reference, "adjustments": {"rest_sec": 45}})
    assert result.success, result.formatted
    assert rests(trainee) == {name: 45 if name in changed else rest for name, rest in BEFORE.items()}


def test_all_of_a_section_the_workout_lacks_fails_naming_the_exercises(trainee: Trainee) -> None:
    """ "All the cool-down" with no cool-down means no exercise: a failure listing the workout, not a crash."""
    result = trainee.run("adjust_exercise", {"exercise_id": "all the cool-down", "change": "less_rest"})
    assert not result.success
    assert "is not in the current workout" in result.formatted and "Jumping Jack" in result.formatted
    assert rests(trainee) == BEFORE


def test_singular_words_that_match_several_still_ask_which(trainee: Trainee) -> None:
    """ "The press" with two presses is one exercise the model must pick: a "Which exercise?" naming both, and
    nothing changes."""
    result = trainee.run("adjust_exercise", {"exercise_id": "the press", "change": "less_rest"})
    assert not result.success
    assert "Which exercise? 'the press' matches 2" in result.formatted
    assert rests(trainee) == BEFORE


def test_an_exercise_the_change_does_not_apply_to_is_said_and_the_others_change(trainee: Trainee) -> None:
    """A run has no rest and a 0 s rest cannot be shorter: those are named as left as they were, the others
    change in the same call."""
    generate(
        trainee,
        {
            "title": "Mixed",
            "exercises": [reps_exercise(1), bodyweight_exercise(2, rest_sec=0), duration_exercise(3)],
        },
    )
    result = trainee.run("adjust_exercise", {"exercise_id": "all", "change": "less_rest"})
    assert result.success, result.formatted
    assert rests(trainee) == {"Dumbbell Bench Press": 60, "Push-Up": 0, "Outdoor Run": None}
    assert told(result) == (
        "Done: changed 1 exercise: Dumbbell Bench Press: 90→60 s rest. Left as they were: Push-Up (already at "
        "the limit); Outdoor Run (no rest to change). " + length_now(result)
    )
    assert [item["reason"] for item in result.data["not_changed"]] == [
        "already at the limit",
        "no rest to change",
    ]


def test_the_call_fails_only_when_nothing_changed(trainee: Trainee) -> None:
    """Every exercise already at 0 s rest: a failure naming each, no new version."""
    generate(
        trainee,
        {"title": "Tight", "exercises": [reps_exercise(1, rest_sec=0), bodyweight_exercise(2, rest_sec=0)]},
    )
    before = get_current_workout(user_id=trainee.user_id)
    result = trainee.run("adjust_exercise", {"exercise_id": "all", "change": "less_rest"})
    assert not result.success and result.artifact is None
    assert "No exercise was adjusted: Dumbbell Bench Press: already at the limit; Push-Up: already at" in (
        result.formatted
    )
    after = get_current_workout(user_id=trainee.user_id)
    assert before is not None and after is not None and after.artifact_id == before.artifact_id


def test_an_exercise_left_unsafe_is_said_in_the_users_words_and_the_model_is_told_to_swap_it(
    trainee: Trainee,
) -> None:
    """The travel trial: 'my shoulder is a bit tight today' saved, then 'make everything a bit lighter' lowered the
    other exercises and left the shoulder press at full weight, told the user as "unsafe for the user's shoulder
    (preference '…')" and gave the model no next step."""
    saved = trainee.run(
        "set_preference",
        {
            "description": "my shoulder is a bit tight today",
            "guidance": "Nothing overhead today.",
            "category": "injury",
            "preference_type": "temporary",
            "delete_after_use": True,
        },
    )
    assert saved.success, saved.formatted
    result = trainee.run("adjust_exercise", {"exercise_id": "all", "change": "lighter"})
    assert result.success, result.formatted
    press = next(
        item["exercise_id"]
        for item in result.data["not_changed"]
        if item["exercise_name"] == "Seated Dumbbell Shoulder Press"
    )
    assert (
        f"{press} stays in the workout as before and unsafe: swap (swap_exercise) or remove"
        in result.raw_formatted
    )
    said = told(result)
    assert "Seated Dumbbell Shoulder Press (not one for your shoulder right now: I can swap it)" in said, said
    assert "the user's" not in said and "preference '" not in said, said
