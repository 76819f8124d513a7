"""Recorded model-in-the-loop trials replay through the real turn runner and still give the user what they got.

Every tests/fixtures/trials/*.json is one test (tests/fixtures/trials/README.md says how to add one): the demo
user's data with the trial's overrides, each turn run as `manage.py chat` runs it, the model's recorded
answers played back in order, and each turn's checks asserted on the response, events and data.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from trainer_agent.evals import SCRIPTED_MODEL, Trial, load_trials, run_trial

TRIALS_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "trials"
TRIALS = load_trials(TRIALS_DIR)


@pytest.fixture(autouse=True)
def _quiet_console(settings: pytest.FixtureRequest) -> None:
    settings.INITIALIZER_MODEL = "offline"  # type: ignore[attr-defined]


# Real commits, as in the service: the week chain is enqueued when the asking tool's transaction commits.
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("trial", TRIALS, ids=[trial.name for trial in TRIALS])
def test_recorded_trial_replays_and_passes_its_checks(trial: Trial) -> None:
    """The trial's answers are all asked for, in order, and every turn meets its checks."""
    report = run_trial(trial, model=SCRIPTED_MODEL)
    assert not report.problems, "\n".join(report.problems)
    failures = [
        f"turn {number} ({turn.message!r}): {failure}"
        for number, turn in enumerate(report.turns, start=1)
        for failure in turn.failed_checks
    ]
    assert not failures, f"{trial.source}:\n" + "\n".join(failures)
    assert len(report.turns) == len(trial.turns)


def _single() -> Trial:
    return copy.deepcopy(next(trial for trial in TRIALS if trial.name == "single-workout-delivered"))


@pytest.mark.django_db
def test_a_call_the_trial_did_not_record_fails_naming_the_trial_and_the_call() -> None:
    """When the loop asks for more trainer calls than recorded, the report says which call and which trial."""
    trial = _single()
    assert trial.model is not None
    trial.model.trainer = trial.model.trainer[:1]  # generate_workout only: call 2 has no answer
    report = run_trial(trial, model=SCRIPTED_MODEL)
    assert not report.passed
    assert any(
        "single-workout-delivered" in problem and "trainer call 2 was not recorded" in problem
        for problem in report.problems
    ), report.problems


@pytest.mark.django_db
def test_an_answer_calling_a_tool_the_request_does_not_offer_is_a_mismatch() -> None:
    """A recorded tool that no longer exists (renamed since the trial) is named, not silently run."""
    trial = _single()
    assert trial.model is not None
    trial.model.trainer[0] = {"name": "make_workout_v0", "input": {}}
    report = run_trial(trial, model=SCRIPTED_MODEL)
    assert any("'make_workout_v0', which the request does not offer" in p for p in report.problems)


@pytest.mark.django_db
def test_answers_left_unasked_fail_the_replay() -> None:
    """A replay that ends before using every recorded answer is not a pass (the conversation diverged)."""
    trial = _single()
    assert trial.model is not None
    trial.model.trainer.append({"name": "idle", "input": {"reason": "extra"}})
    trial.model.subagents["microcycle"] = [{"days": []}]
    report = run_trial(trial, model=SCRIPTED_MODEL)
    assert not report.passed
    assert "1 trainer answer(s) never asked for" in "\n".join(report.problems)
    assert "1 microcycle answer(s) never asked for" in "\n".join(report.problems)


@pytest.mark.django_db
def test_a_check_the_turn_does_not_meet_fails_with_what_it_got() -> None:
    """Checks can fail: a workout that holds a bench press fails `no_exercise_matching: bench`; a line or a log
    it does not show fails `workout_lines` / `history_contains` with what it shows; a tool result without a
    text (or with one it must not hold) fails `tool_result_contains` (`tool_result_not_contains`); a scheduled day
    that is not there fails `scheduled_minutes`."""
    trial = _single()
    trial.turns[0].checks.tool_result_contains = {"generate_workout": ["Created workout", "99kg"]}
    trial.turns[0].checks.tool_result_not_contains = {"generate_workout": ["Created workout"]}
    trial.turns[0].checks.no_exercise_matching = ["bench"]
    trial.turns[0].checks.message_contains = ["kettlebell"]
    trial.turns[0].checks.workout_lines = ["Dumbbell Bench Press — 3×10 @ 99kg each hand, rest 90s"]
    trial.turns[0].checks.history_contains = ["Dumbbell Bench Press 3×10"]
    trial.turns[0].checks.scheduled_minutes = {"Upper A (week 1)": (42, 46)}
    report = run_trial(trial, model=SCRIPTED_MODEL)
    assert not report.passed
    failed = report.turns[0].failed_checks
    assert any(f.startswith("no_exercise_matching 'bench'") and "Dumbbell Bench Press" in f for f in failed)
    assert any(f.startswith("message_contains: no message contains 'kettlebell'") for f in failed)
    # The delivered lines as the model reads them, and the history (nothing logged), are in the failure.
    assert any(
        f.startswith("workout_lines: no line reads") and "Dumbbell Bench Press — 3×" in f for f in failed
    )
    assert any(f.startswith("history_contains:") and "No workouts logged" in f for f in failed)
    assert "scheduled_minutes: 'Upper A (week 1)' takes about None min, not 42-46" in failed
    assert [f.split(" (results:")[0] for f in failed if f.startswith("tool_result")] == [
        "tool_result_contains: no generate_workout result contains '99kg'",
        "tool_result_not_contains: a generate_workout result contains 'Created workout'",
    ]


@pytest.mark.django_db
def test_a_workout_written_out_again_fails_the_schedule_checks() -> None:
    """schedule-weekend's model wrote a whole workout into schedule_workout: `max_tool_input_chars` fails with the
    size written, and a line the scheduled day does not show fails `scheduled_lines` with the lines it shows."""
    trial = copy.deepcopy(next(trial for trial in TRIALS if trial.name == "schedule-weekend"))
    trial.turns[0].checks.max_tool_input_chars = 400
    trial.turns[0].checks.scheduled_lines = ["Dumbbell Bench Press — 3×10 @ 99kg each hand, rest 90s"]
    report = run_trial(trial, model=SCRIPTED_MODEL)
    failed = report.turns[0].failed_checks
    assert any(f.startswith("max_tool_input_chars: ") and int(f.split()[1]) > 2000 for f in failed), failed
    assert any(
        f.startswith("scheduled_lines: no scheduled line reads")
        and "Dumbbell Bench Press — 4×10/10/8/8 @ 20/20/22.5/22.5kg" in f
        for f in failed
    ), failed
