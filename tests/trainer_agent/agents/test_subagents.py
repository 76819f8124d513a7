"""Sub-agents: validated structured output, retry on invalid output, deterministic offline variants."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from datasources_app.demo import DEMO_USER_ID
from datasources_app.services import seed_demo_user, upsert_profile
from datasources_app.workouts import Workout
from sessions_app.models import AgentSessionEvent, EventType
from sessions_app.services import create_session
from tools_app.workout_validation import validate_workout
from trainer_agent.agents.callbacks import agent_metrics
from trainer_agent.agents.subagents import (
    SubagentError,
    WorkoutMessage,
    run_subagent,
    workout_message_brief,
)
from trainer_agent.llm.providers import override_provider
from trainer_agent.llm.scripted import ScriptedProvider
from trainer_agent.offline.structured import answer_json

MODEL = "claude-haiku-4-5"
MARKDOWN = """# Upper and conditioning
1. Dumbbell Row — 3x10 @ 16kg, rest 90s
2. Plank 3x45s
3. Run 20 min
4. Tabata jumping jacks 8 rounds 20/10
"""
INPUTS: dict[str, dict[str, Any]] = {
    "fitness_plan": {"goal": "get stronger", "weeks": 12, "days_per_week": 3, "start_date": "2026-03-02"},
    "microcycle": {"week": 5, "goal": "get stronger", "days_per_week": 4},
    "workout_message": {"markdown": MARKDOWN},
    "workout_structure": {"markdown": MARKDOWN},
}
# One answer per sub-agent that parses but fails its validator (or the schema).
INVALID: dict[str, dict[str, Any]] = {
    "fitness_plan": {"goal": "x"},
    "microcycle": {"week": 5, "deload": True, "days_per_week": 4, "target_rpe": 6, "days": []},
    "workout_message": {"message": "word " * 400},
    "workout_structure": {"title": "t", "exercises": [{"order": 1, "exercise_name": "Mystery"}]},
}


@pytest.fixture
def demo_user(db: None, settings: Any) -> uuid.UUID:
    """The demo user (kg, Home with dumbbells/bench/bands, no-burpees preference), offline models."""
    settings.PRIMARY_MODEL = "offline"
    settings.INITIALIZER_MODEL = "offline"
    seed_demo_user()
    # Without the demo knee: MARKDOWN's run and jumping jacks are what a knee limitation rules out (tested in
    # tests/coaching/guard); here the sub-agents' plumbing is under test.
    upsert_profile(user_id=DEMO_USER_ID, injuries="", limitations=[])
    return DEMO_USER_ID


def valid_answer(agent_id: str, user_id: uuid.UUID) -> dict[str, Any]:
    """What a good model would answer: the offline variant's output as JSON."""
    return run_subagent(agent_id, input=INPUTS[agent_id], user_id=user_id).output.model_dump(mode="json")


@pytest.fixture
def on_model(settings: Any) -> Iterator[Any]:
    """Switch sub-agents to a real model id served by a ScriptedProvider built by the test."""

    def serve(json_steps: list[Any]) -> Any:
        settings.PRIMARY_MODEL = MODEL
        return override_provider(MODEL, ScriptedProvider(json_steps=json_steps))

    yield serve


@pytest.mark.django_db
@pytest.mark.parametrize("agent_id", list(INPUTS))
def test_valid_model_output_is_accepted_first_time(
    agent_id: str, demo_user: uuid.UUID, on_model: Any
) -> None:
    """A schema-valid answer that passes the validators is returned after one attempt."""
    answer = valid_answer(agent_id, demo_user)
    with on_model([answer]) as provider:
        result = run_subagent(agent_id, input=INPUTS[agent_id], user_id=demo_user)
    assert result.attempts == 1
    assert result.model == MODEL
    assert result.output.model_dump(mode="json") == answer
    assert provider.json_requests[0].schema_name == agent_id


@pytest.mark.django_db
@pytest.mark.parametrize("agent_id", list(INPUTS))
def test_invalid_output_is_retried_with_the_problems(
    agent_id: str, demo_user: uuid.UUID, on_model: Any
) -> None:
    """Invalid then valid: success on attempt 2, and the retry prompt lists the rejected answer's problems."""
    answer = valid_answer(agent_id, demo_user)
    with on_model([INVALID[agent_id], answer]) as provider:
        result = run_subagent(agent_id, input=INPUTS[agent_id], user_id=demo_user)
    assert result.attempts == 2
    assert "rejected" not in provider.json_requests[0].user
    assert "Your previous answer was rejected" in provider.json_requests[1].user


@pytest.mark.django_db
@pytest.mark.parametrize("agent_id", list(INPUTS))
def test_invalid_output_twice_fails_cleanly(agent_id: str, demo_user: uuid.UUID, on_model: Any) -> None:
    """Two invalid answers exhaust the default policy: SubagentError names the agent and the problems."""
    with on_model([INVALID[agent_id], INVALID[agent_id]]), pytest.raises(SubagentError) as caught:
        run_subagent(agent_id, input=INPUTS[agent_id], user_id=demo_user)
    assert caught.value.attempts == 2
    assert caught.value.problems
    assert agent_id in str(caught.value)


@pytest.mark.django_db
@pytest.mark.parametrize("agent_id", list(INPUTS))
def test_offline_variant_is_deterministic(agent_id: str, demo_user: uuid.UUID) -> None:
    """The offline variant gives equal output for equal input."""
    first = run_subagent(agent_id, input=INPUTS[agent_id], user_id=demo_user)
    second = run_subagent(agent_id, input=INPUTS[agent_id], user_id=demo_user)
    assert first.model == "offline" and first.attempts == 1
    assert first.output == second.output


@pytest.mark.django_db
def test_plan_deloads_default_to_weeks_5_and_10(demo_user: uuid.UUID) -> None:
    """A default 12-week plan deloads in weeks 5 and 10 and nowhere else."""
    plan = run_subagent("fitness_plan", input={}, user_id=demo_user).output
    assert len(plan.weeks) == 12
    assert [week.week for week in plan.weeks if week.deload] == [5, 10]
    assert plan.deload_weeks == [5, 10]


@pytest.mark.django_db
def test_plan_deloads_follow_a_custom_set(demo_user: uuid.UUID) -> None:
    """Configured deload weeks are where the plan deloads, with lighter volume."""
    plan = run_subagent(
        "fitness_plan", input={"weeks": 9, "deload_weeks": [3, 6, 9], "days_per_week": 4}, user_id=demo_user
    ).output
    assert [week.week for week in plan.weeks if week.deload] == [3, 6, 9]
    assert all(len(week.days) == 4 for week in plan.weeks)
    assert plan.weeks[2].volume_factor < plan.weeks[1].volume_factor


@pytest.mark.django_db
def test_model_plan_with_misplaced_deloads_is_rejected(demo_user: uuid.UUID, on_model: Any) -> None:
    """The validator rejects a model's plan whose deload weeks are not the configured ones."""
    answer = valid_answer("fitness_plan", demo_user)
    for week in answer["weeks"]:
        week["deload"] = week["week"] == 4
    with on_model([answer, answer]), pytest.raises(SubagentError) as caught:
        run_subagent("fitness_plan", input=INPUTS["fitness_plan"], user_id=demo_user)
    assert any("deload weeks must be [5, 10]" in problem for problem in caught.value.problems)


@pytest.mark.django_db
def test_a_model_plan_that_drops_the_core_work_the_user_asked_for_is_rejected(
    demo_user: uuid.UUID, on_model: Any
) -> None:
    """'Core work at the end of each session': the draft ends every session with it, and a model's plan that
    leaves it out of a session is sent back naming the session and the draft's words."""
    asked = INPUTS["fitness_plan"] | {"extras": ["core work at the end"], "weeks": 4}
    answer = run_subagent("fitness_plan", input=asked, user_id=demo_user).output.model_dump(mode="json")
    assert all(
        day["prescription"].endswith("core finisher: plank 3×30s, dead bug 3×10")
        for week in answer["weeks"]
        if not week["deload"]
        for day in week["days"]
    )
    answer["weeks"][1]["days"][0]["prescription"] = "main lifts 4×5 @ 72.5% 1RM, RPE 7.5; accessories 3×8-10"
    with on_model([answer, answer]), pytest.raises(SubagentError) as caught:
        run_subagent("fitness_plan", input=asked, user_id=demo_user)
    assert any(
        "the user asked for 'core work at the end' in every session" in problem
        and "'core finisher: plank 3×30s, dead bug 3×10'" in problem
        and "week 2 Mon 2026-03-09" in problem
        for problem in caught.value.problems
    ), caught.value.problems


@pytest.mark.django_db
def test_microcycle_has_seven_days_sized_by_days_per_week(demo_user: uuid.UUID) -> None:
    """Seven days Mon..Sun with exactly days_per_week sessions; a deload week is shorter than a build week."""
    deload = run_subagent("microcycle", input={"week": 5, "days_per_week": 4}, user_id=demo_user).output
    build = run_subagent("microcycle", input={"week": 4, "days_per_week": 4}, user_id=demo_user).output
    assert [day.weekday for day in deload.days] == ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    assert sum(not day.rest for day in deload.days) == 4
    assert deload.deload and not build.deload
    assert sum(d.duration_minutes for d in deload.days) < sum(d.duration_minutes for d in build.days)


@pytest.mark.django_db
def test_structure_output_passes_workout_validation(demo_user: uuid.UUID) -> None:
    """The parsed markdown is a workout the demo user's validation accepts, with parsed prescriptions."""
    workout = run_subagent("workout_structure", input=INPUTS["workout_structure"], user_id=demo_user).output
    assert isinstance(workout, Workout)
    assert validate_workout(workout, user_id=demo_user) == []
    row, plank, run, tabata = workout.exercises
    assert (row.exercise_type, row.sets, row.reps, row.load_each, row.rest_sec) == (
        "reps",
        3,
        [10] * 3,
        [16] * 3,
        90,
    )
    assert (plank.exercise_type, plank.hold_sec) == ("hold", [45] * 3)
    assert (run.exercise_type, run.duration_min) == ("duration", 20)
    assert (tabata.exercise_type, tabata.rounds, tabata.work_sec, tabata.rest_sec) == ("intervals", 8, 20, 10)


@pytest.mark.django_db
def test_structure_of_an_excluded_exercise_fails_cleanly(demo_user: uuid.UUID) -> None:
    """Burpees break the demo user's no-burpees preference: the offline run fails with that problem."""
    with pytest.raises(SubagentError, match="burpee"):
        run_subagent(
            "workout_structure", input={"markdown": "Tabata burpees 8 rounds 20/10"}, user_id=demo_user
        )


@pytest.mark.django_db
def test_runs_are_recorded_in_the_parent_session(demo_user: uuid.UUID, on_model: Any) -> None:
    """Each attempt is an llm_request/llm_response pair with purpose subagent:<id>, model, tokens and cost."""
    session = create_session(user_id=demo_user)
    run_subagent("microcycle", input=INPUTS["microcycle"], user_id=demo_user, session=session)
    answer = valid_answer("workout_message", demo_user)
    with on_model([INVALID["workout_message"], answer]):
        run_subagent("workout_message", input=INPUTS["workout_message"], user_id=demo_user, session=session)
    events = list(AgentSessionEvent.objects.filter(session=session).order_by("sequence_number"))
    kinds = [(event.event_type, event.data["purpose"], event.data["model"]) for event in events]
    assert kinds == [
        (EventType.LLM_REQUEST, "subagent:microcycle", "offline"),
        (EventType.LLM_RESPONSE, "subagent:microcycle", "offline"),
        (EventType.LLM_REQUEST, "subagent:workout_message", MODEL),
        (EventType.LLM_RESPONSE, "subagent:workout_message", MODEL),
        (EventType.LLM_REQUEST, "subagent:workout_message", MODEL),
        (EventType.LLM_RESPONSE, "subagent:workout_message", MODEL),
    ]
    assert events[1].data["cost_cents"] == 0
    assert events[3].data["valid"] is False and events[5].data["valid"] is True
    assert events[5].data["tokens"]["total"] > 0 and events[5].data["cost_cents"] > 0


@pytest.mark.django_db
def test_runs_fire_the_callbacks(demo_user: uuid.UUID, on_model: Any) -> None:
    """The metrics callback counts a success and a failure of the sub-agent."""
    before = agent_metrics.snapshot().get("workout_message", {"runs": 0, "failures": 0})
    run_subagent("workout_message", input=INPUTS["workout_message"], user_id=demo_user)
    with on_model([INVALID["workout_message"]] * 2), pytest.raises(SubagentError):
        run_subagent("workout_message", input=INPUTS["workout_message"], user_id=demo_user)
    after = agent_metrics.snapshot()["workout_message"]
    assert after["runs"] == before["runs"] + 2
    assert after["failures"] == before["failures"] + 1


def offline_message(input: dict[str, Any]) -> str:
    """The offline model's workout_message for `input`, briefed as run_subagent briefs it (no user data read)."""
    request = {"input": workout_message_brief(input, uuid.uuid4()), "user": {}}
    return str(
        answer_json(
            user=json.dumps(request),
            json_schema=WorkoutMessage.model_json_schema(),
            schema_name="workout_message",
        ).data["message"]
    )


_WORDS = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zs")), min_size=1, max_size=40
)
_EXERCISES = st.lists(
    st.fixed_dictionaries(
        {
            "exercise_name": st.lists(_WORDS, min_size=1, max_size=30).map(" ".join),
            "sets": st.integers(1, 99),
            "reps": st.lists(st.integers(1, 999), min_size=1, max_size=3),
            "load_each": st.lists(st.floats(0, 9999, allow_nan=False), min_size=1, max_size=3),
            "rest_sec": st.integers(0, 999),
            "notes": st.text(max_size=300),
        }
    ),
    max_size=120,
)


@hypothesis_settings(max_examples=150, deadline=None)
@given(title=st.lists(_WORDS, max_size=200).map(" ".join), exercises=_EXERCISES)
def test_sms_never_exceeds_1600_characters(title: str, exercises: list[dict[str, Any]]) -> None:
    """However long the workout, the offline SMS fits 1,600 characters and says how many lines it left out."""
    workout = {"title": title, "exercises": [{"order": i + 1, **e} for i, e in enumerate(exercises)]}
    message = offline_message({"workout": workout})
    assert len(message) <= 1600
    shown = sum(1 for line in message.splitlines() if line[:1].isdigit())
    if shown < len(exercises):
        assert f"…and {len(exercises) - shown} more" in message


@given(words=st.lists(st.text(alphabet="abcdefghij", min_size=1, max_size=12), min_size=1, max_size=600))
def test_sms_cuts_only_between_words(words: list[str]) -> None:
    """Markdown lines of ordinary words are cut at word boundaries: every word shown is a whole input word."""
    lines = [" ".join(words[i : i + 50]) for i in range(0, len(words), 50)]
    message = offline_message({"markdown": "\n".join(lines)})
    assert len(message) <= 1600
    body = message.splitlines()[1:-1]
    for line in body:
        if line.startswith("…and "):
            continue
        for word in line.removesuffix("…").split():
            assert word in words


@pytest.mark.django_db
def test_a_weeks_days_carry_drafts_the_structure_is_sent(demo_user: uuid.UUID, on_model: Any) -> None:
    """The microcycle's brief drafts each training day's workout (valid for the user as they stand: equipment,
    preferences); the day's workout_structure request carries that draft to the model."""
    laid_out = run_subagent(
        "microcycle",
        input={"week": 1, "goal": "get stronger", "days_per_week": 3, "workouts": True},
        user_id=demo_user,
    )
    days = laid_out.input["training_days"]
    assert len(days) == 3 == laid_out.output.days_per_week
    drafts = [Workout.model_validate(day["draft"]) for day in days]
    assert all(validate_workout(draft, user_id=demo_user) == [] for draft in drafts)
    assert len({frozenset(e.exercise_name for e in draft.exercises) for draft in drafts}) == 3, "varied"
    monday = next(day for day in laid_out.output.days if not day.rest)
    answer = valid_answer("workout_structure", demo_user)
    with on_model([answer]) as provider:
        run_subagent(
            "workout_structure",
            input={"markdown": monday.markdown, "title": "Full Body A", "draft": days[0]["draft"]},
            user_id=demo_user,
        )
    sent = str(provider.json_requests[0])
    assert "draft" in sent and drafts[0].exercises[1].exercise_name in sent
