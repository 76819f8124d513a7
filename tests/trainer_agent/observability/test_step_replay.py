"""Step replay: the context of one trainer llm_request rebuilt from the events, breakpoints and cached prefix."""

from __future__ import annotations

import html
import re
import uuid
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from sessions_app.models import AgentSession, AgentSessionEvent, EventType
from sessions_app.services import append_event
from tests.trainer_agent.observability.support import login_staff
from trainer_agent.admin_replay import (
    context_window,
    is_trainer_request,
    rebuild_step,
    shared_prefix,
)
from trainer_agent.context import trainer_tool_specs
from trainer_agent.llm.anthropic_provider import build_anthropic_body
from trainer_agent.llm.providers import override_provider
from trainer_agent.llm.scripted import ScriptedProvider, tool_response
from trainer_agent.turns import run_turn

pytestmark = pytest.mark.django_db
MODEL = "claude-haiku-4-5"


@pytest.fixture
def staff_client(client: Client) -> Client:
    return login_staff(client)


def _replay_url(session_id: uuid.UUID, sequence: int) -> str:
    return reverse(
        "admin:sessions_app_agentsessionsummary_event_action", args=[session_id, sequence, "replay"]
    )


def _text(response: Any) -> str:
    """The page as plain text: tags dropped, whitespace collapsed, entities decoded."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())).split())


def _trainer_requests(session_id: uuid.UUID) -> list[AgentSessionEvent]:
    return [
        event
        for event in AgentSessionEvent.objects.filter(session_id=session_id, event_type=EventType.LLM_REQUEST)
        if is_trainer_request(event.event_type, event.data)
    ]


def _scripted_turns() -> tuple[AgentSession, ScriptedProvider]:
    """Two turns against a scripted model: notify → idle, then notify → idle."""
    provider = ScriptedProvider(
        [
            tool_response("message_notify_user", {"message": "Hello!"}, cache_write_tokens=900),
            tool_response("idle", {"reason": "done"}, cache_read_tokens=900),
            tool_response("message_notify_user", {"message": "Again!"}, cache_read_tokens=950),
            tool_response("idle", {"reason": "done"}, cache_read_tokens=990),
        ]
    )
    user_id = uuid.uuid4()
    with override_provider(MODEL, provider):
        first = run_turn(user_id=user_id, message="hello coach", model=MODEL)
        run_turn(user_id=user_id, message="and again", session_id=first.session_id, model=MODEL)
    return AgentSession.objects.get(pk=first.session_id), provider


def _context_events(session: AgentSession) -> list[AgentSessionEvent]:
    return list(
        AgentSessionEvent.objects.filter(session=session)
        .exclude(event_type__in=(EventType.LLM_REQUEST, EventType.LLM_RESPONSE, EventType.ERROR))
        .order_by("sequence_number")
    )


def test_rebuilt_requests_equal_what_the_model_received() -> None:
    """For every trainer request, the rebuilt system prompt, user data, messages and tools are those the model got."""
    session, provider = _scripted_turns()
    requests = _trainer_requests(session.pk)
    assert len(requests) == len(provider.requests) == 4
    events = _context_events(session)
    for event, sent in zip(requests, provider.requests, strict=True):
        step = rebuild_step(session=session, request_event=event, events=events)
        assert step.problem is None and step.request is not None
        assert step.request.messages == sent.messages
        assert (step.request.system_prompt, step.request.user_data_xml) == (
            sent.system_prompt,
            sent.user_data_xml,
        )
        assert step.request.tools == sent.tools
        assert step.body == build_anthropic_body(sent)


def test_replay_page_shows_the_context_and_four_breakpoints(staff_client: Client) -> None:
    """Tools, system prompt, user data XML and messages, with the 4 cache_control breakpoints where the body has them."""
    session, provider = _scripted_turns()
    second = _trainer_requests(session.pk)[1]
    response = staff_client.get(_replay_url(session.pk, second.sequence_number))
    assert response.status_code == 200
    page = html.unescape(response.content.decode())
    last_tool = trainer_tool_specs()[-1].name
    assert f"cache breakpoint 1: cache_control on the last tool ({last_tool})" in page
    assert "cache breakpoint 2: cache_control on the system prompt block" in page
    assert "cache breakpoint 3: cache_control on the user data block" in page
    assert page.count("cache breakpoint 4: cache_control on the last content block") == 1
    sent = provider.requests[1]
    assert sent.user_data_xml in page
    assert f"4 · Messages ({len(sent.messages)})" in page
    assert "hello coach" in page and "Hello!" in page
    assert "fetched fresh, so it reflects today's data" in page
    assert '"tool_choice": {\n    "type": "any"\n  }' in page  # the exact wire body


def test_replay_marks_the_prefix_shared_with_the_previous_request(staff_client: Client) -> None:
    """Within a turn the whole previous request is a prefix: tools, system, user data and all its messages."""
    session, provider = _scripted_turns()
    second = _trainer_requests(session.pk)[1]
    page = _text(staff_client.get(_replay_url(session.pk, second.sequence_number)))
    previous_messages = len(provider.requests[0].messages)
    assert f"messages: the first {previous_messages} of {len(provider.requests[1].messages)}" in page
    assert "the cache could serve up to breakpoint 4" in page
    assert "cacheable prefix ends here (breakpoint 4" in page
    assert page.count("in previous request") == previous_messages
    # What the provider reported for this request (the scripted response's usage).
    assert "cached 900" in page


def test_first_request_has_nothing_to_share(staff_client: Client) -> None:
    """The session's first trainer request says nothing from this session was cached yet."""
    session, _ = _scripted_turns()
    first = _trainer_requests(session.pk)[0]
    page = staff_client.get(_replay_url(session.pk, first.sequence_number)).content.decode()
    assert "The first trainer request of the session" in page
    assert "← previous step" not in page and "next step →" in page


def test_replay_refuses_events_that_are_not_trainer_requests(staff_client: Client) -> None:
    """A tool call, an initializer request, an unknown session or an unknown action answer 404."""
    session, _ = _scripted_turns()
    tool_call = AgentSessionEvent.objects.filter(session=session, event_type=EventType.TOOL_CALL).first()
    assert tool_call is not None
    assert staff_client.get(_replay_url(session.pk, tool_call.sequence_number)).status_code == 404
    initializer = append_event(
        session=session,
        event_type=EventType.LLM_REQUEST,
        data={"model": "gpt-4o-mini", "purpose": "initializer", "prompt": "…", "estimated_tokens": 10},
    )
    assert staff_client.get(_replay_url(session.pk, initializer.sequence_number)).status_code == 404
    assert staff_client.get(_replay_url(uuid.uuid4(), 1)).status_code == 404
    other = reverse("admin:sessions_app_agentsessionsummary_event_action", args=[session.pk, 1, "nothing"])
    assert staff_client.get(other).status_code == 404


def _body(messages: list[dict[str, Any]], user_data: str = "<user_data/>") -> dict[str, Any]:
    return {
        "tools": [
            {"name": "idle", "description": "", "input_schema": {}, "cache_control": {"type": "ephemeral"}}
        ],
        "system": [{"type": "text", "text": "prompt"}, {"type": "text", "text": user_data}],
        "messages": messages,
    }


def _user(*texts: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text} for text in texts]}


def test_shared_prefix_stops_at_the_first_changed_layer() -> None:
    """Merged content in an old message limits the cache to breakpoint 3; changed user data to breakpoint 2."""
    previous = _body([_user("hi")])
    grown = _body(
        [_user("hi"), {"role": "assistant", "content": [{"type": "text", "text": "yo"}]}, _user("x")]
    )
    assert shared_prefix(grown, previous).breakpoint == 4
    assert shared_prefix(grown, previous).messages == 1

    merged = _body([_user("hi", "<knowledge/>")])
    result = shared_prefix(merged, previous)
    assert (result.breakpoint, result.messages) == (3, 0)
    assert "changed since the previous request" in result.notes[0]

    assert shared_prefix(_body([_user("hi")], user_data="<other/>"), previous).breakpoint == 2


def test_context_window_starts_at_the_checkpoint_in_force_then() -> None:
    """A checkpoint after the request does not hide the events the request saw; one before it does."""

    def event(sequence: int, kind: str) -> AgentSessionEvent:
        return AgentSessionEvent(sequence_number=sequence, event_type=kind, data={})

    events = [
        event(0, "user_message"),
        event(3, "tool_call"),
        event(5, "checkpoint"),
        event(6, "user_message"),
    ]
    assert [e.sequence_number for e in context_window(events, up_to=3, session_start=5)] == [0, 3]
    assert [e.sequence_number for e in context_window(events, up_to=6, session_start=5)] == [5, 6]
    assert [e.sequence_number for e in context_window(events, up_to=6, session_start=0)] == [5, 6]


def test_requests_to_other_providers_say_so(staff_client: Client) -> None:
    """A request to an OpenAI model is shown in Anthropic's shape with a note; Anthropic requests get none."""
    session, _ = _scripted_turns()
    first = _trainer_requests(session.pk)[0]
    assert (
        "obs-provider-note"
        not in staff_client.get(_replay_url(session.pk, first.sequence_number)).content.decode()
    )
    openai_request = append_event(
        session=session,
        event_type=EventType.LLM_REQUEST,
        data={
            "model": "gpt-4o-mini",
            "purpose": "trainer",
            "context_sequence": first.data["context_sequence"],
        },
    )
    page = _text(staff_client.get(_replay_url(session.pk, openai_request.sequence_number)))
    assert "gpt-4o-mini is served by OpenAI's chat completions" in page
    assert "cache breakpoint 4" in page
