"""The guard part of the coaching suite (issue 17 items 1, 2 and 6): multi-turn conversations with the
offline coach and with a scripted model whose outputs are deliberately bad, asserting properties (injuries,
equipment, preferences and units respected; one exercise per swap; prescriptions that fit the exercise)
rather than exact text.

Reuses the offline coach's fixtures (`demo`: the seeded demo user, knee limitation, "No burpees", Home with
dumbbells, bench and bands) and drives turns through `run_turn`, as the offline-coach tests do.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest

from datasources_app.catalog import BODY_PARTS, contraindication
from datasources_app.selectors import available_equipment_slugs, find_exercise_by_name, get_current_workout
from tests.trainer_agent.offline.conftest import DemoUser, demo, tools_of  # noqa: F401
from tools_app.workout_tools import workout_exercises
from tools_app.workout_validation import user_injuries
from trainer_agent.llm.providers import override_provider
from trainer_agent.llm.scripted import ScriptedProvider, tool_response
from trainer_agent.loop import TurnResult
from trainer_agent.turns import run_turn

SCRIPTED_MODEL = "claude-haiku-4-5"


@pytest.fixture(autouse=True)
def _offline_initializer(settings: Any) -> None:
    """Knowledge is picked by the built-in selector, never by a model call the script did not plan."""
    settings.INITIALIZER_MODEL = "offline"


def current(user_id: uuid.UUID) -> list[dict[str, Any]]:
    """The user's current workout's exercises, in order ([] when there is none)."""
    stored = get_current_workout(user_id=user_id)
    return workout_exercises(stored.workout) if stored is not None else []


def main(exercises: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in exercises if (e.get("group") or {}).get("type") not in ("warmup", "cooldown")]


def pattern_of(exercise: dict[str, Any]) -> tuple[str, set[str]]:
    found = find_exercise_by_name(name=str(exercise["exercise_name"]))
    assert found is not None, f"{exercise['exercise_name']} is not a catalogue exercise"
    return found.movement_pattern, set(found.loaded_joints)


def unsafe_for(
    part_key: str, exercises: Sequence[dict[str, Any]], *, user_id: uuid.UUID | None = None
) -> list[str]:
    """The exercises an injured `part_key` rules out (by catalogue pattern, loaded joints and a knee's deep bends):
    as the user's words have it when `user_id` is given (a knee only mildly bothered in deep lunges keeps box
    squats and leg extensions), else as strictly as the table has it."""
    part = next(part for part in BODY_PARTS if part.key == part_key)
    if user_id is not None:
        part = next(injury.part for injury in user_injuries(user_id=user_id) if injury.part.key == part_key)
    bad = []
    for exercise in exercises:
        pattern, joints = pattern_of(exercise)
        name = str(exercise["exercise_name"])
        if contraindication(part, pattern=pattern, joints=joints, name=name) is not None:
            bad.append(str(exercise["exercise_name"]))
    return bad


def assert_equipment_available(user_id: uuid.UUID, exercises: Sequence[dict[str, Any]]) -> None:
    here = available_equipment_slugs(user_id=user_id)
    for exercise in exercises:
        assert set(exercise.get("equipment") or ()) <= here, exercise["exercise_name"]


def assert_prescription_fits(exercise: dict[str, Any]) -> None:
    """The fields of the exercise's type, with sensible values, and nothing of another type."""
    kind = exercise["exercise_type"]
    if kind == "reps":
        assert 1 <= exercise["sets"] <= 6 and len(exercise["reps"]) == exercise["sets"]
        assert all(1 <= reps <= 30 for reps in exercise["reps"])
        assert 0 <= exercise["rest_sec"] <= 180
        if exercise.get("load_each"):
            assert len(exercise["load_each"]) == exercise["sets"] and exercise["load_unit"] in ("kg", "lb")
        assert "hold_sec" not in exercise and "duration_min" not in exercise
    elif kind == "hold":
        assert exercise["sets"] >= 1 and len(exercise["hold_sec"]) == exercise["sets"]
        assert "reps" not in exercise and "load_each" not in exercise
    elif kind == "duration":
        assert exercise["duration_min"] > 0 and "sets" not in exercise
    else:
        assert exercise["rounds"] >= 1 and exercise["work_sec"] >= 1


def changed_ids(before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]]) -> set[str]:
    """Ids present before and gone after (the exercises a swap replaced)."""
    return {str(e["id"]) for e in before} - {str(e["id"]) for e in after}


def untouched(before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]], but: set[str]) -> None:
    """Every exercise except `but` is exactly as it was (prescription, rest, order)."""
    after_by_id = {str(e["id"]): e for e in after}
    for exercise in before:
        if str(exercise["id"]) in but:
            continue
        assert after_by_id.get(str(exercise["id"])) == exercise, exercise["exercise_name"]


def failed_results(result: TurnResult, tool: str) -> list[str]:
    return [
        str(action.result.get("data", {}).get("error", ""))
        for action in result.actions
        if action.tool == tool and not action.result.get("success")
    ]


@contextmanager
def scripted(*steps: tuple[str, dict[str, Any]]) -> Iterator[ScriptedProvider]:
    """Serve SCRIPTED_MODEL with these tool calls, one per model call, in order."""
    provider = ScriptedProvider([tool_response(tool, args) for tool, args in steps])
    with override_provider(SCRIPTED_MODEL, provider):
        yield provider


def run_scripted(user_id: uuid.UUID, message: str, *steps: tuple[str, dict[str, Any]]) -> TurnResult:
    with scripted(*steps):
        return run_turn(user_id=user_id, message=message, model=SCRIPTED_MODEL)
