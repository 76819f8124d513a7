"""The demo page's workout card (static/demo/chat.js) says a prescription as the server does, by the one rule of
`datasources_app.formatters.exercise_card_text` (docs/architecture.md "One rendering"): "each hand"
only for a pair (`implements: 2`), a circuit member without its sets or rest. chat.js's own functions run in
Node (no browser needed); skipped where Node is not installed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from datasources_app.formatters import exercise_card_text

CHAT_JS = Path(__file__).resolve().parents[3] / "static" / "demo" / "chat.js"
# Cut chat.js's card functions out of its closure (by balanced braces) and call `prescription` on each exercise.
HARNESS = """
const src = require("fs").readFileSync(process.argv[1], "utf8");
function grab(name) {
  const start = src.indexOf("function " + name + "(");
  let depth = 0;
  for (let k = src.indexOf("{", start); k < src.length; k++) {
    if (src[k] === "{") depth++;
    if (src[k] === "}" && --depth === 0) return src.slice(start, k + 1);
  }
}
const names = ["num", "sameOrSlashes", "setsReps", "implementsOf", "loadText", "oncePerRound"];
eval([...names, "exercisePrescription", "exerciseRest", "prescription"].map(grab).join("\\n"));
console.log(JSON.stringify(JSON.parse(process.argv[2]).map(prescription)));
"""


def card_lines(*exercises: dict[str, Any]) -> list[str]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node is not installed")
    run = subprocess.run(
        [node, "-e", HARNESS, str(CHAT_JS), json.dumps(exercises)], capture_output=True, text=True, check=True
    )
    lines: list[str] = json.loads(run.stdout)
    return lines


def thrust(**overrides: Any) -> dict[str, Any]:
    exercise = {"exercise_type": "reps", "sets": 3, "reps": [10, 10, 10], "load_each": [25, 25, 25]}
    return {**exercise, "load_unit": "kg", "rest_sec": 90, **overrides}


def test_each_hand_only_for_a_pair_and_a_circuit_member_without_sets_or_rest() -> None:
    one, pair, legacy, member = card_lines(
        thrust(implements=1),
        thrust(implements=2),
        thrust(load_per_hand=True),
        thrust(
            sets=1,
            reps=[12],
            load_each=[25],
            rest_sec=0,
            implements=1,
            group={"type": "circuit", "rounds": 3},
        ),
    )
    assert one == "3×10 @ 25kg · rest 90s"
    assert pair == "3×10 @ 25kg each hand · rest 90s"
    assert legacy == pair, "a workout stored before implements said a pair by load_per_hand"
    assert member == "12 @ 25kg"


# Every shape of prescription a stored exercise has (docs/contracts.md §12.2, §12.3).
CASES: list[dict[str, Any]] = [
    thrust(),
    thrust(implements=2, reps=[10, 10, 8], load_each=[20, 20, 22.5]),
    thrust(load_unit="lb", load_each=[45, 45, 50]),
    {"exercise_type": "reps", "sets": 3, "reps": [12, 12, 12], "rest_sec": 60},
    {
        "exercise_type": "reps",
        "sets": 3,
        "reps": [15, 15, 15],
        "rest_sec": 45,
        "equipment": ["resistance_bands"],
    },
    {"exercise_type": "reps", "sets": 4, "reps": [8, 8, 8, 8], "load_each": [0, 0, 0, 0], "rest_sec": 0},
    {"exercise_type": "hold", "sets": 3, "hold_sec": [30, 45, 60], "rest_sec": 45},
    {"exercise_type": "duration", "duration_min": 30.0},
    {"exercise_type": "duration", "duration_min": 25.5, "distance": 5.0, "distance_unit": "km"},
    {
        "exercise_type": "duration",
        "duration_min": 40,
        "distance": 4,
        "distance_unit": "mi",
        "target_pace": "9:30/mi",
    },
    {"exercise_type": "intervals", "rounds": 8, "work_sec": 20, "rest_sec": 10},
    {
        "exercise_type": "intervals",
        "rounds": 1,
        "work_sec": 40,
        "rest_sec": 20,
        "group": {"id": "c1", "type": "circuit", "position": 1, "rounds": 3},
    },
    {
        "exercise_type": "hold",
        "sets": 1,
        "hold_sec": [30],
        "rest_sec": 15,
        "group": {"id": "s1", "type": "superset", "position": 2},
    },
    thrust(sets=2, reps=[10, 10], load_each=[25, 25], group={"type": "warmup", "id": "w1", "position": 1}),
]


def test_the_card_says_every_prescription_as_the_server_rule_does() -> None:
    """chat.js and formatters.exercise_card_text give the same line for every kind of stored exercise."""
    cases = [{"exercise_name": "Exercise", **case} for case in CASES]
    assert card_lines(*cases) == [exercise_card_text(case) for case in cases]


def test_an_exercise_without_a_load_says_band_when_a_band_gives_the_resistance() -> None:
    """A band exercise has no load but is not bodyweight: the card says so, as the tools' lines do."""
    band = {"exercise_type": "reps", "sets": 3, "reps": [15, 15, 15], "rest_sec": 45}
    cases = [band | {"equipment": ["resistance_bands"]}, band | {"equipment": ["pull_up_bar"]}]
    expected = ["3×15 · band · rest 45s", "3×15 · bodyweight · rest 45s"]
    assert [exercise_card_text(case) for case in cases] == expected
    assert card_lines(*cases) == expected
