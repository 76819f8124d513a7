"""generate_exercise_timer and generate_workout_timers (docs/contracts.md §11.5 (tool list)): phases and hand-computed totals."""

from __future__ import annotations

from typing import Any

import pytest

from sessions_app.services import append_event
from tests.tools_app.workout_support import (
    Trainee,
    duration_exercise,
    generate,
    hold_exercise,
    intervals_exercise,
    make_trainee,
    reps_exercise,
)
from tools_app.registry import get_tool

pytestmark = pytest.mark.django_db


@pytest.fixture
def trainee() -> Trainee:
    return make_trainee()


def phase_list(timer: dict[str, Any]) -> list[tuple[str, int]]:
    return [(phase["phase_type"], phase["duration_sec"]) for phase in timer["phases"]]


@pytest.mark.parametrize(
    ("name", "start", "done"),
    [
        ("generate_exercise_timer", "Setting up your timer...", "Timer ready"),
        ("generate_workout_timers", "Setting up your timers...", "Timers ready"),
    ],
)
def test_timer_tools_metadata(name: str, start: str, done: str) -> None:
    """Status messages as in docs/contracts.md §11.2 (observations and status messages); timers are full-data observations."""
    tool = get_tool(name)
    assert (tool.status_start, tool.status_done, tool.category, tool.observation) == (
        start,
        done,
        "timers",
        "full",
    )


def test_reps_timer_phases_and_total(trainee: Trainee) -> None:
    """3 sets of 10/10/8 reps at 3 s each, 90 s rest: 10 + 30 + 90 + 30 + 90 + 24 = 274 s."""
    result = trainee.run("generate_exercise_timer", {"exercise": reps_exercise(1)})
    assert result.success, result.formatted
    timer = result.data["timer"]
    assert phase_list(timer) == [
        ("prepare", 10),
        ("work", 30),
        ("between_sets", 90),
        ("work", 30),
        ("between_sets", 90),
        ("work", 24),
    ]
    assert timer["total_duration_sec"] == result.data["total_duration_sec"] == 274
    assert timer["phases"][1]["cue"] == "Dumbbell Bench Press - Set 1/3"
    assert timer["phases"][5]["detail"] == "8 reps @ 22.5 kg"
    assert timer["phases"][5]["set_number"] == 3


@pytest.mark.parametrize(
    ("exercise", "total", "phases"),
    [
        # 10 + 30 + 30 + 45 + 30 + 60
        (
            hold_exercise(1),
            205,
            [
                ("prepare", 10),
                ("hold", 30),
                ("between_sets", 30),
                ("hold", 45),
                ("between_sets", 30),
                ("hold", 60),
            ],
        ),
        # 10 + 20 min
        (duration_exercise(1), 1210, [("prepare", 10), ("work", 1200)]),
        # 10 + 8 × (20 + 10)
        (intervals_exercise(1), 250, [("prepare", 10), *([("work", 20), ("rest", 10)] * 8)]),
    ],
)
def test_hold_duration_and_interval_timers(
    trainee: Trainee, exercise: dict[str, Any], total: int, phases: list[tuple[str, int]]
) -> None:
    """Holds per set with rest between, one block for a duration, rounds × (work + rest) for intervals."""
    result = trainee.run("generate_exercise_timer", {"exercise": exercise})
    assert result.success, result.formatted
    assert phase_list(result.data["timer"]) == phases
    assert result.data["total_duration_sec"] == total


def test_timer_returns_a_timer_artifact_that_can_be_delivered(trainee: Trainee) -> None:
    """The artifact is of type timer with an art_ id; once stored, message_notify_user delivers it."""
    result = trainee.run("generate_exercise_timer", {"exercise": intervals_exercise(1), "prepare_sec": 0})
    artifact = result.artifact
    assert artifact is not None and artifact["artifact_id"].startswith("art_")
    assert (artifact["type"], artifact["schema_version"], artifact["auto_start"]) == ("timer", "1.0", False)
    assert artifact["summary"] == {"total_duration_sec": 240, "timer_count": 1, "phase_count": 16}
    assert artifact["payload"]["total_duration_sec"] == 240
    assert result.artifact_id == artifact["artifact_id"]
    assert f"artifact_id={artifact['artifact_id']}" in result.raw_formatted
    # Compact: a line per distinct segment (the 8 identical rounds counted once), no JSON.
    assert result.raw_formatted.splitlines()[:2] == [
        f"Timer {artifact['artifact_id']}: Mountain Climber (intervals), total 4:00 (240s)",
        "  8× work 20s, rest 10s",
    ]
    append_event(session=trainee.session, event_type="artifact", data=artifact)
    delivered = trainee.run(
        "message_notify_user", {"message": "Your timer", "artifact_id": artifact["artifact_id"]}
    )
    assert delivered.delivered_artifact == artifact


def test_timer_for_a_current_workout_exercise_by_order_number(trainee: Trainee) -> None:
    """exercise_id (id or order number) takes the exercise from the current workout."""
    generate(trainee)
    result = trainee.run("generate_exercise_timer", {"exercise_id": "3"})
    assert result.success, result.formatted
    assert result.data["timer"]["exercise_name"] == "Plank"
    assert result.data["total_duration_sec"] == 205
    assert result.data["timer"]["exercise_ids"][0].startswith("ex_")


def test_seed_001_top_level_fields_and_types(trainee: Trainee) -> None:
    """Seed 001 spelling: fields at the top level, 'strength' / 'isometric' types, scalar reps,
    rest_seconds and work_duration_seconds."""
    strength = trainee.run(
        "generate_exercise_timer",
        {"exercise_name": "Squat", "exercise_type": "strength", "sets": 3, "reps": 10, "rest_seconds": 60},
    )
    assert strength.success, strength.formatted
    assert strength.data["total_duration_sec"] == 10 + 30 + 60 + 30 + 60 + 30
    isometric = trainee.run(
        "generate_exercise_timer",
        {
            "exercise_name": "Wall Sit",
            "exercise_type": "isometric",
            "sets": 2,
            "work_duration_seconds": 45,
            "rest_seconds": 15,
        },
    )
    assert isometric.success, isometric.formatted
    assert phase_list(isometric.data["timer"]) == [
        ("prepare", 10),
        ("hold", 45),
        ("between_sets", 15),
        ("hold", 45),
    ]


def test_workout_timers_for_the_current_workout(trainee: Trainee) -> None:
    """One timer per exercise: prepare before the first, a 30 s transition before the others.

    274 (bench) + 30+45+60+36+60+30 (push-ups 15/12/10, 60 s rest) + 30+195 (plank) + 30+1200 (run)
    + 30+240 (intervals) = 2260 s.
    """
    generate(trainee)
    result = trainee.run("generate_workout_timers", {})
    assert result.success, result.formatted
    totals = [(timer["exercise_name"], timer["total_duration_sec"]) for timer in result.data["timers"]]
    assert totals == [
        ("Dumbbell Bench Press", 274),
        ("Push-Up", 261),
        ("Plank", 225),
        ("Outdoor Run", 1230),
        ("Mountain Climber", 270),
    ]
    assert result.data["total_duration_sec"] == 2260
    artifact = result.artifact
    assert artifact is not None and artifact["title"] == "Home Push & Core timers"
    timers = artifact["payload"]["timers"]
    assert timers[1]["phases"][0] == {
        "phase_type": "transition",
        "duration_sec": 30,
        "cue": "Next: Push-Up",
        "detail": "",
        "countdown": True,
    }
    assert "total 37:40 (2260s)" in result.raw_formatted


def test_superset_runs_back_to_back_with_rest_between_rounds(trainee: Trainee) -> None:
    """A superset of 3 rounds: each round 10 reps (30 s) then a 30 s hold; 90 s between rounds.

    10 + 3 × (30 + 30) + 2 × 90 = 370 s, in one timer.
    """
    group = {
        "id": "ss-1",
        "type": "superset",
        "position": 1,
        "name": "Push & Hold",
        "rounds": 3,
        "rest_between_rounds_sec": 90,
    }
    exercises = [
        {
            "exercise_name": "Push-Up",
            "exercise_type": "reps",
            "sets": 3,
            "reps": [10, 10, 10],
            "rest_sec": 60,
            "group": group,
        },
        {
            "exercise_name": "Plank",
            "exercise_type": "hold",
            "sets": 3,
            "hold_sec": [30],
            "rest_sec": 60,
            "group": {"id": "ss-1", "type": "superset", "position": 2},
        },
    ]
    result = trainee.run("generate_workout_timers", {"exercises": exercises})
    assert result.success, result.formatted
    (timer,) = result.artifact["payload"]["timers"] if result.artifact else []
    assert (timer["exercise_name"], timer["exercise_type"], timer["exercises"]) == (
        "Push & Hold",
        "superset",
        ["Push-Up", "Plank"],
    )
    assert phase_list(timer) == [
        ("prepare", 10),
        ("work", 30),
        ("hold", 30),
        ("between_rounds", 90),
        ("work", 30),
        ("hold", 30),
        ("between_rounds", 90),
        ("work", 30),
        ("hold", 30),
    ]
    assert timer["total_duration_sec"] == 370
    assert [phase.get("round_number") for phase in timer["phases"][1:3]] == [1, 1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "Give exercise_id"),
        ({"exercise_name": "Squat"}, "Give exercise_id"),
        ({"exercise_id": "2"}, "No active workout"),
        (
            {"exercise": {"exercise_name": "Squat", "exercise_type": "reps", "sets": 3}},
            "type reps needs reps",
        ),
        (
            {"exercise": {"exercise_name": "Bike", "exercise_type": "intervals", "rounds": 5}},
            "type intervals needs work_sec",
        ),
    ],
)
def test_exercise_timer_failures(trainee: Trainee, args: dict[str, Any], message: str) -> None:
    """No exercise, an id without a workout, or a type's missing fields fail without an artifact."""
    result = trainee.run("generate_exercise_timer", args)
    assert not result.success and result.artifact is None
    assert message in result.data["error"]


def test_exercise_timer_unknown_id_lists_the_workout(trainee: Trainee) -> None:
    """An id not in the current workout fails with the ids that are."""
    generate(trainee)
    result = trainee.run("generate_exercise_timer", {"exercise_id": "ex_zzz"})
    assert not result.success and "not in the current workout" in result.data["error"]


def test_unknown_exercise_type_is_a_validation_failure(trainee: Trainee) -> None:
    """exercise_type is one of the four exercise types, emom or amrap (seed 001's older names mapped)."""
    result = trainee.run(
        "generate_exercise_timer", {"exercise": {"exercise_name": "X", "exercise_type": "juggling"}}
    )
    assert not result.success and "exercise_type" in result.data["error"]
    assert '"emom", "amrap"' in result.data["error"]


def test_emom_timer_for_a_workout_exercise_shows_the_instruction(trainee: Trainee) -> None:
    """An exercise of the current workout as an EMOM: a 60 s work phase per minute with the instruction."""
    generate(trainee)
    instruction = "10 reps at the top of each minute"
    result = trainee.run(
        "generate_exercise_timer",
        {"exercise_id": "2", "exercise_type": "emom", "rounds": 5, "instruction": instruction},
    )
    assert result.success, result.formatted
    timer = result.data["timer"]
    assert (timer["exercise_name"], timer["exercise_type"], timer["instruction"]) == (
        "Push-Up",
        "emom",
        instruction,
    )
    assert phase_list(timer) == [("prepare", 10)] + [("work", 60)] * 5
    assert [phase["cue"] for phase in timer["phases"][1:3]] == [
        "Push-Up - Minute 1/5",
        "Push-Up - Minute 2/5",
    ]
    assert {phase["detail"] for phase in timer["phases"][1:]} == {instruction}
    assert result.data["total_duration_sec"] == 310
    assert f"  5× work 60s: {instruction}" in result.raw_formatted.splitlines()


def test_free_standing_amrap_and_emom_every_90_seconds(trainee: Trainee) -> None:
    """An AMRAP is one block of its minutes; an EMOM with work_sec 90 runs 90 s intervals."""
    amrap = trainee.run(
        "generate_exercise_timer",
        {
            "exercise_name": "Cindy",
            "exercise_type": "amrap",
            "duration_min": 12,
            "instruction": "5 pull-ups, 10 push-ups, 15 squats",
            "prepare_sec": 0,
        },
    )
    assert amrap.success, amrap.formatted
    (phase,) = amrap.data["timer"]["phases"]
    assert (phase["duration_sec"], phase["cue"], phase["detail"]) == (
        720,
        "Cindy - AMRAP 12 min",
        "5 pull-ups, 10 push-ups, 15 squats",
    )
    emom = trainee.run(
        "generate_exercise_timer",
        {"exercise_name": "Thruster", "exercise_type": "emom", "rounds": 4, "work_sec": 90, "reps": 8},
    )
    assert emom.success, emom.formatted
    assert phase_list(emom.data["timer"]) == [("prepare", 10)] + [("work", 90)] * 4
    assert emom.data["timer"]["phases"][1]["detail"] == "8 reps"
    missing = trainee.run("generate_exercise_timer", {"exercise_name": "Thruster", "exercise_type": "emom"})
    assert not missing.success and "type emom needs rounds" in missing.data["error"]


def test_workout_timers_failures(trainee: Trainee) -> None:
    """Without exercises and without a current workout, or with an incomplete exercise, nothing is made."""
    no_workout = trainee.run("generate_workout_timers", {})
    assert not no_workout.success and "No active workout" in no_workout.data["error"]
    incomplete = trainee.run(
        "generate_workout_timers",
        {"exercises": [reps_exercise(1), {"exercise_name": "Run", "exercise_type": "duration"}]},
    )
    assert not incomplete.success
    assert "exercise 2 'Run': type duration needs duration_min" in incomplete.data["error"]
