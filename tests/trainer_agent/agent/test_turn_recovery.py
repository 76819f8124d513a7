"""Turns as rows with leases, and continuing a turn from the event store (in process, no subprocess).

A worker that dies leaves its turn open with its last commit in the store; these tests build exactly those
stores and check that the next `execute_turn` continues from them: no event written twice, a tool whose
result was committed never runs again, a model call with no stored answer made again.
"""

from __future__ import annotations

import threading
import time
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from sessions_app.models import AgentSession, AgentSessionEvent, AgentTurn, TurnStatus
from sessions_app.selectors import events_after
from sessions_app.services import (
    NewEvent,
    TurnInProgress,
    TurnTakenOver,
    append_events,
    claim_turn,
    create_session,
    finish_turn,
    open_turn,
    renew_lease,
)
from trainer_agent.llm.providers import override_provider
from trainer_agent.llm.scripted import ScriptedProvider, tool_response
from trainer_agent.llm.types import LLMError
from trainer_agent.sink import EventSink, LeaseLost
from trainer_agent.turns import execute_turn, sweep_lapsed_turns, turn_result

MODEL = "claude-haiku-4-5"
LEASE = timedelta(seconds=10)


def _open(session: AgentSession, message: str = "hello") -> AgentTurn:
    turn, _ = open_turn(session=session, model=MODEL, events=[NewEvent("user_message", {"message": message})])
    return turn


def _types(session: AgentSession) -> list[str]:
    return list(
        AgentSessionEvent.objects.filter(session=session)
        .order_by("sequence_number")
        .values_list("event_type", flat=True)
    )


def _lapse(turn: AgentTurn) -> None:
    """The worker holding the turn died: its lease ran out (a lease after it was enqueued, at the earliest)."""
    now = timezone.now()
    AgentTurn.objects.filter(pk=turn.pk).update(
        lease_expires_at=now - timedelta(seconds=1), enqueued_at=now - LEASE - timedelta(seconds=1)
    )


@pytest.mark.django_db
def test_one_open_turn_per_session() -> None:
    """A second turn in a session with an open one is refused and writes nothing; once it ends, it is admitted."""
    session = create_session(user_id=uuid.uuid4())
    first = _open(session)
    with pytest.raises(TurnInProgress):
        _open(session, "again")
    assert _types(session) == ["user_message"]
    finish_turn(turn=first, status=TurnStatus.COMPLETED)
    second = _open(session, "again")
    assert second.start_sequence == 1


@pytest.mark.django_db
def test_a_refused_second_message_leaves_the_running_turn_its_worker() -> None:
    """A message sent while a worker runs the session's turn is refused (409) and takes nothing from that
    worker: it still writes the turn's events."""
    session = create_session(user_id=uuid.uuid4())
    turn = _open(session)
    assert claim_turn(turn_id=turn.pk, worker="a", lease=LEASE) is not None
    with pytest.raises(TurnInProgress):
        _open(session, "are you there?")
    append_events(session=session, events=[NewEvent("llm_request", {"model": MODEL})], holder="a")
    assert _types(session) == ["user_message", "llm_request"]


@pytest.mark.django_db
def test_a_live_lease_keeps_other_workers_out_until_it_lapses() -> None:
    """Of two workers one claims the turn; the other gets nothing until the lease lapses, then takes it over
    (attempt 2). The first can then neither renew, nor write, nor finish."""
    session = create_session(user_id=uuid.uuid4())
    turn = _open(session)
    first = claim_turn(turn_id=turn.pk, worker="a", lease=LEASE)
    assert first is not None and first.attempts == 1 and first.status == TurnStatus.RUNNING
    assert claim_turn(turn_id=turn.pk, worker="b", lease=LEASE) is None
    assert renew_lease(turn=first, lease=LEASE)

    _lapse(turn)
    second = claim_turn(turn_id=turn.pk, worker="b", lease=LEASE)
    assert second is not None and second.attempts == 2

    assert not renew_lease(turn=first, lease=LEASE)
    with pytest.raises(LeaseLost):
        EventSink(session=session, turn=first).record("knowledge", {"source": "x"})
    with pytest.raises(TurnTakenOver):
        finish_turn(turn=first, status=TurnStatus.COMPLETED, events=[NewEvent("error", {"message": "late"})])
    assert _types(session) == ["user_message"], "the worker presumed dead wrote nothing"

    finish_turn(turn=second, status=TurnStatus.COMPLETED)
    turn.refresh_from_db()
    assert turn.finished_at is not None and turn.end_sequence == 0
    assert claim_turn(turn_id=turn.pk, worker="c", lease=LEASE) is None, "a finished turn is nobody's"


def _script(*steps: tuple[str, dict[str, Any]]) -> ScriptedProvider:
    return ScriptedProvider([tool_response(name, args) for name, args in steps])


@pytest.mark.django_db
def test_a_model_call_without_a_stored_answer_is_made_again_without_a_second_request() -> None:
    """The store ends with an llm_request (the worker died during the call): the next worker calls the model
    again, records its answer after that request, and finishes the turn."""
    session = create_session(user_id=uuid.uuid4())
    turn = _open(session)
    claimed = claim_turn(turn_id=turn.pk, worker="dead", lease=LEASE)
    assert claimed is not None
    append_events(
        session=session,
        events=[NewEvent("llm_request", {"model": MODEL, "purpose": "trainer", "iteration": 1})],
    )
    _lapse(turn)

    provider = _script(("message_notify_user", {"message": "Back again"}), ("idle", {"reason": "done"}))
    with override_provider(MODEL, provider):
        result = execute_turn(turn_id=turn.pk)
    assert result is not None and result.status == TurnStatus.COMPLETED
    assert provider.calls == 2
    types = _types(session)
    assert types[:3] == ["user_message", "llm_request", "llm_response"], (
        "the answer follows the stored request"
    )
    assert types.count("llm_request") == 2 and types.count("llm_response") == 2
    assert turn_result(turn).response["messages"] == ["Back again"]
    assert result.iterations == 2


@pytest.mark.django_db
def test_a_tool_call_without_a_result_runs_once_and_a_committed_result_never_runs_again() -> None:
    """The store ends with the model's answer and its tool_call (the worker died in the tool, whose writes
    rolled back): the next worker runs that tool, then goes on; the tool that already has a result does not
    run again, and no model call is repeated."""
    user_id = uuid.uuid4()
    session = create_session(user_id=user_id)
    turn = _open(session)
    assert claim_turn(turn_id=turn.pk, worker="dead", lease=LEASE) is not None
    append_events(
        session=session,
        events=[
            NewEvent("llm_request", {"model": MODEL, "purpose": "trainer", "iteration": 1}),
            NewEvent("llm_response", {"model": MODEL, "stop_reason": "tool_use", "tokens": {"total": 10}}),
            NewEvent(
                "tool_call",
                {"tool_name": "message_notify_user", "arguments": {"message": "First"}, "call_id": "c1"},
            ),
        ],
    )
    _lapse(turn)

    provider = _script(("idle", {"reason": "done"}))
    with override_provider(MODEL, provider):
        result = execute_turn(turn_id=turn.pk)
    assert result is not None and result.status == TurnStatus.COMPLETED
    assert provider.calls == 1, "only the call after the tool: the answered one is not made again"
    types = _types(session)
    assert types[3:5] == ["tool_call", "tool_result"]
    assert types.count("tool_result") == 2 and types.count("llm_request") == 2
    told = turn_result(turn)  # what the client is answered, read from the turn's events
    assert [action.tool for action in told.actions] == ["message_notify_user", "idle"]
    assert told.response["messages"] == ["First"]


@pytest.mark.django_db
def test_a_turn_past_its_attempts_ends_in_error_with_the_reason() -> None:
    """A turn that keeps losing its workers ends after TURN_MAX_ATTEMPTS: `error` event, session `error`."""
    session = create_session(user_id=uuid.uuid4())
    turn = _open(session)
    AgentTurn.objects.filter(pk=turn.pk).update(attempts=3, status=TurnStatus.RUNNING)
    _lapse(turn)
    result = execute_turn(turn_id=turn.pk)
    assert result is not None and result.status == TurnStatus.ERROR
    assert turn_result(turn).response["messages"], "an apology the client can show"
    session.refresh_from_db()
    assert session.status == "error"
    error = AgentSessionEvent.objects.filter(session=session, event_type="error").get()
    assert error.data["fatal"] is True and "after 3 attempts" in error.data["message"]


@pytest.mark.django_db
def test_the_sweep_hands_a_dead_worker_s_turn_to_a_worker_and_it_ends() -> None:
    """`sweep_lapsed_turns` re-enqueues a running turn whose lease lapsed (here the ImmediateBackend runs it at
    once) and leaves a turn with a live lease alone."""
    session = create_session(user_id=uuid.uuid4())
    lapsed = _open(session)
    assert claim_turn(turn_id=lapsed.pk, worker="dead", lease=LEASE) is not None
    _lapse(lapsed)
    other = create_session(user_id=uuid.uuid4())
    alive = _open(other)
    assert claim_turn(turn_id=alive.pk, worker="alive", lease=LEASE) is not None

    provider = _script(("message_notify_user", {"message": "Recovered"}), ("idle", {"reason": "done"}))
    with override_provider(MODEL, provider):
        assert sweep_lapsed_turns() == 1
        assert sweep_lapsed_turns() == 0, "a turn is enqueued again at most once per lease"
    lapsed.refresh_from_db()
    alive.refresh_from_db()
    assert lapsed.status == TurnStatus.COMPLETED and lapsed.attempts == 2
    assert alive.finished_at is None and alive.worker == "alive"
    assert turn_result(lapsed).response["messages"] == ["Recovered"]


def _blocked_on_a_lock(description: str) -> None:
    """Wait until another backend of this database waits on a row lock (PostgreSQL), at most 30 s."""
    from django.db import connection

    for _ in range(600):
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
            )
            if cursor.fetchone()[0]:
                return
        time.sleep(0.05)
    raise AssertionError(f"{description} never waited on the lock")


def _in_thread(fn: Any) -> tuple[threading.Thread, list[Any]]:
    from django.db import connection

    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(fn())
        except BaseException as exc:
            outcome.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


@pytest.mark.django_db(transaction=True)
def test_a_write_racing_the_claim_of_a_new_worker_is_refused_or_seen_by_it() -> None:
    """The old worker's write and the new worker's claim meet at the session's row lock. A write that waits for
    the claim is refused (nothing stored); a claim that waits for a write commits after it, so the new worker's
    read of the store includes that write. Either way nothing is written twice."""
    from django.db import connection, transaction

    if connection.vendor != "postgresql":
        pytest.skip("row locks: PostgreSQL (SQLite serialises whole transactions)")
    session = create_session(user_id=uuid.uuid4())
    turn = _open(session)
    first = claim_turn(turn_id=turn.pk, worker="a", lease=LEASE)
    assert first is not None
    _lapse(turn)

    # 1. The claim holds the lock; the old worker's write waits for it, then is refused.
    claimed = threading.Event()

    def claim_and_hold() -> AgentTurn | None:
        with transaction.atomic():
            second = claim_turn(turn_id=turn.pk, worker="b", lease=LEASE)
            claimed.set()
            _blocked_on_a_lock("the old worker's write")
            return second

    holder, claim_outcome = _in_thread(claim_and_hold)
    assert claimed.wait(30)
    with pytest.raises(LeaseLost):
        EventSink(session=session, turn=first).record("knowledge", {"source": "late"})
    holder.join()
    second = claim_outcome[0]
    assert isinstance(second, AgentTurn) and second.worker == "b"
    assert _types(session) == ["user_message"], "the refused write stored nothing"

    # 2. The write holds the lock; the next claim (of a third worker, once b's lease lapsed) waits for it and
    #    then reads it.
    _lapse(turn)
    written = threading.Event()

    def write_and_hold() -> None:
        with transaction.atomic():
            EventSink(session=session, turn=second).record("knowledge", {"source": "in time"})
            written.set()
            _blocked_on_a_lock("the claim")

    writer, write_outcome = _in_thread(write_and_hold)
    assert written.wait(30)
    third = claim_turn(turn_id=turn.pk, worker="c", lease=LEASE)
    writer.join()
    assert write_outcome == [None]
    assert third is not None and third.attempts == 3
    assert [e.data.get("source") for e in events_after(session_id=session.pk, after_sequence=0)] == [
        "in time"
    ]


@pytest.mark.django_db
def test_a_turn_its_model_failed_reports_the_calls_it_made() -> None:
    """Two answers, then the model fails: the worker reports the turn's three model calls (what its trace and
    task result show), as the read model counts them."""
    session = create_session(user_id=uuid.uuid4())
    turn = _open(session)
    provider = ScriptedProvider(
        [
            tool_response("message_notify_user", {"message": "One"}),
            tool_response("message_notify_user", {"message": "Two"}),
            LLMError("overloaded", "busy"),
        ]
    )
    with override_provider(MODEL, provider):
        result = execute_turn(turn_id=turn.pk)
    assert result is not None and result.status == TurnStatus.ERROR
    assert result.iterations == 3 == turn_result(turn).iterations
