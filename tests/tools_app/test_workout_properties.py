"""Property-based tests for generate_workout (issue 4 acceptance): what is accepted is valid, and every
problem injected into a workout is named in the rejection."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from datasources_app.catalog import (
    BODYWEIGHT,
    EQUIPMENT_SLUGS,
    EXERCISE_TYPES,
    GOALS,
    MUSCLES,
    SHARE_SUM_TOLERANCE,
    exercise_name_key,
)
from datasources_app.selectors import available_equipment_slugs, find_exercise_by_name
from datasources_app.workouts import REQUIRED_FIELDS
from tests.datasources_app.factories import PreferenceFactory
from tests.tools_app.workout_support import Trainee, make_trainee

pytestmark = pytest.mark.django_db

EXCLUDED_NAME = "Forbidden Curl"
EXCLUDED_EQUIPMENT = "resistance_bands"
# Home has dumbbells, bench and resistance bands; the bands are excluded by a preference.
USABLE_EQUIPMENT = ("dumbbells", "bench")
# Names the catalogue does not know (equipment as declared) and catalogue names doable with USABLE_EQUIPMENT.
CUSTOM_NAMES = ("Tempo Squat Hold", "Slow Floor Press", "Shadow Boxing", "Hip Airplane", "Farmer Walk Drill")
CATALOGUE_NAMES = ("Push-Up", "Plank", "Dumbbell Bench Press", "Dumbbell Lateral Raise", "Wall Sit", "Burpee")

PROBLEM_KINDS = (
    "bad_type",
    "missing_field",
    "unknown_muscle",
    "shares_off",
    "unavailable_equipment",
    "excluded_exercise",
    "excluded_equipment",
    "wrong_unit",
)


@pytest.fixture
def trainee() -> Trainee:
    """A kg/km user at Home, with a preference excluding one exercise and one piece of equipment."""
    trainee = make_trainee()
    PreferenceFactory.create(
        user_id=trainee.user_id,
        description="No forbidden curls, no bands",
        exclude_exercises=[EXCLUDED_NAME],
        exclude_equipment=[EXCLUDED_EQUIPMENT],
    )
    return trainee


# --- Strategies ------------------------------------------------------------------------------------------------------


@st.composite
def shares(draw: st.DrawFn, names: tuple[str, ...], key: str) -> list[dict[str, Any]]:
    """1-3 distinct names with shares summing to 1 (to 4 decimals)."""
    chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))
    weights = draw(st.lists(st.integers(1, 10), min_size=len(chosen), max_size=len(chosen)))
    total = sum(weights)
    values = [round(weight / total, 4) for weight in weights[:-1]]
    values.append(round(1 - sum(values), 4))
    return [{key: name, "share": value} for name, value in zip(chosen, values, strict=True)]


@st.composite
def valid_exercise(draw: st.DrawFn) -> dict[str, Any]:
    """A valid exercise for the trainee, of any type, without an order."""
    kind = draw(st.sampled_from(EXERCISE_TYPES))
    name = draw(st.sampled_from(CUSTOM_NAMES + CATALOGUE_NAMES))
    exercise: dict[str, Any] = {
        "exercise_name": name,
        "exercise_type": kind,
        "muscles_utilized": draw(shares(MUSCLES, "muscle")),
        "goals_addressed": draw(shares(GOALS, "goal")),
        "reasoning": "Generated.",
    }
    equipment = draw(st.none() | st.lists(st.sampled_from(USABLE_EQUIPMENT), unique=True))
    if equipment is not None:
        exercise["equipment"] = equipment
    if kind in ("reps", "hold"):
        sets = draw(st.integers(1, 5))
        exercise["sets"] = sets
        exercise["rest_sec"] = draw(st.integers(0, 180))
        if kind == "reps":
            exercise["reps"] = draw(st.lists(st.integers(1, 20), min_size=sets, max_size=sets))
            if draw(st.booleans()):
                exercise["load_each"] = draw(
                    st.lists(st.integers(0, 40).map(lambda n: n * 2.5), min_size=sets, max_size=sets)
                )
                exercise["load_unit"] = draw(st.sampled_from(["kg", None]))
                # One or a pair, said for a loaded one (all-zero loads are unloaded: a pair needs a weight).
                if set(equipment or ()) & {"dumbbells", "kettlebell"} and any(exercise["load_each"]):
                    exercise["implements"] = draw(st.sampled_from([1, 2]))
        else:
            exercise["hold_sec"] = draw(st.lists(st.integers(5, 120), min_size=sets, max_size=sets))
    elif kind == "duration":
        exercise["duration_min"] = draw(st.integers(1, 90))
        if draw(st.booleans()):
            exercise["distance"] = draw(st.integers(1, 40)) / 2
            exercise["distance_unit"] = draw(st.sampled_from(["km", None]))
    else:
        exercise["rounds"] = draw(st.integers(1, 12))
        exercise["work_sec"] = draw(st.integers(5, 90))
        exercise["rest_sec"] = draw(st.integers(0, 90))
    return {key: value for key, value in exercise.items() if value is not None}


def in_seed_001_spelling(exercise: dict[str, Any]) -> dict[str, Any]:
    """The same exercise with seed 001's field names."""
    renamed = {
        {
            "exercise_name": "name",
            "exercise_type": "type",
            "muscles_utilized": "muscles",
            "goals_addressed": "goals",
        }.get(key, key): value
        for key, value in exercise.items()
    }
    renamed["muscles"] = [{"name": item["muscle"], "share": item["share"]} for item in renamed["muscles"]]
    renamed["goals"] = [{"name": item["goal"], "share": item["share"]} for item in renamed["goals"]]
    return renamed


@st.composite
def valid_workout(draw: st.DrawFn) -> list[dict[str, Any]]:
    """1-6 valid exercises with orders 1..N in shuffled list order, maybe one superset, maybe seed 001 names."""
    exercises = draw(st.lists(valid_exercise(), min_size=1, max_size=6))
    orders = draw(st.permutations(range(1, len(exercises) + 1)))
    for exercise, order in zip(exercises, orders, strict=True):
        exercise["order"] = order
    if len(exercises) >= 2 and draw(st.booleans()):
        start = draw(st.integers(1, len(exercises) - 1))
        for exercise in exercises:
            if exercise["order"] in (start, start + 1):
                exercise["group"] = {
                    "id": "ss-1",
                    "type": "superset",
                    "position": exercise["order"] - start + 1,
                }
                if exercise["order"] == start:
                    exercise["group"]["rounds"] = draw(st.integers(1, 5))
                # Done once per round of the superset: one set (an intervals member one round).
                for key in ("sets", "rounds"):
                    if key in exercise:
                        exercise[key] = 1
                for key in ("reps", "hold_sec", "load_each"):
                    if key in exercise:
                        exercise[key] = exercise[key][:1]
    return exercises


def perturb(draw: st.DrawFn, exercise: dict[str, Any]) -> None:
    """Redraw one field of a valid exercise from a wide range of values, valid or not."""
    change = draw(st.sampled_from(["equipment", "name", "muscles", "goals", "type", "unit", "drop"]))
    if change == "equipment":
        # Mostly equipment the trainee lacks or excludes, or has; now and then any slug at all.
        pool = st.sampled_from(["barbell", EXCLUDED_EQUIPMENT, "kettlebell", *USABLE_EQUIPMENT, BODYWEIGHT])
        exercise["equipment"] = draw(
            st.lists(pool | st.sampled_from(EQUIPMENT_SLUGS), max_size=2, unique=True)
        )
    elif change == "name":
        exercise["exercise_name"] = draw(st.sampled_from([EXCLUDED_NAME, "Barbell Back Squat", "Push Ups"]))
    elif change in ("muscles", "goals"):
        names = [*MUSCLES, "Wings", "chest", "lower_back"] if change == "muscles" else [*GOALS, "Fun"]
        key, field = ("muscle", "muscles_utilized") if change == "muscles" else ("goal", "goals_addressed")
        exercise[field] = [
            {key: draw(st.sampled_from(names)), "share": share}
            for share in draw(st.lists(st.floats(0, 1.2, allow_nan=False), min_size=1, max_size=3))
        ]
    elif change == "type":
        exercise["exercise_type"] = draw(st.sampled_from([*EXERCISE_TYPES, "sprint", "HOLD"]))
    elif change == "unit":
        exercise["load_unit"] = draw(st.sampled_from(["kg", "lb", "lbs", "stone"]))
    else:
        fields = ["sets", "reps", "rest_sec", "hold_sec", "duration_min", "rounds", "work_sec"]
        exercise.pop(draw(st.sampled_from(fields)), None)


@st.composite
def arbitrary_workout(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A valid workout with one or two fields redrawn: near the boundary, often valid, often not."""
    exercises = draw(valid_workout())
    for _ in range(draw(st.integers(1, 2))):
        perturb(draw, exercises[draw(st.integers(0, len(exercises) - 1))])
    return exercises


# --- Invariants ------------------------------------------------------------------------------------------------------


def assert_valid_artifact(trainee: Trainee, artifact: dict[str, Any]) -> None:
    """What every stored workout must satisfy, checked independently of the validator."""
    available = available_equipment_slugs(user_id=trainee.user_id)
    exercises = artifact["payload"]["exercises"]
    assert artifact["type"] == "exercise_list" and artifact["artifact_id"].startswith("art_")
    assert [exercise["order"] for exercise in exercises] == list(range(1, len(exercises) + 1))
    for exercise in exercises:
        kind = exercise["exercise_type"]
        assert kind in EXERCISE_TYPES
        for field in REQUIRED_FIELDS[kind]:
            assert exercise.get(field) not in (None, []), (field, exercise)
        for field in ("sets", "rounds", "work_sec", "duration_min"):
            assert exercise.get(field, 1) > 0
        for field in ("muscles_utilized", "goals_addressed"):
            items = exercise[field]
            assert items and math.isclose(
                sum(item["share"] for item in items), 1.0, abs_tol=SHARE_SUM_TOLERANCE
            )
        assert {item["muscle"] for item in exercise["muscles_utilized"]} <= set(MUSCLES)
        needed = set(exercise["equipment"])
        catalogue = find_exercise_by_name(name=exercise["exercise_name"])
        if catalogue is not None:
            needed |= {item.slug for item in catalogue.equipment.all()}
        assert needed - {BODYWEIGHT} <= available
        assert EXCLUDED_EQUIPMENT not in needed
        assert exercise_name_key(exercise["exercise_name"]) != exercise_name_key(EXCLUDED_NAME)
        assert exercise.get("load_unit", "kg") == "kg"
        assert exercise.get("distance_unit", "km") == "km"


# --- Properties ------------------------------------------------------------------------------------------------------


@settings(max_examples=40)
@given(exercises=valid_workout(), seed_001=st.booleans())
def test_valid_workouts_are_accepted_and_stored_valid(
    trainee: Trainee, exercises: list[dict[str, Any]], seed_001: bool
) -> None:
    """A workout built within the rules is accepted in either spelling, and what is stored is valid."""
    if seed_001:
        exercises = [in_seed_001_spelling(exercise) for exercise in exercises]
    result = trainee.run("generate_workout", {"workout": {"exercises": exercises}})
    assert result.success, result.formatted
    assert result.artifact is not None
    assert_valid_artifact(trainee, result.artifact)


@settings(max_examples=40)
@given(exercises=arbitrary_workout())
def test_every_accepted_workout_is_valid(trainee: Trainee, exercises: list[dict[str, Any]]) -> None:
    """Whatever comes in, an accepted workout satisfies every invariant; a rejected one says why."""
    result = trainee.run("generate_workout", {"workout": {"exercises": exercises}})
    event("accepted" if result.success else "rejected")
    if result.success:
        assert result.artifact is not None
        assert_valid_artifact(trainee, result.artifact)
    else:
        assert result.artifact is None
        assert result.data.get("problems") or result.data["error"].startswith("Invalid arguments")


def inject(kind: str, exercise: dict[str, Any], draw_field: str) -> str:
    """Break `exercise` in one way; returns the start of the problem text that must name it."""
    if kind == "bad_type":
        exercise["exercise_type"] = "sprint"
        return "exercise_type 'sprint' is not one of"
    if kind == "missing_field":
        fields = REQUIRED_FIELDS[exercise["exercise_type"]]
        field = draw_field if draw_field in fields else fields[0]
        del exercise[field]
        return f"missing {field}"
    if kind == "unknown_muscle":
        exercise["muscles_utilized"][0]["muscle"] = "Wings"
        return "unknown muscle 'Wings'"
    if kind == "shares_off":
        exercise["muscles_utilized"] = [{"muscle": exercise["muscles_utilized"][0]["muscle"], "share": 0.6}]
        return "muscle shares sum to 0.60"
    if kind == "unavailable_equipment":
        exercise["equipment"] = ["barbell", *exercise.get("equipment", [])]
        return "needs barbell"
    if kind == "excluded_exercise":
        exercise["exercise_name"] = EXCLUDED_NAME
        return "excluded by the user's preference 'No forbidden curls, no bands'"
    if kind == "excluded_equipment":
        exercise["equipment"] = [*exercise.get("equipment", []), EXCLUDED_EQUIPMENT]
        return f"uses {EXCLUDED_EQUIPMENT}, excluded by the user's preference"
    assert kind == "wrong_unit"
    exercise["load_unit"] = "stone"
    return "load_unit 'stone' is not kg or lb"


@settings(max_examples=40)
@given(
    exercises=valid_workout(),
    kinds=st.lists(st.sampled_from(PROBLEM_KINDS), min_size=1, max_size=4, unique=True),
    field=st.sampled_from(sorted({field for fields in REQUIRED_FIELDS.values() for field in fields})),
)
def test_every_injected_problem_is_named(
    trainee: Trainee, exercises: list[dict[str, Any]], kinds: list[str], field: str
) -> None:
    """Break up to four exercises in different ways: the workout is refused, nothing is stored, and each
    problem is reported against the exercise it was injected into."""
    kinds = kinds[: len(exercises)]
    expected = []
    for index, kind in enumerate(kinds):
        fragment = inject(kind, exercises[index], field)
        expected.append((index, fragment))
    result = trainee.run("generate_workout", {"workout": {"exercises": exercises}})
    assert not result.success
    problems = result.data["problems"]
    for index, fragment in expected:
        label = f"exercise {index + 1} '{exercises[index]['exercise_name']}': "
        assert any(problem.startswith(label + fragment) for problem in problems), (label + fragment, problems)
    assert result.artifact is None
