import uuid

import pytest

from sessions_app.models import AgentSession, AgentSessionEvent
from trainer_agent.llm.providers import override_provider
from trainer_agent.llm.scripted import ScriptedProvider, tool_response
from trainer_agent.loop import run_turn


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
    assert types.count("llm_request") == 2 and types.count("tool_result") == 2
