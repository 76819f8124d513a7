"""/agent/sessions: list, create, read with recent actions, delete; only ever the caller's own sessions."""

from __future__ import annotations

import uuid

import pytest

from sessions_app.models import AgentSession, AgentSessionEvent, AgentTurn, EventType
from sessions_app.services import NewEvent, append_event, create_session, end_session, open_turn
from tests.trainer_agent.api.support import ApiUser, row_counts

SESSIONS = "/agent/sessions"
SESSION_FIELDS = {
    "id",
    "user_id",
    "created_at",
    "updated_at",
    "context_start_sequence",
    "total_tokens",
    "cached_tokens",
    "total_cost_cents",
    "status",
    "metadata",
}


@pytest.mark.django_db
def test_create_returns_201_with_a_new_active_session(alice: ApiUser) -> None:
    """POST with no body starts an active session at context sequence 0, in seed field names."""
    response = alice.send("POST", SESSIONS, b"", content_type="")
    assert response.status_code == 201
    session = response.json()["session"]
    assert set(session) == SESSION_FIELDS
    assert session["status"] == "active"
    assert session["context_start_sequence"] == 0
    assert session["user_id"] == str(alice.user_id)
    assert AgentSession.objects.filter(pk=session["id"], user_id=alice.user_id).exists()


@pytest.mark.django_db
def test_create_accepts_an_empty_object_and_refuses_fields(alice: ApiUser) -> None:
    """`{}` is the same as no body; any field is 400 and creates nothing."""
    assert alice.post_json(SESSIONS, {}).status_code == 201
    before = row_counts()
    refused = alice.post_json(SESSIONS, {"metadata": {"x": 1}})
    assert refused.status_code == 400
    assert "detail" in refused.json()
    assert row_counts() == before


@pytest.mark.django_db
def test_list_returns_only_the_callers_sessions_newest_first(alice: ApiUser, bob: ApiUser) -> None:
    """The list holds the caller's sessions, newest first, never another user's."""
    mine = [create_session(user_id=alice.user_id) for _ in range(3)]
    create_session(user_id=bob.user_id)
    response = alice.get(SESSIONS)
    assert response.status_code == 200
    ids = [s["id"] for s in response.json()["sessions"]]
    assert ids == [str(s.pk) for s in reversed(mine)]


@pytest.mark.django_db
def test_list_defaults_to_10_and_honours_limit(alice: ApiUser) -> None:
    """Without limit (or with an empty one) at most 10 sessions come back; limit=N returns N."""
    for _ in range(12):
        create_session(user_id=alice.user_id)
    assert len(alice.get(SESSIONS).json()["sessions"]) == 10
    assert len(alice.get(SESSIONS, data={"limit": ""}).json()["sessions"]) == 10
    assert len(alice.get(SESSIONS, data={"limit": 3}).json()["sessions"]) == 3
    assert len(alice.get(SESSIONS, data={"limit": 100}).json()["sessions"]) == 12


@pytest.mark.parametrize("limit", ["0", "101", "-1", "abc", "1.5", "1e2", "9" * 50, "true"])
@pytest.mark.django_db
def test_list_with_a_bad_limit_is_400_naming_limit(alice: ApiUser, limit: str) -> None:
    """limit must be an integer from 1 to 100."""
    response = alice.get(SESSIONS, data={"limit": limit})
    assert response.status_code == 400
    assert response.json()["detail"].startswith("limit:")


@pytest.mark.django_db
def test_detail_returns_the_session_and_its_recent_actions(alice: ApiUser) -> None:
    """GET by id gives {session, recentActions}: tool_call/tool_result events only, oldest first."""
    session = create_session(user_id=alice.user_id)
    append_event(session=session, event_type="user_message", data={"message": "hi"})
    append_event(
        session=session, event_type="tool_call", data={"tool_name": "idle", "arguments": {}, "call_id": "c1"}
    )
    append_event(
        session=session,
        event_type="tool_result",
        data={"tool_name": "idle", "result": {}, "success": True, "call_id": "c1"},
    )
    response = alice.get(f"{SESSIONS}/{session.pk}")
    assert response.status_code == 200
    body = response.json()
    assert body["session"]["id"] == str(session.pk)
    actions = body["recentActions"]
    assert [a["event_type"] for a in actions] == ["tool_call", "tool_result"]
    assert [a["sequence_number"] for a in actions] == [1, 2]
    assert actions[0]["session_id"] == str(session.pk)
    assert actions[0]["data"]["call_id"] == "c1"


@pytest.mark.django_db
def test_detail_hides_the_old_turn_lock_bookkeeping(alice: ApiUser) -> None:
    """Metadata of sessions from before turns had their own table is returned without the old turn lock."""
    session = create_session(
        user_id=alice.user_id, metadata={"source": "app", "turn_running_since": "2026-11-01T00:00:00+00:00"}
    )
    metadata = alice.get(f"{SESSIONS}/{session.pk}").json()["session"]["metadata"]
    assert metadata == {"source": "app"}


@pytest.mark.django_db
def test_detail_shows_usage_without_its_bookkeeping(alice: ApiUser) -> None:
    """The session's usage is shown; the position up to which it was summed is the server's own."""
    session = create_session(user_id=alice.user_id)
    append_event(
        session=session,
        event_type=EventType.LLM_RESPONSE,
        data={"tokens": {"prompt": 10, "completion": 5, "total": 15}, "cost_cents": 0.1},
    )
    end_session(session=session)
    assert "usage_counted_through" in AgentSession.objects.get(pk=session.pk).metadata
    metadata = alice.get(f"{SESSIONS}/{session.pk}").json()["session"]["metadata"]
    assert set(metadata) == {"usage"}
    assert metadata["usage"]["total_tokens"] == 15


@pytest.mark.parametrize("method", ["get", "delete"])
@pytest.mark.django_db
def test_another_users_session_is_404_like_an_unknown_one(alice: ApiUser, bob: ApiUser, method: str) -> None:
    """GET and DELETE of someone else's session answer exactly like a session that does not exist."""
    bobs = create_session(user_id=bob.user_id)
    before = row_counts()
    theirs = getattr(alice, method)(f"{SESSIONS}/{bobs.pk}")
    unknown = getattr(alice, method)(f"{SESSIONS}/{uuid.uuid4()}")
    assert theirs.status_code == unknown.status_code == 404
    assert theirs.json() == unknown.json() == {"detail": "Session not found."}
    assert row_counts() == before


@pytest.mark.parametrize("bad_id", ["not-a-uuid", "123", "%F0%9F%92%A9", "'%20OR%201=1--", "%3Cscript%3E"])
@pytest.mark.parametrize("method", ["get", "delete"])
@pytest.mark.django_db
def test_a_non_uuid_session_id_is_a_json_404(alice: ApiUser, method: str, bad_id: str) -> None:
    """Ids that are not UUIDs are 404 with the API's JSON body, never 500 or an HTML page."""
    response = getattr(alice, method)(f"{SESSIONS}/{bad_id}")
    assert response.status_code == 404
    assert response.json() == {"detail": "Session not found."}


@pytest.mark.django_db
def test_delete_removes_the_session_and_its_events(alice: ApiUser) -> None:
    """DELETE answers 204 and the session and all its events are gone."""
    session = create_session(user_id=alice.user_id)
    append_event(session=session, event_type="user_message", data={"message": "hi"})
    response = alice.delete(f"{SESSIONS}/{session.pk}")
    assert response.status_code == 204
    assert response.content == b""
    assert not AgentSession.objects.filter(pk=session.pk).exists()
    assert not AgentSessionEvent.objects.filter(session_id=session.pk).exists()


@pytest.mark.django_db
def test_delete_while_a_turn_is_running_is_409(alice: ApiUser) -> None:
    """A session whose turn is still running cannot be deleted from under it."""
    session = create_session(user_id=alice.user_id)
    open_turn(session=session, model="offline", events=[NewEvent("user_message", {"message": "x"})])
    response = alice.delete(f"{SESSIONS}/{session.pk}")
    assert response.status_code == 409
    assert AgentSession.objects.filter(pk=session.pk).exists()
    assert AgentTurn.objects.filter(session=session).exists()


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", SESSIONS),
        ("post", SESSIONS),
        ("get", f"{SESSIONS}/00000000-0000-4000-8000-000000000000"),
        ("delete", f"{SESSIONS}/x"),
    ],
)
@pytest.mark.django_db
def test_session_endpoints_need_a_token(alice: ApiUser, method: str, path: str) -> None:
    """Without a token every session endpoint is 401 with the seed's body."""
    response = getattr(alice.client, method)(path)
    assert response.status_code == 401
    assert response.json() == {"error": "Access token required"}
