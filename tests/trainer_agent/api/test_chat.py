"""POST /agent/chat: a turn end to end through the API, and every way the API refuses one."""

from __future__ import annotations

import uuid

import pytest
from pytest_django import Settings

from datasources_app.models import CurrentWorkout
from sessions_app.models import AgentSession, AgentSessionEvent, AgentTurn, SessionStatus, TurnStatus
from sessions_app.services import NewEvent, create_session, finish_turn, open_turn
from tests.tools_app.workout_support import bodyweight_exercise, reps_exercise
from tests.trainer_agent.api.support import ApiUser, notify_then_idle, row_counts
from trainer_agent.llm.providers import override_provider
from trainer_agent.llm.scripted import ScriptedProvider, tool_response
from trainer_agent.llm.types import LLMError

CHAT = "/agent/chat"


def event_types(session_id: str) -> list[str]:
    return list(
        AgentSessionEvent.objects.filter(session_id=uuid.UUID(session_id))
        .order_by("sequence_number")
        .values_list("event_type", flat=True)
    )


@pytest.mark.django_db
def test_chat_runs_a_turn_and_answers_with_the_client_response(
    alice: ApiUser, scripted_model: ScriptedProvider
) -> None:
    """A message runs notify → idle and comes back as {sessionId, response, iterations}; the session completes."""
    response = alice.post_json(CHAT, {"message": "Hi coach"})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["iterations"] == 2
    assert body["response"] == {"messages": ["Here you go"], "exercises": None, "question": None}
    session = AgentSession.objects.get(pk=body["sessionId"])
    assert session.user_id == alice.user_id
    assert session.status == SessionStatus.COMPLETED
    assert not AgentTurn.objects.filter(session=session, finished_at__isnull=True).exists()
    assert event_types(body["sessionId"])[0] == "user_message"


@pytest.mark.django_db
def test_chat_continues_the_given_session(alice: ApiUser, scripted_model: ScriptedProvider) -> None:
    """With sessionId the turn is appended to that session instead of starting a new one."""
    first = alice.post_json(CHAT, {"message": "one"}).json()["sessionId"]
    second = alice.post_json(CHAT, {"message": "two", "sessionId": first})
    assert second.status_code == 200
    assert second.json()["sessionId"] == first
    assert event_types(first).count("user_message") == 2
    assert AgentSession.objects.filter(user_id=alice.user_id).count() == 1


@pytest.mark.django_db
def test_chat_with_an_explicit_model_uses_that_model(alice: ApiUser) -> None:
    """The `model` field picks the provider for the turn."""
    provider = notify_then_idle("from haiku")
    with override_provider("claude-haiku-4-5", provider):
        response = alice.post_json(CHAT, {"message": "hi", "model": "claude-haiku-4-5"})
    assert response.status_code == 200
    assert response.json()["response"]["messages"] == ["from haiku"]
    assert provider.requests[0].model == "claude-haiku-4-5"


@pytest.mark.django_db
def test_chat_answers_json_to_a_client_that_accepts_only_event_streams(
    alice: ApiUser, scripted_model: ScriptedProvider
) -> None:
    """`Accept: text/event-stream` is not refused with 406: the answer is JSON."""
    response = alice.post_json(CHAT, {"message": "hi"}, HTTP_ACCEPT="text/event-stream")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["iterations"] == 2


@pytest.mark.django_db
def test_message_with_emoji_sql_and_html_is_accepted_and_stored_verbatim(
    alice: ApiUser, scripted_model: ScriptedProvider
) -> None:
    """Unusual but legal text is data, not an attack: it is stored exactly as sent."""
    message = (
        "💪🏽 Robert'); DROP TABLE agent_sessions;-- <script>alert('x')</script> &amp; \"quotes\"\n\ttabs"
    )
    response = alice.post_json(CHAT, {"message": message})
    assert response.status_code == 200
    session_id = uuid.UUID(response.json()["sessionId"])
    stored = AgentSessionEvent.objects.get(session_id=session_id, event_type="user_message")
    assert stored.data == {"message": message}


@pytest.mark.django_db
def test_current_workout_becomes_the_users_current_workout(
    alice: ApiUser, scripted_model: ScriptedProvider
) -> None:
    """A valid currentWorkout is stored as the user's workout and added to the turn's context as knowledge."""
    workout = {"title": "Push", "exercises": [reps_exercise(1), bodyweight_exercise(2)]}
    response = alice.post_json(CHAT, {"message": "swap the push-ups", "currentWorkout": workout})
    assert response.status_code == 200, response.content
    current = CurrentWorkout.objects.get(user_id=alice.user_id)
    assert [e["exercise_name"] for e in current.workout["exercises"]] == ["Dumbbell Bench Press", "Push-Up"]
    session_id = uuid.UUID(response.json()["sessionId"])
    knowledge = AgentSessionEvent.objects.filter(session_id=session_id, event_type="knowledge")
    assert any(event.data["source"] == "current_workout_session" for event in knowledge)


@pytest.mark.django_db
def test_invalid_current_workout_is_400_naming_the_field_and_writes_nothing(alice: ApiUser) -> None:
    """A currentWorkout that fails validation is refused before anything is stored."""
    before = row_counts()
    response = alice.post_json(CHAT, {"message": "hi", "currentWorkout": {"exercises": []}})
    assert response.status_code == 400
    assert "currentWorkout" in response.json()["detail"]
    assert row_counts() == before


@pytest.mark.django_db
def test_unknown_model_is_400_listing_the_allowed_models(alice: ApiUser) -> None:
    """An unknown model id is refused with the list of ids that are accepted."""
    response = alice.post_json(CHAT, {"message": "hi", "model": "gpt-17"})
    assert response.status_code == 400
    assert "claude-haiku-4-5" in response.json()["detail"]
    assert "offline" in response.json()["detail"]


@pytest.mark.django_db
def test_another_users_session_is_404_and_nothing_is_written(alice: ApiUser, bob: ApiUser) -> None:
    """Continuing someone else's session looks exactly like continuing one that does not exist."""
    bobs = create_session(user_id=bob.user_id)
    before = row_counts()
    theirs = alice.post_json(CHAT, {"message": "hi", "sessionId": str(bobs.pk)})
    unknown = alice.post_json(CHAT, {"message": "hi", "sessionId": str(uuid.uuid4())})
    assert theirs.status_code == unknown.status_code == 404
    assert theirs.json() == unknown.json() == {"detail": "Session not found."}
    assert row_counts() == before


@pytest.mark.django_db
def test_chat_while_a_turn_is_running_is_409_and_nothing_is_written(
    alice: ApiUser, scripted_model: ScriptedProvider
) -> None:
    """A second turn in a session whose turn lock is held is refused with 409; after release it runs."""
    session = create_session(user_id=alice.user_id)
    running, _ = open_turn(
        session=session, model="offline", events=[NewEvent("user_message", {"message": "x"})]
    )
    before = row_counts()
    refused = alice.post_json(CHAT, {"message": "hi", "sessionId": str(session.pk)})
    assert refused.status_code == 409
    assert "already running" in refused.json()["detail"]
    assert row_counts() == before
    assert scripted_model.calls == 0
    finish_turn(turn=running, status=TurnStatus.COMPLETED)
    assert alice.post_json(CHAT, {"message": "hi", "sessionId": str(session.pk)}).status_code == 200


@pytest.mark.django_db
def test_model_failure_is_502_with_the_session_in_error_and_its_events_kept(alice: ApiUser) -> None:
    """An LLM error ends the turn: 502 with detail and sessionId, session status error, events stored, lock freed."""
    failing = ScriptedProvider([LLMError("overloaded", "Anthropic is overloaded", retry_after=7)])
    with override_provider("offline", failing):
        response = alice.post_json(CHAT, {"message": "hi"})
    assert response.status_code == 502
    body = response.json()
    assert "Anthropic" not in response.content.decode()  # the provider's words stay in the events
    assert body["response"]["messages"]  # an apology the client can show
    assert response["Retry-After"] == "7"
    session = AgentSession.objects.get(pk=body["sessionId"])
    assert session.status == SessionStatus.ERROR
    assert not AgentTurn.objects.filter(session=session, finished_at__isnull=True).exists()
    types = event_types(body["sessionId"])
    assert types[0] == "user_message"
    assert "llm_request" in types and types[-1] == "error"


@pytest.mark.django_db
def test_a_session_in_error_can_take_the_next_turn(alice: ApiUser) -> None:
    """After a failed turn the same session accepts a new one and completes."""
    provider = ScriptedProvider(
        [
            LLMError("timeout", "timed out"),
            tool_response("message_notify_user", {"message": "ok"}),
            tool_response("idle", {"reason": "done"}),
        ]
    )
    with override_provider("offline", provider):
        failed = alice.post_json(CHAT, {"message": "hi"})
        retried = alice.post_json(CHAT, {"message": "again", "sessionId": failed.json()["sessionId"]})
    assert failed.status_code == 502
    assert retried.status_code == 200
    assert AgentSession.objects.get(pk=failed.json()["sessionId"]).status == SessionStatus.COMPLETED


@pytest.mark.django_db
def test_turns_over_the_rate_are_429_with_retry_after(
    alice: ApiUser, bob: ApiUser, scripted_model: ScriptedProvider, settings: Settings, empty_cache: None
) -> None:
    """AGENT_TURN_RATE limits turns per user: the next one is 429 with Retry-After; other users are unaffected."""
    settings.AGENT_TURN_RATE = "2/hour"
    assert alice.post_json(CHAT, {"message": "one"}).status_code == 200
    assert alice.post_json(CHAT, {"message": "two"}).status_code == 200
    before = row_counts()
    throttled = alice.post_json(CHAT, {"message": "three"})
    assert throttled.status_code == 429
    assert 0 < int(throttled["Retry-After"]) <= 3600
    assert "throttled" in throttled.json()["detail"].lower()
    assert row_counts() == before
    assert bob.post_json(CHAT, {"message": "mine"}).status_code == 200


@pytest.mark.django_db
def test_empty_turn_rate_disables_throttling(
    alice: ApiUser, scripted_model: ScriptedProvider, settings: Settings, empty_cache: None
) -> None:
    """AGENT_TURN_RATE="" turns the limit off."""
    settings.AGENT_TURN_RATE = ""
    statuses = {alice.post_json(CHAT, {"message": str(n)}).status_code for n in range(3)}
    assert statuses == {200}


@pytest.mark.django_db
def test_a_model_without_its_api_key_is_502_saying_so(alice: ApiUser) -> None:
    """Naming a model whose provider has no API key configured ends the turn with a 502 that says which key."""
    response = alice.post_json(CHAT, {"message": "hi", "model": "claude-haiku-4-5"})
    assert response.status_code == 502
    assert "ANTHROPIC_API_KEY" in response.json()["detail"]
    assert AgentSession.objects.get(pk=response.json()["sessionId"]).status == SessionStatus.ERROR
