"""scripts/trial_fixture.py turns a model-relay directory into a fixture that replays like the trial did."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from trainer_agent import evals
from trainer_agent.evals import SCRIPTED_MODEL, ReplayProvider, Trial, load_trials, run_trial
from trainer_agent.llm.anthropic_provider import build_anthropic_body
from trainer_agent.llm.types import LLMRequest, LLMResponse, StructuredResult

ROOT = Path(__file__).resolve().parents[3]
spec = importlib.util.spec_from_file_location("trial_fixture", ROOT / "scripts" / "trial_fixture.py")
assert spec is not None and spec.loader is not None
trial_fixture = importlib.util.module_from_spec(spec)
spec.loader.exec_module(trial_fixture)


class RelayWriter(ReplayProvider):
    """Plays a trial and writes each call as model-relay does: req-NNNN.json (the wire body) and resp-NNNN.json."""

    def __init__(self, trial: Trial, directory: Path) -> None:
        super().__init__(trial)
        self.directory = directory
        self.count = 0

    def _write(self, body: dict[str, Any], answer: dict[str, Any]) -> None:
        self.count += 1
        (self.directory / f"req-{self.count:04d}.json").write_text(json.dumps(body))
        (self.directory / f"resp-{self.count:04d}.json").write_text(json.dumps(answer))

    def complete(self, request: LLMRequest) -> LLMResponse:
        response = super().complete(request)
        call = response.tool_calls[0]
        self._write(build_anthropic_body(request), {"name": call.name, "input": call.arguments})
        return response

    def complete_json(self, **kwargs: Any) -> StructuredResult:
        result = super().complete_json(**kwargs)
        body = {"tool_choice": {"type": "tool", "name": kwargs["schema_name"]}, "messages": []}
        self._write(body, {"name": kwargs["schema_name"], "input": result.data})
        return result


@pytest.mark.django_db
def test_a_recorded_relay_directory_becomes_a_fixture_that_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The swap trial played through a relay-shaped recorder: the script finds both user messages, the six
    answers with their ids as placeholders, and the fixture (with the original checks) replays and passes."""
    original = next(
        t for t in load_trials(ROOT / "tests" / "fixtures" / "trials") if t.name == "swap-exercise"
    )
    writer: dict[str, RelayWriter] = {}

    def recording(trial: Trial) -> RelayWriter:
        writer["it"] = RelayWriter(trial, tmp_path)
        return writer["it"]

    monkeypatch.setattr(evals, "ReplayProvider", recording)
    assert run_trial(copy.deepcopy(original), model=SCRIPTED_MODEL).passed
    monkeypatch.undo()
    assert writer["it"].count == 6
    raw = json.loads((tmp_path / "req-0005.json").read_text())["messages"]
    assert "art_" in json.dumps(raw)  # the recording holds the run's real ids

    fixture, warnings = trial_fixture.build_fixture(tmp_path, "swap-recorded")
    assert warnings == []
    assert [turn["message"] for turn in fixture["turns"]] == [turn.message for turn in original.turns]
    assert fixture["model"]["trainer"][1]["input"]["artifact_id"] == "{{art_1}}"
    assert fixture["model"]["trainer"][3]["input"]["exercise_id"] == "{{ex_1}}"
    assert fixture["model"]["trainer"][4]["input"]["artifact_id"] == "{{art_2}}"

    for turn, spec_turn in zip(fixture["turns"], original.turns, strict=True):
        turn["checks"] = spec_turn.checks.model_dump()
    out = tmp_path / "swap_recorded.json"
    out.write_text(json.dumps(fixture))
    (replayed,) = load_trials(out)
    report = run_trial(replayed, model=SCRIPTED_MODEL)
    assert report.passed, (report.problems, [t.failed_checks for t in report.turns])


def test_the_script_refuses_a_directory_without_requests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pointed at the wrong directory, the script says so and exits 1."""
    assert trial_fixture.main(["trial_fixture.py", str(tmp_path), str(tmp_path / "x.json")]) == 1
    assert "no req-NNNN.json files" in capsys.readouterr().err
