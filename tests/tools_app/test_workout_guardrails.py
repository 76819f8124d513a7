"""Injury guardrails (issue 17 item 1): movement patterns and loaded joints are catalogue data, and
generate_workout refuses what an injury rules out, for any model, with safe options named."""

from __future__ import annotations

import json
from typing import Any

import pytest

from datasources_app.catalog import (
    BODY_PARTS,
    MOVEMENT_PATTERNS,
    PATTERN_JOINTS,
    derive_movement_pattern,
    injured_body_parts,
)
from datasources_app.models import Exercise
from datasources_app.services import DEFAULT_CATALOG_PATH, create_preference, upsert_profile
from tests.tools_app.workout_support import Trainee, make_trainee, reps_exercise
from tools_app.workout_validation import names_an_injury


def squat(order: int = 1, **overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "exercise_name": "Dumbbell Squat",
        "muscles_utilized": [{"muscle": "Quadriceps", "share": 0.7}, {"muscle": "Glutes", "share": 0.3}],
        "reasoning": "Main leg lift.",
        "equipment": ["dumbbells"],
    }
    return reps_exercise(order, **{**fields, **overrides})


def generate(trainee: Trainee, *exercises: dict[str, Any]) -> Any:
    return trainee.run("generate_workout", {"workout": {"title": "Legs", "exercises": list(exercises)}})


def test_every_catalogue_exercise_has_a_known_pattern_and_its_joints() -> None:
    rows = json.loads(DEFAULT_CATALOG_PATH.read_text(encoding="utf-8"))
    for row in rows:
        assert row["movement_pattern"] in MOVEMENT_PATTERNS, row["name"]
        assert set(PATTERN_JOINTS[row["movement_pattern"]]) <= set(row["loaded_joints"]), row["name"]
    by_name = {row["name"]: row for row in rows}
    assert by_name["Barbell Back Squat"]["movement_pattern"] == "squat"
    assert by_name["Romanian Deadlift"]["movement_pattern"] == "hinge"
    assert by_name["Overhead Press"]["movement_pattern"] == "vertical_push"
    assert by_name["Walking Lunge"]["movement_pattern"] == "lunge"
    assert "spine" in by_name["Barbell Row"]["loaded_joints"]


@pytest.mark.django_db
def test_the_database_catalogue_carries_the_patterns() -> None:
    assert not Exercise.objects.filter(movement_pattern="").exists()
    assert Exercise.objects.get(name="Leg Press").movement_pattern == "squat"


def test_body_parts_are_read_from_the_users_words() -> None:
    keys = [part.key for part in injured_body_parts("My left knee is injured; also a sore lower back")]
    assert keys == ["knee", "lower back"]
    assert injured_body_parts("I like Mondays") == ()
    knee = next(part for part in BODY_PARTS if part.key == "knee")
    assert {"squat", "lunge", "jump"} <= knee.patterns


def test_a_name_the_catalogue_lacks_still_gets_a_pattern() -> None:
    assert derive_movement_pattern("Zercher Squat") == "squat"
    assert derive_movement_pattern("Landmine Press") == "vertical_push"
    assert (
        derive_movement_pattern("Mystery Move", primary_muscles=["Quadriceps"], mechanic="compound")
        == "squat"
    )


@pytest.mark.django_db
def test_a_squat_is_refused_for_a_knee_injury_in_the_profile_with_safe_options() -> None:
    trainee = make_trainee()
    upsert_profile(user_id=trainee.user_id, injuries="Left knee hurts on stairs", limitations=[])
    result = generate(trainee, squat())
    assert not result.success
    text = result.raw_formatted
    assert "exercise 1 'Dumbbell Squat'" in text and "knee" in text and "squat" in text
    # The safe options it names pass the same check.
    options = text.split("safe options here for these muscles: ")[1].split("\n")[0].split(", ")
    assert options
    for name in options:
        assert Exercise.objects.get(name=name).movement_pattern not in ("squat", "lunge", "jump")


@pytest.mark.django_db
def test_a_refused_goblet_squat_offers_lower_body_options_not_a_shoulder_press() -> None:
    """The catalogue's Goblet Squat gives its shoulders 8% (they hold the weight): its options are for its legs
    (the 2026-11-26 trial was offered Arnold Press and Band Lateral Raise "for these muscles")."""
    trainee = make_trainee()
    upsert_profile(user_id=trainee.user_id, injuries="Mild discomfort in the left knee", limitations=["knee"])
    goblet = squat(exercise_name="Goblet Squat", implements=1, load_each=[20, 20, 20])
    del goblet["equipment"]
    text = generate(trainee, goblet).raw_formatted
    options = text.split("safe options here for these muscles: ")[1].split("\n")[0].split(", ")
    assert options
    lower = {"Quadriceps", "Hamstrings", "Glutes", "Calves", "Abductors", "Adductors"}
    for name in options:
        exercise = Exercise.objects.get(name=name)
        assert exercise.primary_muscles[0] in lower, (name, exercise.primary_muscles)
        assert exercise.movement_pattern not in ("squat", "lunge", "jump")


@pytest.mark.django_db
def test_an_injury_said_in_chat_and_kept_as_a_preference_is_enforced() -> None:
    trainee = make_trainee()
    create_preference(
        user_id=trainee.user_id,
        preference_type="permanent",
        description="My left knee is injured, avoid exercises that load the knee",
        guidance="No squats or lunges",
    )
    assert not generate(trainee, squat()).success
    hinge = squat(
        exercise_name="Dumbbell Romanian Deadlift",
        muscles_utilized=[{"muscle": "Hamstrings", "share": 0.7}, {"muscle": "Glutes", "share": 0.3}],
    )
    assert generate(trainee, hinge).success


@pytest.mark.django_db
def test_an_unknown_name_cannot_slip_a_squat_past_the_guard() -> None:
    trainee = make_trainee()
    upsert_profile(user_id=trainee.user_id, limitations=["knee"])
    result = generate(trainee, squat(exercise_name="Tempo Heel-Elevated Squat"))
    assert not result.success and "knee" in result.raw_formatted


@pytest.mark.django_db
def test_a_lower_back_injury_refuses_loaded_hinges_and_bent_over_rows_but_not_supported_rows() -> None:
    trainee = make_trainee()
    upsert_profile(user_id=trainee.user_id, injuries="herniated disc in the lower back")
    bent = squat(
        exercise_name="Bent-Over Dumbbell Row",
        muscles_utilized=[{"muscle": "Back", "share": 0.7}, {"muscle": "Biceps", "share": 0.3}],
    )
    assert not generate(trainee, bent).success
    supported = {**bent, "exercise_name": "Chest-Supported Dumbbell Row", "equipment": ["dumbbells", "bench"]}
    assert generate(trainee, supported).success


@pytest.mark.django_db
def test_a_free_text_preference_without_injury_words_is_not_an_injury() -> None:
    trainee = make_trainee()
    create_preference(
        user_id=trainee.user_id,
        preference_type="permanent",
        description="I love knee-high socks",
        guidance="-",
    )
    assert generate(trainee, squat()).success


@pytest.mark.parametrize(
    ("description", "injury"),
    [
        ("My left knee is injured, avoid exercises that load the knee", True),
        ("Be careful with my lower back", True),
        ("My weak knee gives way on stairs", True),
        ("Weak knees", True),
        ("Sore shoulder since Tuesday", True),
        ("Weak shoulders, I want to build them up", False),
        ("My legs are weak, focus on them", False),
        ("I like heavy loads on back day", False),
        ("I love shoulder day", False),
    ],
)
def test_a_preference_is_read_as_an_injury_only_when_its_words_say_so(description: str, injury: bool) -> None:
    assert names_an_injury(description) is injury


@pytest.mark.django_db
def test_a_weak_part_the_user_wants_to_build_is_trained_not_avoided() -> None:
    """ "Weak legs, I want to make them stronger" asks for leg work: a squat is delivered, not refused."""
    trainee = make_trainee()
    create_preference(
        user_id=trainee.user_id,
        preference_type="permanent",
        description="Weak legs and knees, I want to make them stronger",
        guidance="More leg work",
    )
    assert generate(trainee, squat()).success


@pytest.mark.django_db
def test_a_shoulder_that_hurts_overhead_gets_no_overhead_triceps_extension() -> None:
    """The final trial's upper draft said "nothing overhead" and prescribed an Overhead Dumbbell Triceps Extension
    (elbow work by its pattern, the arm overhead all the same): a draft for that shoulder has none, and one written
    out is refused."""
    trainee = make_trainee()
    upsert_profile(
        user_id=trainee.user_id,
        injuries="My left shoulder hurts when I press overhead",
        limitations=["shoulder"],
    )
    for focus in (["upper body"], ["arms"], ["triceps"]):
        drafted = trainee.run("draft_workout", {"focus": focus, "minutes": 45})
        assert drafted.success and drafted.artifact is not None, drafted.formatted
        names = [str(e["exercise_name"]) for e in drafted.artifact["payload"]["exercises"]]
        assert not [name for name in names if "overhead" in name.lower()], (focus, names)
    written = trainee.run(
        "generate_workout",
        {
            "workout": {
                "title": "Arms",
                "exercises": [
                    reps_exercise(
                        1,
                        exercise_name="Overhead Dumbbell Triceps Extension",
                        muscles_utilized=[{"muscle": "Triceps", "share": 1.0}],
                        reasoning="Triceps long head.",
                        equipment=["dumbbells"],
                    )
                ],
            }
        },
    )
    assert not written.success
    assert "arms overhead" in written.data["error"], written.data["error"]
