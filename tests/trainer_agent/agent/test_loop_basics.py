import datetime
import time
import uuid

import pytest
from django.utils import timezone

from sessions_app.models import AgentSession, AgentSessionEvent
from trainer_agent.llm.providers import override_provider
from trainer_agent.llm.scripted import ScriptedProvider, tool_response
from trainer_agent.llm.types import LLMRequest, LLMResponse
from trainer_agent.turns import run_turn


@pytest.mark.django_db
def test_notify_then_idle_completes_the_turn() -> None:
    """A scripted notify → idle turn records the full event sequence and ends completed."""
    provider = ScriptedProvider(
        [
            tool_response("message_notify_user", {"message": "Hi there"}),
            tool_response("idle", {"reason": "done"}),
        ]
    )
    user_id = uuid.uuid4()
    with override_provider("claude-haiku-4-5", provider):
        result = run_turn(user_id=user_id, message="hello", model="claude-haiku-4-5")
    assert result.iterations == 2
    assert [a.tool for a in result.actions] == ["message_notify_user", "idle"]
    assert result.response["messages"] == ["Hi there"]
    session = AgentSession.objects.get(pk=result.session_id)
    assert session.status == "completed"
    assert session.total_tokens > 0
    types = list(AgentSessionEvent.objects.filter(session=session).values_list("event_type", flat=True))
    assert types[0] == "user_message"
    assert types.count("llm_request") == 3 and types.count("tool_result") == 2  # the initializer's and two


class _Timed:
    """Delegates to a provider and notes when each call started and returned."""

    def __init__(self, inner: ScriptedProvider) -> None:
        self.inner = inner
        self.calls: list[tuple[datetime.datetime, datetime.datetime]] = []

    def complete(self, request: LLMRequest) -> LLMResponse:
        started = timezone.now()
        time.sleep(0.01)  # a model call takes time; the timeline must show it between request and answer
        response = self.inner.complete(request)
        self.calls.append((started, timezone.now()))
        return response


@pytest.mark.django_db
def test_each_model_request_is_stamped_when_it_was_sent_and_its_answer_when_it_came_back() -> None:
    """The request is committed before the call (a crash shows what was in flight) and the answer after it:
    staff see request, wait, answer, in that order, in time and in sequence."""
    provider = _Timed(
        ScriptedProvider(
            [
                tool_response("message_notify_user", {"message": "Hi"}),
                tool_response("idle", {"reason": "done"}),
            ]
        )
    )
    with override_provider("claude-haiku-4-5", provider):
        result = run_turn(user_id=uuid.uuid4(), message="hello", model="claude-haiku-4-5")
    events = list(AgentSessionEvent.objects.filter(session_id=result.session_id).order_by("sequence_number"))
    trainer = [e for e in events if e.data.get("purpose", "trainer") == "trainer"]
    requests = [e for e in trainer if e.event_type == "llm_request"]
    answers = [e for e in trainer if e.event_type == "llm_response"]
    assert len(requests) == len(answers) == len(provider.calls) == 2
    for request, answer, (started, returned) in zip(requests, answers, provider.calls, strict=True):
        assert request.sequence_number < answer.sequence_number
        assert request.timestamp <= started < returned <= answer.timestamp
