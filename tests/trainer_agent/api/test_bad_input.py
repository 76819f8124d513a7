"""The bad-input suite: hostile or broken requests are each a clear 4xx, never a 5xx, and write nothing.

Every case is sent through the full stack (middleware, auth, throttling, parsing, views). Separately,
test_chat.py shows that a message with emoji, SQL and HTML is accepted and stored verbatim.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import jwt
import pytest

from sessions_app.services import create_session
from tests.trainer_agent.api.support import JWT_SECRET, ApiUser, row_counts
from trainer_agent.auth import mint_token
from trainer_agent.llm.scripted import ScriptedProvider

CHAT = "/agent/chat"
BOB_SESSION = "{bob_session}"
BOB_USER = "{bob_user}"
TOO_DEEP = 10_000


def body(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()


def chat(message: Any = "hi", **fields: Any) -> bytes:
    return body({"message": message, **fields})


@dataclass(frozen=True)
class Bad:
    """One refused request: what to send, who sends it, and the status it must get."""

    raw: bytes | str = b""
    status: int = 400
    method: str = "POST"
    path: str = CHAT
    content_type: str = "application/json"
    token: str = (
        "alice"  # alice | none | expired | wrong_signature | alg_none | garbage | basic | not_uuid_sub
    )
    headers: dict[str, str] = field(default_factory=dict)


CASES: dict[str, Bad] = {
    # --- malformed JSON ---------------------------------------------------------------------------------
    "truncated": Bad(b'{"message": "hi"'),
    "trailing_garbage": Bad(b'{"message": "hi"} trailing'),
    "two_documents": Bad(b'{"message": "a"}{"message": "b"}'),
    "nan": Bad(b'{"message": NaN}'),
    "infinity": Bad(b'{"message": "hi", "model": -Infinity}'),
    "single_quotes": Bad(b"{'message': 'hi'}"),
    "byte_order_mark": Bad('\ufeff{"message": "hi"}'.encode()),
    "invalid_utf8": Bad(b'{"message": "\xff\xfe\xfd"}'),
    "latin1_declared_but_garbage": Bad(b"\x81\x82", content_type="application/json; charset=bogus-charset"),
    "xml_as_json": Bad(b"<message>hi</message>"),
    "comment": Bad(b'{"message": "hi" /* comment */}'),
    "trailing_comma": Bad(b'{"message": "hi",}'),
    "empty_body": Bad(b""),
    "whitespace_body": Bad(b"   \n  "),
    "json_null": Bad(b"null"),
    "json_array": Bad(b'["hi"]'),
    "json_string": Bad(b'"hi"'),
    "json_number": Bad(b"42"),
    "json_boolean": Bad(b"true"),
    "deeply_nested_array": Bad(b"[" * TOO_DEEP + b"]" * TOO_DEEP),
    "deeply_nested_object": Bad(b'{"a":' * TOO_DEEP + b"1" + b"}" * TOO_DEEP),
    "nested_in_workout": Bad(
        b'{"message": "hi", "currentWorkout": ' + b'{"a":' * 100 + b"1" + b"}" * 100 + b"}"
    ),
    "huge_integer": Bad(b'{"message": ' + b"9" * 5000 + b"}"),
    "float_overflow": Bad(b'{"message": "hi", "currentWorkout": {"exercises": [{"sets": 1e400}]}}'),
    "nul_in_workout_title": Bad(chat(currentWorkout={"title": "a\u0000b", "exercises": []})),
    "lone_surrogate_in_message": Bad(b'{"message": "half an emoji \\ud83d"}'),
    "huge_body": Bad(chat("x" * 70_000), status=413),
    # --- wrong shapes and types -------------------------------------------------------------------------
    "message_missing": Bad(body({})),
    "message_null": Bad(chat(None)),
    "message_empty": Bad(chat("")),
    "message_whitespace": Bad(chat(" \n\t ")),
    "message_number": Bad(chat(5)),
    "message_array": Bad(chat(["hi"])),
    "message_object": Bad(chat({"text": "hi"})),
    "message_boolean": Bad(chat(True)),
    "message_too_long": Bad(chat("a" * 8001)),
    "message_nul": Bad(chat("hi\u0000there")),
    "message_bell": Bad(chat("ding\u0007")),
    "message_escape_sequence": Bad(chat("\u001b[31mred")),
    "session_id_number": Bad(chat(sessionId=5)),
    "session_id_array": Bad(chat(sessionId=[str(uuid.uuid4())])),
    "session_id_not_uuid": Bad(chat(sessionId="abc")),
    "session_id_sql": Bad(chat(sessionId="' OR 1=1; --")),
    "session_id_emoji": Bad(chat(sessionId="💥🔥")),
    "session_id_html": Bad(chat(sessionId="<script>alert(1)</script>")),
    "session_id_of_another_user": Bad(chat(sessionId=BOB_SESSION), status=404),
    "session_id_unknown": Bad(chat(sessionId=str(uuid.uuid4())), status=404),
    "model_sql": Bad(chat(model="'; DROP TABLE agent_sessions; --")),
    "model_emoji": Bad(chat(model="🤖")),
    "model_html": Bad(chat(model="<img src=x onerror=alert(1)>")),
    "model_number": Bad(chat(model=4)),
    "model_unknown": Bad(chat(model="gpt-17")),
    "workout_array": Bad(chat(currentWorkout=[])),
    "workout_string": Bad(chat(currentWorkout="push day")),
    "workout_invalid_exercise": Bad(chat(currentWorkout={"exercises": [{"exercise_name": "Push-Up"}]})),
    "unknown_field": Bad(chat(userId=str(uuid.uuid4()))),
    "duplicate_key_last_wins_empty": Bad(b'{"message": "hi", "message": ""}'),
    # --- content types ----------------------------------------------------------------------------------
    "text_plain": Bad(chat(), status=415, content_type="text/plain"),
    "form_urlencoded": Bad(b"message=hi", status=415, content_type="application/x-www-form-urlencoded"),
    "multipart": Bad(
        b'--b\r\nContent-Disposition: form-data; name="message"\r\n\r\nhi\r\n--b--\r\n',
        status=415,
        content_type="multipart/form-data; boundary=b",
    ),
    "no_content_type": Bad(chat(), status=415, content_type=""),
    "json_api_media_type": Bad(chat(), status=415, content_type="application/vnd.api+json"),
    # --- tokens -----------------------------------------------------------------------------------------
    "no_token": Bad(chat(), status=401, token="none"),
    "expired_token": Bad(chat(), status=401, token="expired"),
    "wrong_signature": Bad(chat(), status=401, token="wrong_signature"),
    "alg_none_token": Bad(chat(), status=401, token="alg_none"),
    "garbage_token": Bad(chat(), status=401, token="garbage"),
    "basic_auth": Bad(chat(), status=401, token="basic"),
    "token_sub_not_uuid": Bad(chat(), status=401, token="not_uuid_sub"),
    # --- other endpoints --------------------------------------------------------------------------------
    "settings_nan": Bad(b'{"weight_unit": NaN}', method="PUT", path="/user-settings"),
    "settings_deep": Bad(b"[" * TOO_DEEP + b"]" * TOO_DEEP, method="PUT", path="/user-settings"),
    "settings_sql_timezone": Bad(
        body({"timezone": "UTC'; DROP TABLE user_settings; --"}), method="PUT", path="/user-settings"
    ),
    "settings_text_plain": Bad(
        b"kg", status=415, method="PUT", path="/user-settings", content_type="text/plain"
    ),
    "create_session_with_array": Bad(b"[1]", path="/agent/sessions"),
    "create_session_text_plain": Bad(b"hi", status=415, path="/agent/sessions", content_type="text/plain"),
    "get_session_not_uuid": Bad(status=404, method="GET", path="/agent/sessions/%3Cscript%3E"),
    "get_session_of_another_user": Bad(status=404, method="GET", path=f"/agent/sessions/{BOB_SESSION}"),
    "delete_session_of_another_user": Bad(status=404, method="DELETE", path=f"/agent/sessions/{BOB_SESSION}"),
    "list_limit_sql": Bad(status=400, method="GET", path="/agent/sessions?limit=1%20OR%201=1"),
    "history_of_another_user": Bad(status=404, method="GET", path=f"/exercises/history/{BOB_USER}"),
    "distribution_days_emoji": Bad(
        status=400, method="GET", path="/exercises/distribution?days=%F0%9F%92%AA"
    ),
}


def token_for(kind: str, user: ApiUser) -> str | None:
    """The Authorization header value for a token kind (None: no header)."""
    now = int(time.time())
    claims = {"sub": str(user.user_id), "aud": "authenticated", "iat": now - 100, "exp": now + 3600}
    tokens = {
        "alice": user.token,
        "expired": jwt.encode(
            {**claims, "iat": now - 7200, "exp": now - 3600}, JWT_SECRET, algorithm="HS256"
        ),
        "wrong_signature": mint_token(user_id=user.user_id, secret="another-secret-" * 4),
        "alg_none": jwt.encode(claims, "", algorithm="none"),
        "garbage": "not.a.token",
        "not_uuid_sub": jwt.encode({**claims, "sub": "admin"}, JWT_SECRET, algorithm="HS256"),
    }
    if kind == "none":
        return None
    if kind == "basic":
        return "Basic YWxpY2U6cGFzc3dvcmQ="
    return f"Bearer {tokens[kind]}"


def test_the_suite_has_at_least_40_cases() -> None:
    """The acceptance floor: at least 40 distinct bad requests."""
    assert len(CASES) >= 40


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
@pytest.mark.django_db
def test_bad_request_is_a_clear_4xx_and_writes_nothing(
    case: Bad, alice: ApiUser, bob: ApiUser, scripted_model: ScriptedProvider
) -> None:
    """Each bad request gets its 4xx with a JSON `detail` (401: `error`), and no table changes."""
    bobs_session = create_session(user_id=bob.user_id)
    substitutions = {BOB_SESSION: str(bobs_session.pk), BOB_USER: str(bob.user_id)}
    raw = case.raw.decode("latin-1") if isinstance(case.raw, bytes) else case.raw
    path = case.path
    for placeholder, value in substitutions.items():
        raw, path = raw.replace(placeholder, value), path.replace(placeholder, value)
    headers: dict[str, Any] = dict(case.headers)
    authorization = token_for(case.token, alice)
    if authorization is not None:
        headers["HTTP_AUTHORIZATION"] = authorization
    before = row_counts()

    response = alice.client.generic(
        case.method, path, data=raw.encode("latin-1"), content_type=case.content_type, **headers
    )

    assert response.status_code == case.status, response.content[:300]
    payload = response.json()
    if case.status == 401:
        assert payload in ({"error": "Access token required"}, {"error": "Invalid token"})
    else:
        assert isinstance(payload["detail"], str) and payload["detail"]
    assert row_counts() == before
    assert scripted_model.calls == 0
