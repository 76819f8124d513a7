"""The demo page's workout card (static/demo/chat.js) says a prescription as the server does: "each hand" only
for a pair (`implements: 2`), a circuit member without its sets or rest. chat.js's own functions run in Node
(no browser needed); skipped where Node is not installed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

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
eval(["sameValues", "joinValues", "implementsOf", "oncePerRound", "prescription"].map(grab).join("\\n"));
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
    assert one == "3 × 10 @ 25 kg · rest 90 s"
    assert pair == "3 × 10 @ 25 kg each hand · rest 90 s"
    assert legacy == pair, "a workout stored before implements said a pair by load_per_hand"
    assert member == "12 reps @ 25 kg"
