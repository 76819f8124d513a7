"""manage.py eval: scenarios run on the offline model (or replayed), each failed check reported as a failure."""

from __future__ import annotations

import json
import logging
import uuid
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from datasources_app.models import UserProfile
from datasources_app.services import seed_demo_user, upsert_settings
from sessions_app.models import AgentSession
from trainer_agent.evals import workout_violations

HERE = Path(__file__).resolve().parent
SMALL = HERE / "scenarios_small.json"
TRIALS = HERE.parents[1] / "fixtures" / "trials"
SCENARIO_FIELDS = {
    "name",
    "model",
    "passed",
    "problems",
    "violations",
    "delivered_when_asked",
    "tool_errors",
    "iterations",
    "tokens",
    "cost_cents",
    "latency_s",
    "turns",
    "run",
}


def run_eval(*args: str) -> tuple[dict, str]:
    out = StringIO()
    error = ""
    try:
        call_command("eval", *args, stdout=out)
    except CommandError as exc:
        error = str(exc)
    return json.loads(out.getvalue()), error


@pytest.mark.django_db
def test_offline_run_reports_every_scenario_and_fails_the_violated_check() -> None:
    """--json: one entry per scenario with its figures; the deliberately violated scenario fails, the other
    passes, the command exits with an error naming the count, and no throw-away user is left behind."""
    document, error = run_eval("--model", "offline", "--scenarios", str(SMALL), "--json")
    runs = {run["name"]: run for run in document["scenarios"]}
    assert set(runs) == {"home-workout", "deliberately-violated"}
    for run in runs.values():
        assert set(run) >= SCENARIO_FIELDS
        assert run["iterations"] >= 2 and run["tokens"] > 0 and run["latency_s"] > 0
        turn = run["turns"][0]
        assert {"tools", "tool_errors", "violations", "failed_checks", "latency_s"} <= set(turn)
    assert runs["home-workout"]["passed"] and runs["home-workout"]["delivered_when_asked"]
    assert runs["home-workout"]["turns"][0]["tools"][:2] == ["draft_workout", "message_notify_user"]
    failed = runs["deliberately-violated"]
    assert not failed["passed"]
    checks = failed["turns"][0]["failed_checks"]
    assert any(c.startswith("delivered_workout: expected False, got True") for c in checks), checks
    assert any(c.startswith("exercise_matching 'barbell snatch'") for c in checks), checks
    assert document["overall"]["failed"] == ["deliberately-violated"]
    assert error == "1 of 2 scenario runs failed"
    assert not AgentSession.objects.exists() and not UserProfile.objects.exists()


@pytest.mark.django_db
def test_repeat_and_the_text_report() -> None:
    """--repeat runs each scenario N times; the text report says PASS/FAIL per run and the failed check."""
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("eval", "--model", "offline", "--scenarios", str(SMALL), "--repeat", "2", stdout=out)
    text = out.getvalue()
    assert text.count("PASS home-workout #") == 2 and text.count("FAIL deliberately-violated #") == 2
    assert "exercise_matching 'barbell snatch'" in text
    assert "Overall on offline: 2/4 passed" in text


# Real commits, as in the service: a plan's week chain is enqueued when the asking tool's transaction commits.
@pytest.mark.django_db(transaction=True)
def test_scripted_replays_the_trial_fixtures() -> None:
    """`--model scripted` over the fixture folder replays the recorded trials, all passing."""
    out = StringIO()
    call_command("eval", "--model", "scripted", "--scenarios", str(TRIALS), "--json", stdout=out)
    document = json.loads(out.getvalue())
    assert document["scenarios"] and all(run["passed"] for run in document["scenarios"])


@pytest.mark.django_db
def test_scripted_needs_recorded_answers() -> None:
    """A scenario with no recorded answers cannot be replayed: it fails saying so."""
    document, error = run_eval("--model", "scripted", "--scenarios", str(SMALL), "--json")
    assert all("no recorded model answers" in " ".join(r["problems"]) for r in document["scenarios"])
    assert error


def test_unknown_model_and_bad_file_are_clear_errors(tmp_path: Path) -> None:
    """An unknown model id and a scenario file off the format fail before anything runs, saying why."""
    with pytest.raises(CommandError, match="Unknown model 'gpt-99'"):
        call_command("eval", "--model", "gpt-99", "--scenarios", str(SMALL))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"name": "x", "turns": [{"mesage": "hi"}]}]))
    with pytest.raises(CommandError, match=r"bad.json \[0\]: turns.0.message: Field required"):
        call_command("eval", "--model", "offline", "--scenarios", str(bad))


@pytest.mark.django_db
def test_violations_are_found_by_the_tools_validators_and_classified() -> None:
    """A delivered workout that breaks the user's injury, equipment, exclusion and unit constraints yields one
    violation of each kind (what the eval counts), worded by the tools' own validators."""
    user_id = uuid.uuid4()
    seed_demo_user(user_id=user_id)  # Home: dumbbells, bench, bands; knee limitation; no burpees
    upsert_settings(user_id=user_id, weight_unit="lb")
    base = {
        "exercise_type": "reps",
        "goals_addressed": [{"goal": "strength", "share": 1.0}],
        "reasoning": "test",
        "sets": 3,
        "reps": [8, 8, 8],
        "rest_sec": 60,
    }
    exercises = [
        {
            **base,
            "order": 1,
            "exercise_name": "Jump Squat",
            "muscles_utilized": [{"muscle": "Quadriceps", "share": 1.0}],
        },
        {
            **base,
            "order": 2,
            "exercise_name": "Barbell Bench Press",
            "muscles_utilized": [{"muscle": "Chest", "share": 1.0}],
        },
        {
            **base,
            "order": 3,
            "exercise_name": "Burpee",
            "muscles_utilized": [{"muscle": "Chest", "share": 1.0}],
        },
        {
            **base,
            "order": 4,
            "exercise_name": "Dumbbell Curl",
            "muscles_utilized": [{"muscle": "Biceps", "share": 1.0}],
            "load_each": [10, 10, 10],
            "load_unit": "kg",
        },
    ]
    found = workout_violations(exercises, user_id=user_id)
    kinds = {violation["kind"] for violation in found}
    assert {"injury", "equipment", "preference", "units"} <= kinds, found
    assert any(v["kind"] == "equipment" and "Barbell Bench Press" in v["problem"] for v in found)
    other = uuid.uuid4()
    seed_demo_user(user_id=other)  # trains in kg: the curl alone breaks nothing
    assert workout_violations(exercises[3:], user_id=other) == []


@pytest.mark.django_db
def test_the_console_log_is_back_once_the_command_returns() -> None:
    """The command quiets the turns' INFO records while it runs; a process that goes on afterwards (the shell,
    `manage.py chat` run next in the same process) logs them again (it used to leave them off for good)."""
    run_eval("--model", "offline", "--scenarios", str(SMALL), "--json")
    records: list[logging.LogRecord] = []

    class Kept(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Kept(logging.INFO)
    console = logging.getLogger("agent.console")
    console.addHandler(handler)
    try:
        console.info("after the eval")
    finally:
        console.removeHandler(handler)
    assert [record.getMessage() for record in records] == ["after the eval"]
