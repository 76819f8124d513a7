"""Builders shared by the workout and data tool tests: a trainee with locations, and exercise dicts."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from datasources_app.models import Location
from sessions_app.models import AgentSession
from sessions_app.services import create_session
from tests.datasources_app.factories import LocationFactory, UserSettingsFactory
from tools_app.registry import execute_tool
from tools_app.types import ToolContext, ToolResult

HOME_EQUIPMENT = ("dumbbells", "bench", "resistance_bands")
GYM_EQUIPMENT = ("barbell", "squat_rack", "bench", "dumbbells", "kettlebell", "treadmill", "cable_machine")


@dataclass
class Trainee:
    """A user with settings, a current Home location (dumbbells, bench, bands), a Gym, and a session."""

    user_id: uuid.UUID
    session: AgentSession
    ctx: ToolContext
    home: Location
    gym: Location

    def run(self, tool: str, args: dict[str, Any]) -> ToolResult:
        return execute_tool(tool, args, self.ctx)


def told(result: ToolResult) -> str:
    """What the result says to tell the user: its closing "Tell the user: …" line (failing without one)."""
    last = result.raw_formatted.splitlines()[-1]
    assert last.startswith("Tell the user: "), result.raw_formatted
    return last.removeprefix("Tell the user: ")


def length_now(result: ToolResult) -> str:
    """The closing sentence of a changed workout's "Tell the user": the new version's estimated length."""
    assert result.artifact is not None
    return f"It now takes about {result.artifact['summary']['estimated_duration_min']} min."


def make_trainee(*, weight_unit: str = "kg", distance_unit: str = "km") -> Trainee:
    user_id = uuid.uuid4()
    UserSettingsFactory.create(user_id=user_id, weight_unit=weight_unit, distance_unit=distance_unit)
    home = LocationFactory.create(user_id=user_id, name="Home", is_current=True, equipment=HOME_EQUIPMENT)
    gym = LocationFactory.create(user_id=user_id, name="Gym", equipment=GYM_EQUIPMENT)
    session = create_session(user_id=user_id)
    return Trainee(
        user_id=user_id,
        session=session,
        ctx=ToolContext(user_id=user_id, session=session),
        home=home,
        gym=gym,
    )


def reps_exercise(order: int = 1, **overrides: Any) -> dict[str, Any]:
    exercise: dict[str, Any] = {
        "exercise_name": "Dumbbell Bench Press",
        "exercise_type": "reps",
        "order": order,
        "sets": 3,
        "reps": [10, 10, 8],
        "load_each": [20, 20, 22.5],
        "load_unit": "kg",
        "rest_sec": 90,
        "muscles_utilized": [
            {"muscle": "Chest", "share": 0.7},
            {"muscle": "Triceps", "share": 0.2},
            {"muscle": "Shoulders", "share": 0.1},
        ],
        "goals_addressed": [{"goal": "strength", "share": 0.6}, {"goal": "hypertrophy", "share": 0.4}],
        "reasoning": "Main chest press with the dumbbells at home.",
        "equipment": ["dumbbells", "bench"],
    }
    exercise.update(overrides)
    return exercise


def bodyweight_exercise(order: int = 2, **overrides: Any) -> dict[str, Any]:
    exercise = reps_exercise(
        order,
        exercise_name="Push-Up",
        reps=[15, 12, 10],
        load_each=None,
        load_unit=None,
        rest_sec=60,
        equipment=[],
        reasoning="Bodyweight chest finisher.",
    )
    exercise.update(overrides)
    return {key: value for key, value in exercise.items() if value is not None}


def upper_body_workout() -> dict[str, Any]:
    """A warm-up, two presses (one seated), a curl, a band exercise and push-ups; rests 30-90 s: a workout whose
    exercises words can name by position, by name in whole or in part, and by equipment."""
    warm_up = bodyweight_exercise(1, exercise_name="Jumping Jack", sets=1, reps=[30], rest_sec=30)
    warm_up["group"] = {"id": "g_warm", "type": "warmup", "position": 1}
    return {
        "title": "Upper body",
        "exercises": [
            warm_up,
            reps_exercise(2),
            reps_exercise(3, exercise_name="Seated Dumbbell Shoulder Press", load_each=[12, 12, 12]),
            reps_exercise(4, exercise_name="Dumbbell Biceps Curl", load_each=[10, 10, 10]),
            bodyweight_exercise(5, exercise_name="Band Pull-Apart", equipment=["resistance_bands"]),
            bodyweight_exercise(6),
        ],
    }


def hold_exercise(order: int = 3, **overrides: Any) -> dict[str, Any]:
    exercise: dict[str, Any] = {
        "exercise_name": "Plank",
        "exercise_type": "hold",
        "order": order,
        "sets": 3,
        "hold_sec": [30, 45, 60],
        "rest_sec": 30,
        "muscles_utilized": [{"muscle": "Abs", "share": 0.7}, {"muscle": "Lower Back", "share": 0.3}],
        "goals_addressed": [{"goal": "stability", "share": 1.0}],
        "reasoning": "Core finisher.",
    }
    exercise.update(overrides)
    return exercise


def duration_exercise(order: int = 4, **overrides: Any) -> dict[str, Any]:
    exercise: dict[str, Any] = {
        "exercise_name": "Outdoor Run",
        "exercise_type": "duration",
        "order": order,
        "duration_min": 20,
        "distance": 4,
        "distance_unit": "km",
        "target_pace": "5:00/km",
        "muscles_utilized": [{"muscle": "Quadriceps", "share": 0.6}, {"muscle": "Calves", "share": 0.4}],
        "goals_addressed": [{"goal": "cardio", "share": 1.0}],
        "reasoning": "Easy aerobic base.",
    }
    exercise.update(overrides)
    return exercise


def intervals_exercise(order: int = 5, **overrides: Any) -> dict[str, Any]:
    exercise: dict[str, Any] = {
        "exercise_name": "Mountain Climber",
        "exercise_type": "intervals",
        "order": order,
        "rounds": 8,
        "work_sec": 20,
        "rest_sec": 10,
        "muscles_utilized": [{"muscle": "Abs", "share": 0.5}, {"muscle": "Quadriceps", "share": 0.5}],
        "goals_addressed": [{"goal": "cardio", "share": 0.7}, {"goal": "endurance", "share": 0.3}],
        "reasoning": "Tabata-style finisher.",
    }
    exercise.update(overrides)
    return exercise


def once(exercise: dict[str, Any]) -> dict[str, Any]:
    """The exercise as a circuit/superset member: one set (its first values), the group's rounds repeat it."""
    single = {**exercise, "sets": 1}
    for key in ("reps", "hold_sec", "load_each"):
        if single.get(key):
            single[key] = single[key][:1]
    return single


def full_workout(**overrides: Any) -> dict[str, Any]:
    """A valid five-exercise workout, one of each type, doable at Home."""
    workout: dict[str, Any] = {
        "title": "Home Push & Core",
        "exercises": [
            reps_exercise(1),
            bodyweight_exercise(2),
            hold_exercise(3),
            duration_exercise(4),
            intervals_exercise(5),
        ],
    }
    workout.update(overrides)
    return workout


def generate(trainee: Trainee, workout: dict[str, Any] | None = None) -> ToolResult:
    return trainee.run("generate_workout", {"workout": workout or full_workout()})
