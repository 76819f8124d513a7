"""The loop's writes: the next request is built under the session's lock from what the turn holds, yet it
shows every change made meanwhile, and a failure leaves nothing half-written (docs/architecture.md "The turn")."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from datasources_app.models import Location, UserSettings
from datasources_app.services import set_location_equipment, upsert_settings
from sessions_app.models import AgentSession, AgentSessionEvent, TurnStatus
from sessions_app.services import NewEvent, append_events
from trainer_agent.llm.providers import override_provider
from trainer_agent.llm.scripted import ScriptedProvider, tool_response
from trainer_agent.llm.types import LLMRequest, LLMResponse
from trainer_agent.loop import TurnError
from trainer_agent.turns import run_turn

MODEL = "claude-haiku-4-5"


class Meanwhile:
    """A scripted model that, while it answers its `at`-th call, lets something else happen (the app changes
    the user's settings, another writer stores an event): the next request must show it."""

    def __init__(self, steps: list[LLMResponse], *, at: int, action: Callable[[], object]) -> None:
        self.inner = ScriptedProvider(steps)
        self.at = at
        self.action = action
        self.requests: list[LLMRequest] = []

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        if len(self.requests) == self.at:
            self.action()
        return self.inner.complete(request)


def _notes(count: int) -> list[LLMResponse]:
    return [
        *(tool_response("message_notify_user", {"message": f"Note {n}"}) for n in range(count)),
        tool_response("idle", {"reason": "done"}),
    ]


def _turn(demo_user: uuid.UUID, provider: Any) -> AgentSession:
    with override_provider(MODEL, provider):
        result = run_turn(user_id=demo_user, message="hello", model=MODEL)
    return AgentSession.objects.get(pk=result.session_id)


def test_settings_changed_by_the_app_during_a_turn_show_in_its_very_next_request(
    demo_user: uuid.UUID,
) -> None:
    """The user switches to pounds while the model answers: the next request's user data says lb."""
    provider = Meanwhile(_notes(2), at=2, action=lambda: upsert_settings(user_id=demo_user, weight_unit="lb"))
    _turn(demo_user, provider)
    assert [("Weight: lb" in r.user_data_xml) for r in provider.requests] == [False, False, True]


def test_equipment_changed_during_a_turn_shows_in_the_next_request(demo_user: uuid.UUID) -> None:
    """Equipment removed from the current location while the model answers is gone from the next request."""
    home = Location.objects.get(user_id=demo_user, is_current=True)
    provider = Meanwhile(
        _notes(2), at=2, action=lambda: set_location_equipment(location=home, equipment_slugs=["bench"])
    )
    _turn(demo_user, provider)
    before, during, after = (r.user_data_xml for r in provider.requests)
    assert "Dumbbells" in before and "Dumbbells" in during
    assert "Dumbbells" not in after.split("<other_locations>")[0]


def test_a_change_by_the_turn_s_own_tool_shows_in_the_next_request(demo_user: uuid.UUID) -> None:
    """`set_units` changes the settings and the request stored with its result already says lb."""
    provider = Meanwhile(
        [tool_response("set_units", {"weight": "lb"}), *_notes(1)], at=0, action=lambda: None
    )
    _turn(demo_user, provider)
    assert [("Weight: lb" in r.user_data_xml) for r in provider.requests] == [False, True, True]


def test_an_event_another_writer_stores_during_a_turn_is_in_its_next_request(demo_user: uuid.UUID) -> None:
    """Knowledge stored by another writer (a week being prepared) while the model answers reaches the model."""
    sessions: list[AgentSession] = []

    def store_knowledge() -> None:
        session = AgentSession.objects.get(user_id=demo_user, status="active")
        sessions.append(session)
        append_events(
            session=session,
            events=[NewEvent("knowledge", {"source": "week", "params": {}, "data": "Tuesday is ready."})],
        )

    provider = Meanwhile(_notes(2), at=2, action=store_knowledge)
    _turn(demo_user, provider)
    mentions = ["Tuesday is ready." in str(r.messages) for r in provider.requests]
    assert mentions == [False, False, True]


def test_a_request_that_cannot_be_built_rolls_back_the_tool_s_writes_and_its_result(
    demo_user: uuid.UUID, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tool's writes, its result and the next request share one transaction: when the request cannot be
    built, none of them is stored, so a next worker would run the tool again from the stored call."""
    import trainer_agent.loop as loop_module

    real = loop_module.build_locked_context
    builds = []

    def failing_second_build(**kwargs: Any) -> Any:
        builds.append(kwargs)
        if len(builds) == 2:
            raise RuntimeError("the build failed")
        return real(**kwargs)

    monkeypatch.setattr(loop_module, "build_locked_context", failing_second_build)
    provider = ScriptedProvider([tool_response("set_units", {"weight": "lb"}), *_notes(1)])
    with override_provider(MODEL, provider), pytest.raises(TurnError):
        run_turn(user_id=demo_user, message="hello", model=MODEL)
    assert UserSettings.objects.get(user_id=demo_user).weight_unit == "kg", "the tool's write rolled back"
    session = AgentSession.objects.get(user_id=demo_user)
    assert session.status == "error"
    types = list(
        AgentSessionEvent.objects.filter(session=session)
        .order_by("sequence_number")
        .values_list("event_type", flat=True)
    )
    assert types[-3:] == ["llm_response", "tool_call", "error"], "the call without a result, then the error"
    assert "tool_result" not in types


def test_a_notify_iteration_stores_the_answer_the_call_the_result_and_the_next_request_in_order(
    demo_user: uuid.UUID,
) -> None:
    """A tool that writes nothing commits with its answer; the transcript reads exactly as before."""
    session = _turn(demo_user, ScriptedProvider(_notes(2)))
    types = list(
        AgentSessionEvent.objects.filter(session=session)
        .order_by("sequence_number")
        .values_list("event_type", flat=True)
    )
    iteration = ["llm_request", "llm_response", "tool_call", "tool_result"]
    assert types[-12:] == [*iteration, *iteration, *iteration]
    assert session.turns.get().status == TurnStatus.COMPLETED
