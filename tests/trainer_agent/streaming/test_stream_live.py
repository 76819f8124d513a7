"""POST /agent/stream and GET /agent/sessions/<id>/events against a real daphne process (raw HTTP client)."""

from __future__ import annotations

import json
import socket
import time
import uuid
from typing import Any

import pytest

from datasources_app.demo import DEMO_USER_ID
from tests.support.live_server import DaphneServer, LiveDatabase, LiveScripts, mint_test_token
from tests.trainer_agent.streaming.sse_client import (
    SSEEvent,
    SSEStream,
    follow_session,
    open_stream,
    post_turn,
    stored_frames,
)

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]

WAIT_S = 30.0
KNOWLEDGE_MESSAGE = "Plan me a quick workout"  # the offline initializer loads knowledge for workout requests


# --- helpers ------------------------------------------------------------------------------------------


def new_user() -> tuple[uuid.UUID, str]:
    user_id = uuid.uuid4()
    return user_id, mint_test_token(user_id)


def event_number(event: SSEEvent) -> int:
    """The sequence number of the stored event a frame (the last of its event's frames) was projected from."""
    assert event.id is not None and event.id.isdigit(), event
    return int(event.id)


def ids_increase(events: list[SSEEvent]) -> bool:
    numbers = [event_number(e) for e in events if e.id is not None]
    return numbers == sorted(set(numbers))


def wait_until(condition: Any, *, what: str, timeout: float = WAIT_S) -> Any:
    """Poll `condition()` until it returns something truthy (bounded); fail naming `what` otherwise."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")


def session_status(db: LiveDatabase, session_id: str) -> str | None:
    value = db.scalar("SELECT status FROM agent_sessions WHERE id = %s", [_db_uuid(db, session_id)])
    return str(value) if value is not None else None


def _db_uuid(db: LiveDatabase, value: str) -> str:
    # Django stores UUIDs as 32 hex characters on SQLite and as uuid on PostgreSQL.
    return value if db.postgres_admin_url else uuid.UUID(value).hex


def stored_event_types(db: LiveDatabase, session_id: str) -> list[str]:
    """The session's event types in order; a model call that is not the trainer's is typed with its purpose
    ("llm_response:initializer")."""
    rows = db.query(
        "SELECT event_type, data FROM agent_session_events WHERE session_id = %s ORDER BY sequence_number",
        [_db_uuid(db, session_id)],
    )
    types = []
    for kind, data in rows:
        purpose = (json.loads(data) if isinstance(data, str) else data).get("purpose", "trainer")
        trainer = kind not in ("llm_request", "llm_response") or purpose == "trainer"
        types.append(str(kind) if trainer else f"{kind}:{purpose}")
    return types


def open_turns(db: LiveDatabase, session_id: str) -> int:
    return int(
        db.scalar(
            "SELECT COUNT(*) FROM agent_turns WHERE session_id = %s AND finished_at IS NULL",
            [_db_uuid(db, session_id)],
        )
    )


def replay(base_url: str, token: str, session_id: str) -> list[SSEEvent]:
    """Every frame of the session's (finished) turn, replayed from the store by the events endpoint."""
    return drain(follow_session(base_url, token, session_id))


def sessions_of(db: LiveDatabase, user_id: uuid.UUID) -> int:
    return int(
        db.scalar("SELECT COUNT(*) FROM agent_sessions WHERE user_id = %s", [_db_uuid(db, str(user_id))])
    )


def signature(frame: dict[str, Any]) -> tuple[str, ...]:
    """A frame reduced to its kind: ("knowledge",), ("status", phase, tool), ("start"|"result", tool), ("done",)."""
    kind = frame["type"]
    if kind in ("knowledge", "done", "error"):
        return (kind,)
    if kind == "status":
        return ("status", frame["data"]["phase"], frame["data"]["tool"])
    return ("result", kind) if "formatted" in frame else ("start", kind)


def first_frame(stream: SSEStream) -> SSEEvent:
    return next(iter(stream.frames()))


def drain(stream: SSEStream) -> list[SSEEvent]:
    try:
        return stream.read_frames_until_done()
    finally:
        stream.close()


# --- the stream ---------------------------------------------------------------------------------------


def test_frames_arrive_in_order_with_the_seed_shapes(live_server_process: DaphneServer) -> None:
    """A workout turn streams knowledge, status + tool_start/tool_result pairs, then done, in the shapes of docs/contracts.md §7.2 (SSE frames)."""
    token = mint_test_token(DEMO_USER_ID)
    stream = post_turn(
        live_server_process.base_url,
        token,
        {"message": "Give me a quick chest workout", "model": "scripted-workout"},
        headers={"Accept-Encoding": "gzip"},
    )
    assert stream.status == 200
    assert stream.headers["content-type"] == "text/event-stream"
    assert stream.headers["cache-control"] == "no-cache"
    assert stream.headers["x-accel-buffering"] == "no"
    assert "content-encoding" not in stream.headers
    session_id = stream.headers["x-session-id"]
    events = stored_frames(drain(stream))  # a client that ignores previews (§7.5) sees today's frames
    frames = [event.json() for event in events]

    assert events[0].id == "0", "the first frame is the projection of the session's first event"
    assert ids_increase(events) and events[-1].id is not None, "ids are increasing sequence numbers"

    assert frames[0] == {
        "type": "status",
        "data": {"message": "Message received", "tool": "agent", "phase": "start"},
    }, "the turn's first frame says its message was taken"
    received, frames = frames[0], frames[1:]
    knowledge = [f for f in frames if f["type"] == "knowledge"]
    assert knowledge and frames[: len(knowledge)] == knowledge, "knowledge frames come next"
    for frame in knowledge:
        assert set(frame) == {"type", "data"}
        assert set(frame["data"]) == {"source", "displayName", "status"} and frame["data"]["status"] == "done"

    tool_frames = [f for f in frames[len(knowledge) : -1] if f["type"] != "status"]
    assert [signature(f) for f in tool_frames] == [
        ("start", "generate_workout"),
        ("result", "generate_workout"),
        ("start", "message_notify_user"),
        ("result", "message_notify_user"),
        ("start", "idle"),
        ("result", "idle"),
    ]
    for start, result in zip(tool_frames[::2], tool_frames[1::2], strict=True):
        assert set(start) == {"type", "data"} and set(start["data"]) == {"status", "args"}
        assert start["data"]["status"] == "running" and isinstance(start["data"]["args"], dict)
        assert (
            {"type", "data", "formatted", "status"}
            <= set(result)
            <= {
                "type",
                "data",
                "formatted",
                "status",
                "artifact",
                "artifact_id",
            }
        )
        assert result["status"] == "done" and isinstance(result["formatted"], str)

    created, delivered = tool_frames[1], tool_frames[3]
    artifact_id = created["artifact_id"]
    assert "artifact" not in created, "generate_workout creates the artifact; notify delivers it"
    assert delivered["artifact_id"] == artifact_id
    assert delivered["artifact"]["artifact_id"] == artifact_id
    exercises = delivered["artifact"]["payload"]["exercises"]
    assert [e["exercise_name"] for e in exercises] == ["Dumbbell Bench Press", "Push-Up", "Plank"]

    # Status frames: "start" just before its tool_start, "done" right after the tool's frames.
    statuses = [(i, f) for i, f in enumerate(frames) if f["type"] == "status"]
    assert [signature(f) for _, f in statuses] == [
        ("status", "start", "generate_workout"),
        ("status", "done", "generate_workout"),
        ("status", "start", "idle"),
        ("status", "done", "idle"),
    ]
    for index, frame in [(-1, received), *statuses]:
        assert set(frame) == {"type", "data"} and set(frame["data"]) == {"message", "tool", "phase"}
        if index < 0:
            continue
        if frame["data"]["phase"] == "start":
            assert signature(frames[index + 1]) == ("start", frame["data"]["tool"])
        else:
            assert ("result", frame["data"]["tool"]) in {
                signature(frames[index - 1]),
                signature(frames[index + 1]),
            }
    assert statuses[0][1]["data"]["message"] == "Creating your workout..."

    assert frames[-1] == {"type": "done", "sessionId": session_id}


def test_first_frame_arrives_while_the_model_is_still_answering(
    live_server_process: DaphneServer, live_database: LiveDatabase, live_scripts: LiveScripts
) -> None:
    """Frames are streamed as they happen: the first arrives (and pings follow) before the model's first answer."""
    user_id, token = new_user()
    stream = post_turn(
        live_server_process.base_url, token, {"message": KNOWLEDGE_MESSAGE, "model": "scripted-gated"}
    )
    assert stream.status == 200
    session_id = stream.headers["x-session-id"]
    events = stream.events()

    first = next(e for e in events if e.data)
    assert first.json()["type"] == "status" and first.json()["data"]["message"] == "Message received"
    assert next(e for e in events if e.data).json()["type"] == "knowledge"
    # The model's first answer is held behind a gate the test has not opened: nothing can have been buffered.
    assert "llm_response" not in stored_event_types(live_database, session_id)
    assert next(e for e in events if e.is_comment).comments == ["ping"]

    for step in (1, 2, 3):
        live_scripts.open_gate(user_id, step)
    rest = drain(stream)
    messages = [
        f.json()["data"].get("message")
        for f in rest
        if signature(f.json()) == ("result", "message_notify_user")
    ]
    assert messages == ["Step one", "Step two"]
    assert rest[-1].json() == {"type": "done", "sessionId": session_id}


def test_turn_completes_and_is_stored_after_the_client_disconnects(
    live_server_process: DaphneServer, live_database: LiveDatabase, live_scripts: LiveScripts
) -> None:
    """A client that leaves after the first frame does not stop the turn: it completes and every event is kept."""
    user_id, token = new_user()
    stream = post_turn(
        live_server_process.base_url, token, {"message": KNOWLEDGE_MESSAGE, "model": "scripted-gated"}
    )
    session_id = stream.headers["x-session-id"]
    first_frame(stream)
    stream.close()
    for step in (1, 2, 3):
        live_scripts.open_gate(user_id, step)

    wait_until(
        lambda: session_status(live_database, session_id) == "completed", what="the session to complete"
    )
    types = stored_event_types(live_database, session_id)
    assert types[0] == "user_message"
    assert "knowledge" in types
    for kind in ("llm_request", "llm_response", "tool_call", "tool_result"):
        assert types.count(kind) == 3, (kind, types)
    frames = [e.json() for e in replay(live_server_process.base_url, token, session_id)]
    assert [signature(f) for f in frames if f["type"] not in ("knowledge", "status")] == [
        ("start", "message_notify_user"),
        ("result", "message_notify_user"),
        ("start", "message_notify_user"),
        ("result", "message_notify_user"),
        ("start", "idle"),
        ("result", "idle"),
        ("done",),
    ]
    assert open_turns(live_database, session_id) == 0, "the turn is over: the session takes the next one"


def test_resume_replays_exactly_the_missed_frames_then_follows_live(
    live_server_process: DaphneServer, live_database: LiveDatabase, live_scripts: LiveScripts
) -> None:
    """Reconnecting with Last-Event-ID yields every missed frame once, in order, then the live ones."""
    user_id, token = new_user()
    stream = post_turn(
        live_server_process.base_url, token, {"message": KNOWLEDGE_MESSAGE, "model": "scripted-gated"}
    )
    session_id = stream.headers["x-session-id"]
    first = first_frame(stream)
    stream.close()

    # While disconnected: the rest of the knowledge and the first tool call happen (stored, not sent).
    live_scripts.open_gate(user_id, 1)
    wait_until(
        lambda: stored_event_types(live_database, session_id).count("tool_result") >= 1,
        what="the first tool result to be stored",
    )

    resumed = follow_session(live_server_process.base_url, token, session_id, last_event_id=first.id)
    assert resumed.status == 200
    assert resumed.headers["content-type"].startswith("text/event-stream")
    frames = resumed.frames()
    replayed: list[SSEEvent] = []
    for event in frames:  # what was missed, up to the first tool's result
        replayed.append(event)
        if signature(event.json()) == ("result", "message_notify_user"):
            break
    # Now follow live: let the turn finish.
    live_scripts.open_gate(user_id, 2)
    live_scripts.open_gate(user_id, 3)
    live: list[SSEEvent] = []
    for event in frames:
        live.append(event)
        if event.json()["type"] == "done":
            break
    resumed.close()

    received = replayed + live
    assert ids_increase(received) and event_number(received[0]) > event_number(first)
    whole = replay(live_server_process.base_url, token, session_id)
    assert [(e.id, e.json()) for e in whole[1:]] == [(e.id, e.json()) for e in received], (
        "no gap, no duplicate: exactly the frames after Last-Event-ID"
    )
    assert received[-1].json() == {"type": "done", "sessionId": session_id}


def test_events_endpoint_replays_everything_from_zero(
    live_server_process: DaphneServer, live_database: LiveDatabase
) -> None:
    """Without Last-Event-ID the events endpoint replays a finished turn from its first frame, ids included."""
    token = mint_test_token(DEMO_USER_ID)
    stream = post_turn(
        live_server_process.base_url, token, {"message": "Quick chest workout", "model": "scripted-workout"}
    )
    session_id = stream.headers["x-session-id"]
    original = stored_frames(drain(stream))  # previews are not stored, so a replay has none

    replayed = replay(live_server_process.base_url, token, session_id)
    assert [(e.id, e.json()) for e in replayed] == [(e.id, e.json()) for e in original]
    # Resuming after the done frame's id has nothing more to send of that turn: the stream only pings.
    after = follow_session(live_server_process.base_url, token, session_id, last_event_id=original[-1].id)
    assert next(e for e in after.events()).is_comment
    after.close()


# --- refused before streaming -------------------------------------------------------------------------


BAD_REQUESTS: list[tuple[str, dict[str, Any], int, dict[str, str] | str]] = [
    ("no token", {"token": None, "body": {"message": "hi"}}, 401, {"error": "Access token required"}),
    ("garbage token", {"token": "not-a-jwt", "body": {"message": "hi"}}, 401, {"error": "Invalid token"}),
    (
        "wrong content type",
        {"raw_body": b'{"message": "hi"}', "headers": {"Content-Type": "text/plain"}},
        415,
        "Unsupported media type",
    ),
    (
        "malformed JSON",
        {"raw_body": b'{"message": ', "headers": {"Content-Type": "application/json"}},
        400,
        "Malformed JSON",
    ),
    ("empty message", {"body": {"message": "   "}}, 400, "message: must not be empty."),
    ("number for message", {"body": {"message": 42}}, 400, "message: must be a string"),
    ("array body", {"body": [{"message": "hi"}]}, 400, "The request body must be a JSON object."),
    ("unknown model", {"body": {"message": "hi", "model": "gpt-99"}}, 400, "model: must be one of"),
    ("bad session id", {"body": {"message": "hi", "sessionId": "nope"}}, 400, "sessionId: must be a UUID."),
    (
        "unknown session",
        {"body": {"message": "hi", "sessionId": str(uuid.uuid4())}},
        404,
        "Session not found.",
    ),
    (
        "too large",
        {
            "raw_body": b'{"message": "' + b"x" * 70_000 + b'"}',
            "headers": {"Content-Type": "application/json"},
        },
        413,
        "Request body too large",
    ),
]


@pytest.mark.parametrize(
    ("case", "request_kwargs", "status", "expected"), BAD_REQUESTS, ids=[c[0] for c in BAD_REQUESTS]
)
def test_refused_requests_get_json_errors_and_write_nothing(
    live_server_process: DaphneServer,
    live_database: LiveDatabase,
    case: str,
    request_kwargs: dict[str, Any],
    status: int,
    expected: dict[str, str] | str,
) -> None:
    """Bad tokens and bodies are answered 4xx with a JSON error before any stream starts; no row is written."""
    user_id, token = new_user()
    kwargs = dict(request_kwargs)
    sent_token = kwargs.pop("token", token)
    response = open_stream(
        live_server_process.base_url, "/agent/stream", method="POST", token=sent_token, **kwargs
    )
    assert response.status == status
    assert response.headers["content-type"] == "application/json"
    body = response.body_json()
    if isinstance(expected, dict):
        assert body == expected
    else:
        assert expected in body["detail"], body
    assert sessions_of(live_database, user_id) == 0


MULTIPART_BODIES: list[tuple[str, str, bytes]] = [
    (
        "well-formed form",
        "multipart/form-data; boundary=b",
        b'--b\r\nContent-Disposition: form-data; name="message"\r\n\r\nhi\r\n--b--\r\n',
    ),
    ("body not in parts", "multipart/form-data; boundary=b", b'{"message": "hi"}'),
    ("no boundary", "multipart/form-data", b'{"message": "hi"}'),
    ("utf-16 charset", "multipart/form-data; boundary=b; charset=utf-16", b"message=hi"),
]


@pytest.mark.parametrize("path", ["/agent/chat", "/agent/stream"])
@pytest.mark.parametrize(
    ("case", "content_type", "raw_body"), MULTIPART_BODIES, ids=[c[0] for c in MULTIPART_BODIES]
)
def test_multipart_bodies_get_the_json_415(
    live_server_process: DaphneServer, path: str, case: str, content_type: str, raw_body: bytes
) -> None:
    """A form upload, well-formed or not, reaches the API and is its JSON 415 (the server in front of Django
    parsed multipart bodies itself and answered a malformed one with a bare 400 and no body)."""
    response = open_stream(
        live_server_process.base_url,
        path,
        method="POST",
        token=new_user()[1],
        raw_body=raw_body,
        headers={"Content-Type": content_type},
    )
    assert response.status == 415
    assert response.headers["content-type"] == "application/json"
    assert response.body_json() == {"detail": 'Unsupported media type "multipart/form-data" in request.'}


def test_requests_daphne_refuses_get_json_errors(live_server_process: DaphneServer) -> None:
    """What daphne refuses itself (a header value with a byte HTTP forbids) is a JSON `detail` too."""
    for raw in (
        b"GET /healthz HTTP/1.1\r\nX-Bad: a\x0bb\r\n",
        b"GET /agent/whoami HTTP/1.1\r\nX-Bad: \x1c\r\n",
    ):
        with socket.create_connection(("127.0.0.1", live_server_process.port), timeout=10) as sock:
            sock.sendall(raw + b"Host: localhost\r\nConnection: close\r\n\r\n")
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400"), answer
        assert b"content-type: application/json" in head.lower(), answer
        assert json.loads(body)["detail"], answer


def test_get_is_not_allowed(live_server_process: DaphneServer) -> None:
    """The stream endpoint only takes POST."""
    response = open_stream(live_server_process.base_url, "/agent/stream", token=new_user()[1])
    assert response.status == 405
    assert response.headers["allow"] == "POST"


def test_other_users_session_is_not_found_and_untouched(
    live_server_process: DaphneServer, live_database: LiveDatabase
) -> None:
    """Naming someone else's session is a 404 on both endpoints; nothing is appended to it."""
    owner_token = mint_test_token(DEMO_USER_ID)
    stream = post_turn(
        live_server_process.base_url, owner_token, {"message": "hello", "model": "scripted-workout"}
    )
    session_id = stream.headers["x-session-id"]
    drain(stream)
    before = stored_event_types(live_database, session_id)

    intruder, intruder_token = new_user()
    refused = post_turn(
        live_server_process.base_url, intruder_token, {"message": "mine now", "sessionId": session_id}
    )
    assert refused.status == 404
    assert refused.body_json() == {"detail": "Session not found."}
    follow = follow_session(live_server_process.base_url, intruder_token, session_id, last_event_id="0")
    assert follow.status == 404
    assert follow.body_json() == {"detail": "Session not found."}
    assert stored_event_types(live_database, session_id) == before
    assert sessions_of(live_database, intruder) == 0


def test_second_turn_in_a_running_session_is_a_conflict(
    live_server_process: DaphneServer, live_database: LiveDatabase, live_scripts: LiveScripts
) -> None:
    """While a turn runs, another turn in the same session is refused with 409 and writes nothing."""
    user_id, token = new_user()
    running = post_turn(
        live_server_process.base_url, token, {"message": KNOWLEDGE_MESSAGE, "model": "scripted-gated"}
    )
    session_id = running.headers["x-session-id"]
    first_frame(running)  # the turn is open now (it waits at the first gate)

    refused = post_turn(
        live_server_process.base_url, token, {"message": "and another", "sessionId": session_id}
    )
    assert refused.status == 409
    assert "already running" in refused.body_json()["detail"]

    for step in (1, 2, 3):
        live_scripts.open_gate(user_id, step)
    assert drain(running)[-1].json()["type"] == "done"
    assert stored_event_types(live_database, session_id).count("user_message") == 1
    assert sessions_of(live_database, user_id) == 1


def test_events_endpoint_refuses_bad_tokens_and_ids(live_server_process: DaphneServer) -> None:
    """The replay endpoint needs the owner's token, a session id and a Last-Event-ID of that session."""
    base = live_server_process.base_url
    session_id = str(uuid.uuid4())
    assert open_stream(base, f"/agent/sessions/{session_id}/events").body_json() == {
        "error": "Access token required"
    }
    assert open_stream(base, f"/agent/sessions/{session_id}/events", token="x.y.z").status == 401
    assert open_stream(base, "/agent/sessions/not-a-uuid/events", token=new_user()[1]).status == 404

    token = mint_test_token(DEMO_USER_ID)
    stream = post_turn(base, token, {"message": "hello", "model": "scripted-workout"})
    own_session = stream.headers["x-session-id"]
    drain(stream)
    for bad in ("abc", f"session-{session_id}:3", "1:2:3"):
        response = follow_session(base, token, own_session, last_event_id=bad)
        assert response.status == 400, bad
        assert "Last-Event-ID" in response.body_json()["detail"]


def test_a_follower_of_a_deleted_session_is_ended(live_server_process: DaphneServer) -> None:
    """Deleting a session ends the streams following it, after an `error` frame saying why (they would otherwise
    ping forever, or close with no word)."""
    _, token = new_user()
    stream = post_turn(live_server_process.base_url, token, {"message": "hello", "model": "scripted-workout"})
    session_id = stream.headers["x-session-id"]
    drain(stream)
    follower = follow_session(live_server_process.base_url, token, session_id)
    assert follower.read_frames_until_done()[-1].json()["type"] == "done"
    deleted = open_stream(
        live_server_process.base_url, f"/agent/sessions/{session_id}", method="DELETE", token=token
    )
    assert deleted.status == 204
    assert [e.json() for e in follower.frames()] == [
        {"type": "error", "message": "This session was deleted."}
    ]
    follower.close()
