"""Callbacks fire around every agent's run, the trainer and the initializer included (seed 004): a callback
hears each initializer run while its turn is under way and each trainer run once the turn has ended, with the
turn's outcome; a turn that ends in `error` is a failed run; a failing callback changes nothing for the user."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import connection
from prometheus_client import REGISTRY
from pytest_django import Settings

from sessions_app.models import AgentTurn, TurnStatus
from tests.support.llm_fakes import ScriptedTransport, openai_completion, openai_error, openai_provider_for
from trainer_agent.agents.callbacks import AgentRun, agent_metrics, callback_registry
from trainer_agent.initializer import Selection
from trainer_agent.llm.providers import override_provider
from trainer_agent.loop import TurnError, TurnResult
from trainer_agent.turns import run_turn

MODEL = "gpt-4o"


@dataclass
class Heard:
    run: AgentRun
    turn_finished: bool  # whether the run's turn had ended when the callback ran


@pytest.fixture
def heard() -> Iterator[list[Heard]]:
    """Every run the callbacks hear during the test, with whether its turn had ended by then."""
    runs: list[Heard] = []

    def spy(run: AgentRun) -> None:
        turn = (
            AgentTurn.objects.filter(session_id=run.context["session_id"]).order_by("-start_sequence").first()
        )
        runs.append(Heard(run, turn is not None and turn.finished_at is not None))

    callback_registry.register("test.spy", spy, when="always")
    yield runs
    callback_registry.unregister("test.spy")


def trainer_says_hi() -> ScriptedTransport:
    return ScriptedTransport(
        openai_completion([("message_notify_user", {"message": "Hi"})], model=MODEL),
        openai_completion([("idle", {"reason": "done"})], model=MODEL),
    )


def run_on(transport: ScriptedTransport, user_id: uuid.UUID) -> TurnResult:
    with override_provider(MODEL, openai_provider_for(transport)):
        return run_turn(user_id=user_id, message="hello", model=MODEL)


def subagent_failures(agent_id: str) -> float:
    return REGISTRY.get_sample_value("trainer_subagent_failures_total", {"agent": agent_id}) or 0.0


@pytest.mark.django_db
def test_a_callback_hears_the_initializer_during_the_turn_and_the_trainer_when_it_has_ended(
    settings: Settings, heard: list[Heard]
) -> None:
    settings.INITIALIZER_MODEL = "offline"
    user_id = uuid.uuid4()
    result = run_on(trainer_says_hi(), user_id)

    assert [(h.run.agent_id, h.run.success, h.turn_finished) for h in heard] == [
        ("initializer", True, False),  # before the trainer's first request, the turn under way
        ("trainer", True, True),  # the turn has ended: its outcome is what the callback is told
    ]
    initializer, trainer = heard[0].run, heard[1].run
    assert isinstance(initializer.result, Selection)
    assert initializer.context["user_id"] == user_id
    turn = AgentTurn.objects.get(session_id=result.session_id)
    assert trainer.context == {
        "turn_id": turn.pk,
        "session_id": result.session_id,
        "user_id": user_id,
        "model": MODEL,
        "attempt": 1,
    }
    assert isinstance(trainer.result, TurnResult)
    assert trainer.result.response["messages"] == ["Hi"] == result.response["messages"]
    assert trainer.result.status == TurnStatus.COMPLETED and trainer.error is None


@pytest.mark.django_db
def test_a_turn_that_ends_in_error_is_a_failed_trainer_run(settings: Settings, heard: list[Heard]) -> None:
    """on_failure hooks hear it with the turn's error; it is not counted as a sub-agent failure."""
    settings.INITIALIZER_MODEL = "offline"
    settings.LLM_MAX_RETRIES = 0
    failures_before = agent_metrics.snapshot().get("trainer", {}).get("failures", 0)
    prometheus_before = subagent_failures("trainer")
    failed: list[AgentRun] = []
    callback_registry.register("test.failed", failed.append, when="on_failure", agents=("trainer",))
    try:
        with pytest.raises(TurnError) as raised:
            run_on(ScriptedTransport(openai_error(400, "invalid_request_error", "bad request")), uuid.uuid4())
    finally:
        callback_registry.unregister("test.failed")

    assert [run.agent_id for run in failed] == ["trainer"]
    error = failed[0].error
    assert isinstance(error, TurnError) and error.kind == raised.value.kind and "bad request" in error.message
    assert failed[0].result.status == TurnStatus.ERROR
    assert [(h.run.agent_id, h.run.success) for h in heard] == [("initializer", True), ("trainer", False)]
    assert agent_metrics.snapshot()["trainer"]["failures"] == failures_before + 1
    assert subagent_failures("trainer") == prometheus_before  # a turn's failure is counted by its status


@pytest.mark.django_db
def test_a_failing_callback_is_logged_and_the_turn_goes_on(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """As for sub-agents: a hook that raises is logged, never raised, and the hooks after it still run."""
    settings.INITIALIZER_MODEL = "offline"

    def broken(run: AgentRun) -> Any:
        raise ZeroDivisionError(f"hook bug in {run.agent_id}")

    callback_registry.register("test.broken", broken, when="always", agents=("trainer", "initializer"))
    after: list[str] = []
    callback_registry.register("test.after", lambda run: after.append(run.agent_id), when="on_success")
    try:
        with caplog.at_level(logging.ERROR, logger="trainer_agent.agents.callbacks"):
            result = run_on(trainer_says_hi(), uuid.uuid4())
    finally:
        callback_registry.unregister("test.broken")
        callback_registry.unregister("test.after")

    assert result.status == TurnStatus.COMPLETED and result.response["messages"] == ["Hi"]
    assert after == ["initializer", "trainer"]
    logged = [r for r in caplog.records if r.getMessage() == "agent.callback_failed"]
    assert [getattr(r, "callback", None) for r in logged] == ["test.broken", "test.broken"]
    assert [str(r.exc_info[1]) for r in logged if r.exc_info] == [
        "hook bug in initializer",
        "hook bug in trainer",
    ]


@pytest.mark.django_db
def test_a_trainer_run_heard_only_by_hooks_that_ignore_results_is_not_read_back() -> None:
    """The turn's result (its events read back for the actions and the response) is made for the hooks that
    read results: with only the built-in log and metrics hooks listening, the worker's end of a turn reads
    its row, not its events; a hook registered as reading results gets the whole result."""
    user_id = uuid.uuid4()
    read_back: list[str] = []

    def events_read(execute: Any, sql: str, *args: Any) -> Any:
        if 'FROM "agent_session_events"' in sql and '"sequence_number" > ' in sql:
            read_back.append(sql)
        return execute(sql, *args)

    with connection.execute_wrapper(events_read):
        run_on(trainer_says_hi(), user_id)
    without_hooks = len(read_back)
    heard_results: list[Any] = []
    callback_registry.register("test.results", lambda run: heard_results.append(run.result), when="always")
    try:
        read_back.clear()
        with connection.execute_wrapper(events_read):
            run_on(trainer_says_hi(), user_id)
    finally:
        callback_registry.unregister("test.results")
    trainer_results = [result for result in heard_results if isinstance(result, TurnResult)]
    assert trainer_results and trainer_results[-1].response["messages"] == ["Hi"]
    assert len(read_back) == without_hooks + 1, "the turn's events are read back once more, for the hook"
