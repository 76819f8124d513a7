"""Requests /agent/stream and /agent/sessions/<id>/events refuse before streaming (in-process, Django test client).

Every refusal is a 4xx JSON answer and leaves every table as it was: no session, no event, no turn.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import jwt
import pytest
from django.core.cache import cache
from pytest_django import Settings

from sessions_app.models import AgentTurn
from sessions_app.services import NewEvent, create_session, open_turn
from tests.trainer_agent.api.support import JWT_SECRET, ApiUser, make_user, row_counts

STREAM = "/agent/stream"


@pytest.fixture(autouse=True)
def _stream_settings(settings: Settings) -> None:
    settings.SUPABASE_JWT_SECRET = JWT_SECRET
    settings.SUPABASE_PUBLIC_URL = ""
    settings.AGENT_TURN_RATE = "1000/min"


@pytest.fixture
def alice() -> ApiUser:
    return make_user()


def all_rows() -> dict[str, int]:
    return {**row_counts(), "agent_turns": AgentTurn.objects.count()}


def token_with(**claims: Any) -> str:
    now = int(time.time())
    payload = {"sub": str(uuid.uuid4()), "aud": "authenticated", "iat": now, "exp": now + 600, **claims}
    return jwt.encode(payload, JWT_SECRET, algorithm="HS256")


def deep(levels: int) -> str:
    return '{"message": "hi", "currentWorkout": ' + '{"a": ' * levels + "1" + "}" * levels + "}"


# (case, raw body, content type, expected status, text the detail must contain)
BODY_CASES: list[tuple[str, bytes, str, int, str]] = [
    ("empty body", b"", "application/json", 400, "The request body is empty"),
    ("malformed JSON", b'{"message": "hi"', "application/json", 400, "Malformed JSON"),
    ("trailing garbage", b'{"message": "hi"} x', "application/json", 400, "Malformed JSON"),
    (
        "NaN",
        b'{"message": "hi", "currentWorkout": {"exercises": [{"sets": NaN}]}}',
        "application/json",
        400,
        "NaN",
    ),
    ("byte order mark", '\ufeff{"message": "hi"}'.encode(), "application/json", 400, "byte order mark"),
    ("not UTF-8", b'{"message": "caf\xe9"}', "application/json", 400, "not valid utf-8"),
    ("deeply nested", deep(100).encode(), "application/json", 400, "nested deeper"),
    ("absurdly nested", ("[" * 30_000 + "]" * 30_000).encode(), "application/json", 400, "nested deeper"),
    ("null body", b"null", "application/json", 400, "must be a JSON object"),
    ("array body", b'[{"message": "hi"}]', "application/json", 400, "must be a JSON object"),
    ("string body", b'"hi"', "application/json", 400, "must be a JSON object"),
    ("no message", b"{}", "application/json", 400, "message: This field is required."),
    ("null message", b'{"message": null}', "application/json", 400, "message: This field is required."),
    ("number message", b'{"message": 7}', "application/json", 400, "message: must be a string, got a number"),
    ("boolean message", b'{"message": true}', "application/json", 400, "got a boolean"),
    ("array message", b'{"message": ["hi"]}', "application/json", 400, "got an array"),
    ("blank message", b'{"message": " \\n\\t "}', "application/json", 400, "must not be empty"),
    ("control characters", b'{"message": "hi\\u0007there"}', "application/json", 400, "control characters"),
    ("NUL character", b'{"message": "hi\\u0000there"}', "application/json", 400, "U+0000"),
    (
        "message too long",
        json.dumps({"message": "x" * 8001}).encode(),
        "application/json",
        400,
        "at most 8000",
    ),
    (
        "unknown field",
        b'{"message": "hi", "admin": true}',
        "application/json",
        400,
        "unknown field(s): admin",
    ),
    (
        "session id number",
        b'{"message": "hi", "sessionId": 12}',
        "application/json",
        400,
        "sessionId: must be a UUID string",
    ),
    (
        "session id not a uuid",
        b'{"message": "hi", "sessionId": "1; DROP TABLE agent_sessions"}',
        "application/json",
        400,
        "sessionId: must be a UUID.",
    ),
    (
        "unknown model",
        b'{"message": "hi", "model": "gpt-5-ultra"}',
        "application/json",
        400,
        "model: must be one of",
    ),
    ("model number", b'{"message": "hi", "model": 4}', "application/json", 400, "model: must be one of"),
    (
        "workout array",
        b'{"message": "hi", "currentWorkout": []}',
        "application/json",
        400,
        "currentWorkout: must be an object",
    ),
    (
        "workout without exercises",
        b'{"message": "hi", "currentWorkout": {"title": "x"}}',
        "application/json",
        400,
        "currentWorkout.exercises",
    ),
    ("form body", b"message=hi", "application/x-www-form-urlencoded", 415, "Unsupported media type"),
    ("text body", b'{"message": "hi"}', "text/plain", 415, "Unsupported media type"),
    ("no content type", b'{"message": "hi"}', "", 415, "Missing Content-Type"),
    (
        "over 64 KB",
        json.dumps({"message": "x" * 70_000}).encode(),
        "application/json",
        413,
        "Request body too large",
    ),
]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("case", "raw", "content_type", "status", "detail"), BODY_CASES, ids=[c[0] for c in BODY_CASES]
)
def test_bad_bodies_are_refused_before_anything_is_written(
    alice: ApiUser, case: str, raw: bytes, content_type: str, status: int, detail: str
) -> None:
    """Malformed, mistyped, oversized or non-JSON bodies get a 4xx {"detail"} naming the problem; no row written."""
    before = all_rows()
    response = alice.send("POST", STREAM, raw, content_type=content_type, HTTP_ACCEPT="text/event-stream")
    assert response.status_code == status
    assert response["Content-Type"] == "application/json"
    assert detail in response.json()["detail"]
    assert all_rows() == before


AUTH_CASES: list[tuple[str, str | None, str]] = [
    ("no header", None, "Access token required"),
    ("empty bearer", "Bearer ", "Access token required"),
    ("basic scheme", "Basic dXNlcjpwYXNz", "Access token required"),
    ("three parts", "Bearer a b", "Access token required"),
    ("not a JWT", "Bearer not-a-token", "Invalid token"),
    (
        "wrong secret",
        "Bearer "
        + jwt.encode(
            {"sub": str(uuid.uuid4()), "aud": "authenticated", "exp": 4102444800}, "x" * 40, algorithm="HS256"
        ),
        "Invalid token",
    ),
    ("expired", "Bearer " + token_with(exp=int(time.time()) - 3600), "Invalid token"),
    ("wrong audience", "Bearer " + token_with(aud="anon"), "Invalid token"),
    ("subject not a uuid", "Bearer " + token_with(sub="<script>alert(1)</script>"), "Invalid token"),
    (
        "alg none",
        "Bearer "
        + jwt.encode(
            {"sub": str(uuid.uuid4()), "aud": "authenticated", "exp": 4102444800}, "", algorithm="none"
        ),
        "Invalid token",
    ),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("case", "authorization", "error"), AUTH_CASES, ids=[c[0] for c in AUTH_CASES])
def test_bad_tokens_get_the_seed_401_bodies(
    client: Any, case: str, authorization: str | None, error: str
) -> None:
    """Missing or untrustworthy tokens are 401 {"error": ...} with WWW-Authenticate, before the body is read."""
    before = all_rows()
    headers = {"Authorization": authorization} if authorization is not None else None
    response = client.post(
        STREAM, data=b'{"message": "hi"}', content_type="application/json", headers=headers
    )
    assert response.status_code == 401
    assert response.json() == {"error": error}
    assert response["WWW-Authenticate"] == "Bearer"
    assert all_rows() == before


@pytest.mark.django_db
@pytest.mark.parametrize(
    "message",
    ["' OR 1=1; --", "<script>alert('x')</script>", "💪🏽 " * 10],
    ids=["sql", "html", "emoji"],
)
def test_odd_but_valid_messages_reach_the_session_check(alice: ApiUser, message: str) -> None:
    """SQL, HTML and emoji are just text: the request gets as far as the session check (404 here), no further."""
    before = all_rows()
    response = alice.post_json(STREAM, {"message": message, "sessionId": str(uuid.uuid4())})
    assert response.status_code == 404
    assert response.json() == {"detail": "Session not found."}
    assert all_rows() == before


# Committed: the stream admits requests in its own threads, which see only committed rows.
@pytest.mark.django_db(transaction=True)
def test_someone_elses_session_is_not_found(alice: ApiUser) -> None:
    """A session id of another user is answered exactly like an unknown one, and the session is untouched."""
    other = create_session(user_id=uuid.uuid4())
    before = all_rows()
    response = alice.post_json(STREAM, {"message": "hello", "sessionId": str(other.pk)})
    assert response.status_code == 404
    assert response.json() == {"detail": "Session not found."}
    assert all_rows() == before


@pytest.mark.django_db
def test_running_turn_is_a_conflict(alice: ApiUser) -> None:
    """While a turn holds the session's lock, another stream request is 409 and writes nothing."""
    session = create_session(user_id=alice.user_id)
    open_turn(session=session, model="offline", events=[NewEvent("user_message", {"message": "x"})])
    before = all_rows()
    response = alice.post_json(STREAM, {"message": "hello", "sessionId": str(session.pk)})
    assert response.status_code == 409
    assert "already running" in response.json()["detail"]
    assert all_rows() == before


@pytest.mark.django_db
def test_throttled_user_gets_429_with_retry_after(alice: ApiUser, settings: Settings) -> None:
    """Over the per-user turn rate the stream is refused with 429 and Retry-After, like /agent/chat."""
    settings.AGENT_TURN_RATE = "1/min"
    cache.clear()
    try:
        assert alice.post_json(STREAM, {"message": ""}).status_code == 400  # counted, as in /agent/chat
        before = all_rows()
        response = alice.post_json(STREAM, {"message": "hello"})
        assert response.status_code == 429
        assert int(response["Retry-After"]) >= 1
        assert response.json()["detail"].startswith("Request was throttled.")
        assert all_rows() == before
    finally:
        cache.clear()


@pytest.mark.django_db
@pytest.mark.parametrize("method", ["get", "put", "delete"])
def test_only_post_starts_a_stream(alice: ApiUser, method: str) -> None:
    """Other methods are 405 with Allow: POST."""
    response = getattr(alice.client, method)(STREAM, **alice.auth)
    assert response.status_code == 405
    assert response["Allow"] == "POST"


@pytest.mark.django_db
def test_stream_needs_no_csrf_token(alice: ApiUser) -> None:
    """Token-authenticated POSTs pass without a CSRF cookie even when the client enforces CSRF checks."""
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    response = strict.post(
        STREAM,
        data=b"{}",
        content_type="application/json",
        headers={"Authorization": f"Bearer {alice.token}"},
    )
    assert response.status_code == 400  # reached body validation, not a 403 CSRF failure


# --- the replay endpoint ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_events_endpoint_refusals(alice: ApiUser, client: Any) -> None:
    """401 without a token, 404 for unknown/foreign/malformed ids, 400 for a foreign Last-Event-ID, 405 for POST."""
    own = create_session(user_id=alice.user_id)
    foreign = create_session(user_id=uuid.uuid4())
    assert client.get(f"/agent/sessions/{own.pk}/events").json() == {"error": "Access token required"}
    for session_id in (uuid.uuid4(), foreign.pk, "not-a-uuid"):
        response = alice.get(f"/agent/sessions/{session_id}/events")
        assert response.status_code == 404
        assert response.json() == {"detail": "Session not found."}
    response = alice.get(f"/agent/sessions/{own.pk}/events", HTTP_LAST_EVENT_ID=f"session-{foreign.pk}:1")
    assert response.status_code == 400
    assert "Last-Event-ID" in response.json()["detail"]
    response = alice.client.post(
        f"/agent/sessions/{own.pk}/events", headers={"Authorization": f"Bearer {alice.token}"}
    )
    assert response.status_code == 405
    assert response["Allow"] == "GET"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "raw", ["\u00b2", "\u0663", "\uff11", "1\u00b2", "-1", "+1", "1 2", "1234567890", "1.0", "0x1"]
)
def test_last_event_id_that_is_not_ascii_digits_is_a_400(alice: ApiUser, raw: str) -> None:
    """A Last-Event-ID of anything but 1-9 ASCII digits ('²', Arabic-Indic or full-width digits, which Python's
    `isdigit` accepts) is a 400 with the contract's detail, as header and as `lastEventId`, never a 500."""
    from urllib.parse import quote

    own = create_session(user_id=alice.user_id)
    detail = "Last-Event-ID must be the id of a frame of this session's stream (a sequence number)."
    as_header = alice.get(f"/agent/sessions/{own.pk}/events", HTTP_LAST_EVENT_ID=raw)
    as_query = alice.get(f"/agent/sessions/{own.pk}/events?lastEventId={quote(raw)}")
    for response in (as_header, as_query):
        assert response.status_code == 400
        assert response.json() == {"detail": detail}


@pytest.mark.django_db
def test_unavailable_database_is_a_503_the_client_may_retry(
    alice: ApiUser, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the database cannot take the new session (locked, out of connections) the answer is 503 + Retry-After."""
    from django.db import OperationalError

    from trainer_agent import streaming

    def locked(**kwargs: Any) -> None:
        raise OperationalError("database is locked")

    monkeypatch.setattr(streaming, "admit_turn", locked)
    response = alice.post_json(STREAM, {"message": "hello"})
    assert response.status_code == 503
    assert response["Retry-After"] == "2"
    assert response.json() == {"detail": "The service is busy; try again shortly."}
