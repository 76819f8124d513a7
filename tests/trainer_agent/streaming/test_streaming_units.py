"""The pieces of streaming: frame encoding, the frame queue, the turn's worker, channels, and the test hooks."""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test import RequestFactory
from django_eventstream.models import Event as StoredFrame
from pytest_django import Settings

from config.settings import redis_connection_kwargs
from sessions_app.models import AgentSession, SessionStatus
from sessions_app.services import create_session
from tests.trainer_agent.api.support import JWT_SECRET
from trainer_agent import streaming, testing_hooks
from trainer_agent.auth import AuthenticatedUser, mint_token
from trainer_agent.eventstream import (
    SessionChannelManager,
    channel_session_id,
    normalize_last_event_id,
    publish_frame,
    session_channel,
)
from trainer_agent.llm.providers import override_provider
from trainer_agent.llm.scripted import ScriptedProvider, tool_response
from trainer_agent.llm.types import LLMError, LLMRequest
from trainer_agent.streaming import FrameQueue, PreparedTurn, encode_frame, run_streamed_turn
from trainer_agent.turns import TURN_LOCK_KEY, TurnRequest, claim_turn

MODEL = "claude-haiku-4-5"


# --- encoding and ids ---------------------------------------------------------------------------------


def test_frame_is_one_id_line_and_one_data_line() -> None:
    """A frame becomes `id: …`, one `data:` line of JSON (newlines escaped) and a blank line."""
    frame = {"type": "message_notify_user", "data": {"message": "line one\nline two"}}
    text = encode_frame(frame, "session-x:7")
    assert text.endswith("\n\n")
    lines = text[:-2].split("\n")
    assert lines[0] == "id: session-x:7"
    assert len(lines) == 2 and lines[1].startswith("data: ")
    assert json.loads(lines[1].removeprefix("data: ")) == frame
    assert encode_frame({"type": "done", "sessionId": "s"}) == 'data: {"type": "done", "sessionId": "s"}\n\n'


def test_last_event_ids_are_normalised_to_the_sessions_channel() -> None:
    """Full ids of this session and bare numbers are accepted; other sessions' ids and junk are not."""
    session_id = uuid.uuid4()
    channel = session_channel(session_id)
    assert normalize_last_event_id(f"{channel}:12", session_id=session_id) == f"{channel}:12"
    assert normalize_last_event_id(" 0 ", session_id=session_id) == f"{channel}:0"
    for bad in (f"session-{uuid.uuid4()}:1", "x", "-1", f"{channel}:", f"{channel}:1,{channel}:2", "1.5"):
        assert normalize_last_event_id(bad, session_id=session_id) is None, bad


def test_channel_names_map_to_sessions() -> None:
    """`session-<uuid>` names its session; anything else names none."""
    session_id = uuid.uuid4()
    assert channel_session_id(session_channel(session_id)) == session_id
    assert channel_session_id("session-nope") is None
    assert channel_session_id(f"other-{session_id}") is None


@pytest.mark.django_db
def test_only_the_owner_can_read_a_session_channel() -> None:
    """The channel manager lets the session's owner read its channel, nobody else (and no anonymous user)."""
    owner = uuid.uuid4()
    session = create_session(user_id=owner)
    manager = SessionChannelManager()
    channel = session_channel(session.pk)
    assert manager.can_read_channel(AuthenticatedUser(owner, None, None), channel)
    assert not manager.can_read_channel(AuthenticatedUser(uuid.uuid4(), None, None), channel)
    assert not manager.can_read_channel(None, channel)
    assert not manager.can_read_channel(AuthenticatedUser(owner, None, None), "everything")


@pytest.mark.django_db
def test_published_frames_are_stored_with_consecutive_ids() -> None:
    """Each published frame is stored on the session's channel and gets the next `session-<id>:<n>` id."""
    session = create_session(user_id=uuid.uuid4())
    channel = session_channel(session.pk)
    ids = [publish_frame(session_id=session.pk, frame={"type": "status", "n": n}) for n in range(3)]
    assert ids == [f"{channel}:1", f"{channel}:2", f"{channel}:3"]
    stored = StoredFrame.objects.filter(channel=channel, eid__gt=0).order_by("eid")
    assert [json.loads(json.loads(e.data)) for e in stored] == [{"type": "status", "n": n} for n in range(3)]


@pytest.mark.django_db
def test_stored_frames_replay_through_the_librarys_own_reader() -> None:
    """Rows written by FrameStorage are the library's: its get_events replays them from 0 and from any id."""
    from trainer_agent.eventstream import FrameStorage

    storage = FrameStorage()
    channel = f"session-{uuid.uuid4()}"
    for n in range(4):
        storage.append_event(channel, "message", json.dumps({"type": "status", "n": n}))
    assert [e.data for e in storage.get_events(channel, 0)] == [
        json.dumps({"type": "status", "n": n}) for n in range(4)
    ]
    assert [e.id for e in storage.get_events(channel, 2)] == [3, 4]
    assert storage.get_current_id(channel) == 4


@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrent writers need PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_concurrent_frames_on_one_channel_get_distinct_consecutive_ids() -> None:
    """Four threads storing 25 frames each on a new channel: ids 1..100, each once (plus the placeholder 0)."""
    from trainer_agent.eventstream import store_frame_row

    channel = f"session-{uuid.uuid4()}"
    start = threading.Barrier(4)
    errors: list[BaseException] = []

    def write(writer: int) -> None:
        try:
            start.wait()
            for n in range(25):
                store_frame_row(channel, "message", json.dumps({"writer": writer, "n": n}))
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(StoredFrame.objects.filter(channel=channel).values_list("eid", flat=True)) == list(
        range(101)
    )


def test_redis_url_becomes_client_arguments() -> None:
    """REDIS_URL is turned into redis.Redis keyword arguments (db, credentials, TLS)."""
    assert redis_connection_kwargs("redis://127.0.0.1:6379/14") == {
        "host": "127.0.0.1",
        "port": 6379,
        "db": 14,
    }
    assert redis_connection_kwargs("rediss://u:p%40ss@cache.example:6380") == {
        "host": "cache.example",
        "port": 6380,
        "db": 0,
        "username": "u",
        "password": "p@ss",
        "ssl": True,
    }
    with pytest.raises(Exception, match="redis://"):
        redis_connection_kwargs("http://cache")


# --- the frame queue ----------------------------------------------------------------------------------


def test_frame_queue_streams_frames_pings_while_idle_and_stops_at_the_end() -> None:
    """Frames put from another thread come out in order; a ping fills the silence; finish() ends the stream."""

    async def scenario() -> list[str]:
        out = FrameQueue(asyncio.get_running_loop())
        chunks: list[str] = []
        stream = out.frames(heartbeat_s=0.01)
        chunks.append(await anext(stream))  # nothing queued yet: a ping

        def produce() -> None:
            out.put("c:1", {"type": "knowledge"})
            out.put(None, {"type": "done"})
            out.finish()

        producer = threading.Thread(target=produce)
        producer.start()
        async for chunk in stream:
            if chunk != streaming.PING:
                chunks.append(chunk)
        producer.join()
        return chunks

    chunks = asyncio.run(scenario())
    assert chunks == [
        streaming.PING,
        'id: c:1\ndata: {"type": "knowledge"}\n\n',
        'data: {"type": "done"}\n\n',
    ]


def test_frame_queue_drops_frames_once_the_client_is_gone() -> None:
    """After the generator is closed (client disconnect) later frames are skipped, never raised."""

    async def scenario() -> FrameQueue:
        out = FrameQueue(asyncio.get_running_loop())
        stream = out.frames(heartbeat_s=10)
        out.put("c:1", {"type": "knowledge"})
        assert (await anext(stream)).startswith("id: c:1")
        await stream.aclose()
        out.put("c:2", {"type": "status"})
        out.finish()
        return out

    out = asyncio.run(scenario())
    assert not out.attached
    assert out.queue.empty()


# --- the worker ---------------------------------------------------------------------------------------


class RecordingQueue(FrameQueue):
    """A FrameQueue that records what the worker hands over instead of scheduling it on a loop."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.attached = True

    def _put(self, item: Any) -> None:
        self.items.append(item)

    @property
    def frames_with_ids(self) -> list[tuple[str | None, dict[str, Any]]]:
        return [item for item in self.items if isinstance(item, tuple)]


def prepared(session: AgentSession, message: str = "hello") -> PreparedTurn:
    """What prepare_turn hands the worker: an admitted turn, its session claimed."""
    claim_turn(session)
    user = AuthenticatedUser(session.user_id, None, None)
    return PreparedTurn(
        user=user,
        turn=TurnRequest(message=message, session_id=session.pk, current_workout=None, model=MODEL),
        session=session,
    )


@pytest.mark.django_db
def test_worker_streams_publishes_and_releases_the_lock() -> None:
    """The worker runs the turn: every frame is published (with its id) and queued, the lock is released, the end is signalled."""
    session = create_session(user_id=uuid.uuid4())
    out = RecordingQueue()
    provider = ScriptedProvider(
        [tool_response("message_notify_user", {"message": "hi"}), tool_response("idle", {"reason": "ok"})]
    )
    with override_provider(MODEL, provider):
        run_streamed_turn(prepared(session), out)
    frames = out.frames_with_ids
    assert frames[-1] == (
        f"{session_channel(session.pk)}:{len(frames)}",
        {"type": "done", "sessionId": str(session.pk)},
    )
    assert [event_id for event_id, _ in frames] == [
        f"{session_channel(session.pk)}:{n}" for n in range(1, len(frames) + 1)
    ]
    assert out.items[-1] is streaming._END
    session.refresh_from_db()
    assert session.status == SessionStatus.COMPLETED
    assert TURN_LOCK_KEY not in session.metadata
    assert StoredFrame.objects.filter(channel=session_channel(session.pk), eid__gt=0).count() == len(frames)


@pytest.mark.django_db
def test_admitting_a_turn_claims_the_session_and_stores_the_first_frame(
    rf: RequestFactory, settings: Settings
) -> None:
    """Before any worker runs, the session is claimed and the `Message received` status is stored as frame 1."""
    settings.SUPABASE_JWT_SECRET = JWT_SECRET
    settings.SUPABASE_PUBLIC_URL = ""
    settings.AGENT_TURN_RATE = "1000/min"
    user_id = uuid.uuid4()
    request = rf.post(
        "/agent/stream",
        data=json.dumps({"message": "hello"}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {mint_token(user_id=user_id, secret=JWT_SECRET)}",
    )
    admitted = streaming.prepare_turn(request)

    assert isinstance(admitted, PreparedTurn)
    session = AgentSession.objects.get(pk=admitted.session.pk)
    assert session.user_id == user_id and TURN_LOCK_KEY in session.metadata
    assert admitted.received_frame_id == f"{session_channel(session.pk)}:1"
    stored = StoredFrame.objects.get(channel=session_channel(session.pk), eid=1)
    assert json.loads(json.loads(stored.data)) == streaming.RECEIVED_FRAME
    assert streaming.RECEIVED_FRAME == {
        "type": "status",
        "data": {"message": "Message received", "tool": "agent", "phase": "start"},
    }


@pytest.mark.django_db
def test_worker_passes_on_the_loops_error_frame_when_the_model_fails() -> None:
    """A model failure ends the stream with the loop's `error` frame (published), the session in `error`."""
    session = create_session(user_id=uuid.uuid4())
    out = RecordingQueue()
    with override_provider(MODEL, ScriptedProvider([LLMError("overloaded", "Model overloaded")])):
        run_streamed_turn(prepared(session), out)
    last_id, last = out.frames_with_ids[-1]
    assert last == {"type": "error", "message": "Model overloaded"}
    assert last_id is not None
    session.refresh_from_db()
    assert session.status == SessionStatus.ERROR
    assert TURN_LOCK_KEY not in session.metadata


@pytest.mark.django_db
def test_worker_survives_an_unexpected_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug outside the model call still ends the stream with an error frame and frees the session."""
    session = create_session(user_id=uuid.uuid4())

    def broken_turn(**kwargs: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(streaming, "run_requested_turn", broken_turn)
    out = RecordingQueue()
    run_streamed_turn(prepared(session), out)
    assert out.frames_with_ids[-1][1] == {"type": "error", "message": "Internal error: RuntimeError"}
    assert out.items[-1] is streaming._END
    session.refresh_from_db()
    assert session.status == SessionStatus.ERROR
    assert TURN_LOCK_KEY not in session.metadata


# --- scripted models for live servers ------------------------------------------------------------------


def request_with(messages: list[dict[str, Any]]) -> LLMRequest:
    return LLMRequest(
        model="m", system_prompt="", user_data_xml="", messages=messages, tools=[], user_id="u-1"
    )


def tool_use(name: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "tool_use", "id": name, "name": name, "input": {}}]}


def test_script_step_follows_the_turn_not_a_global_cursor() -> None:
    """The step is the number of tool calls since the last terminal one, so concurrent turns do not interfere."""
    user = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    assert testing_hooks.calls_this_turn(request_with([user])) == 0
    assert testing_hooks.calls_this_turn(request_with([user, tool_use("fetch_data"), user])) == 1
    history = [user, tool_use("fetch_data"), user, tool_use("idle"), user, tool_use("generate_workout"), user]
    assert testing_hooks.calls_this_turn(request_with(history)) == 1


def test_script_fills_user_and_latest_artifact(tmp_path: Path) -> None:
    """`{user_id}` and `{last_artifact_id}` are filled in from the request, in nested arguments too."""
    artifact = {"type": "text", "text": '<artifact type="exercise_list" id="art_2">\nx\n</artifact>'}
    older = {"type": "text", "text": '<artifact type="exercise_list" id="art_1">\nx\n</artifact>'}
    request = request_with([{"role": "user", "content": [older, artifact]}])
    script = testing_hooks.TurnScript(
        [
            {
                "tool": "message_notify_user",
                "args": {"message": "for {user_id}", "artifact_id": "{last_artifact_id}"},
            }
        ]
    )
    call = script(request).tool_calls[0]
    assert call.arguments == {"message": "for u-1", "artifact_id": "art_2"}


def test_gated_step_waits_for_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A step with wait_for_file answers once the file exists, and fails as a timeout if it never appears."""
    script = testing_hooks.TurnScript(
        [{"tool": "idle", "args": {}, "wait_for_file": str(tmp_path / "{user_id}")}]
    )
    (tmp_path / "u-1").touch()
    assert script(request_with([])).tool_calls[0].name == "idle"
    monkeypatch.setattr(testing_hooks, "GATE_TIMEOUT_S", 0.0)
    with pytest.raises(LLMError, match="not opened"):
        script(
            LLMRequest(model="m", system_prompt="", user_data_xml="", messages=[], tools=[], user_id="u-2")
        )


def test_installing_scripts_registers_models(tmp_path: Path) -> None:
    """Each model of the file becomes a registered model id served by its scripted provider."""
    from trainer_agent.llm.models import unregister_model
    from trainer_agent.llm.providers import get_provider

    path = tmp_path / "scripts.json"
    path.write_text(
        json.dumps({"models": {"scripted-unit": {"delay_s": 0, "steps": [{"tool": "idle", "args": {}}]}}})
    )
    try:
        assert testing_hooks.install_scripts(path) == ["scripted-unit"]
        response = get_provider("scripted-unit").complete(request_with([]))
        assert response.tool_calls[0].name == "idle"
    finally:
        unregister_model("scripted-unit")


@pytest.mark.django_db
def test_frame_storage_trims_old_events_only_now_and_then(monkeypatch: pytest.MonkeyPatch) -> None:
    """The library's delete-old-events pass runs on the first append of a thread and then every TRIM_EVERY-th."""
    from django_eventstream.storage import DjangoModelStorage

    from trainer_agent.eventstream import FrameStorage

    trims: list[int] = []
    monkeypatch.setattr(DjangoModelStorage, "trim_event_log", lambda self: trims.append(1))
    storage = FrameStorage()
    for n in range(FrameStorage.TRIM_EVERY + 1):
        event = storage.append_event("session-trim-test", "message", {"n": n})
        assert storage.last_appended is event
    assert len(trims) == 2


@pytest.mark.skipif(
    connection.vendor == "sqlite",
    reason="admission and the turn run in other threads: needs a shared database",
)
@pytest.mark.django_db(transaction=True)
def test_a_client_gone_during_admission_still_gets_its_turn_run_and_released(
    rf: RequestFactory, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cancelled while its session was being claimed, the request's turn still runs, is stored, and frees the
    session (it would otherwise stay locked until the claim goes stale)."""
    settings.SUPABASE_JWT_SECRET = JWT_SECRET
    settings.SUPABASE_PUBLIC_URL = ""
    settings.AGENT_TURN_RATE = "1000/min"
    session = create_session(user_id=uuid.uuid4())
    admitting, go_on = threading.Event(), threading.Event()
    real_prepare = streaming.prepare_turn

    def slow_prepare(request: Any) -> Any:
        admitting.set()
        go_on.wait(10)
        return real_prepare(request)

    monkeypatch.setattr(streaming, "prepare_turn", slow_prepare)
    request = rf.post(
        "/agent/stream",
        data=json.dumps({"message": "hello", "sessionId": str(session.pk), "model": MODEL}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {mint_token(user_id=session.user_id, secret=JWT_SECRET)}",
    )
    provider = ScriptedProvider(
        [tool_response("message_notify_user", {"message": "hi"}), tool_response("idle", {"reason": "ok"})]
    )

    async def client_goes_away() -> None:
        view = asyncio.ensure_future(streaming.agent_stream(request))
        await asyncio.get_running_loop().run_in_executor(None, admitting.wait, 10)
        view.cancel()
        go_on.set()
        with pytest.raises(asyncio.CancelledError):
            await view
        for _ in range(200):  # the turn runs in the turn pool; wait (bounded) for it to finish
            await asyncio.sleep(0.05)
            done = await asyncio.get_running_loop().run_in_executor(None, _status_and_metadata, session.pk)
            if done[0] == SessionStatus.COMPLETED and TURN_LOCK_KEY not in done[1]:
                return

    with override_provider(MODEL, provider):
        asyncio.run(client_goes_away())
    status, metadata = _status_and_metadata(session.pk)
    assert status == SessionStatus.COMPLETED
    assert TURN_LOCK_KEY not in metadata
    assert session.events.filter(event_type="user_message").count() == 1


def _status_and_metadata(session_id: uuid.UUID) -> tuple[str, dict[str, Any]]:
    try:
        row = AgentSession.objects.values_list("status", "metadata").get(pk=session_id)
        return row[0], row[1]
    finally:
        connection.close()


def test_a_turn_waits_for_the_requests_still_being_admitted() -> None:
    """A turn starts only once every request that arrived before it has been admitted (or the wait runs out)."""
    from trainer_agent.streaming import AdmissionsFirst

    gate = AdmissionsFirst(max_wait_s=30)
    gate.arrived()
    gate.arrived()
    started = threading.Event()

    def start_turn() -> None:
        gate.wait()
        started.set()

    turn = threading.Thread(target=start_turn)
    turn.start()
    gate.admitted()
    assert not started.wait(0.2)  # one request is still waiting for its first frame
    gate.admitted()
    assert started.wait(5)
    turn.join()

    bounded = AdmissionsFirst(max_wait_s=0.05)
    bounded.arrived()  # a request that never finishes admission cannot hold turns back for long
    waited = threading.Thread(target=bounded.wait)
    waited.start()
    waited.join(timeout=5)
    assert not waited.is_alive()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="one statement per frame: PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_on_postgresql_a_frame_is_one_round_trip_and_a_channels_first_frame_two() -> None:
    from django.test.utils import CaptureQueriesContext

    from trainer_agent.eventstream import store_frame_row

    channel = f"session-{uuid.uuid4()}"
    with CaptureQueriesContext(connection) as first:
        assert store_frame_row(channel, "message", "{}") == 1
    with CaptureQueriesContext(connection) as later:
        assert store_frame_row(channel, "message", "{}") == 2
    assert (len(first), len(later)) == (2, 1)
    assert not connection.in_atomic_block
    assert sorted(StoredFrame.objects.filter(channel=channel).values_list("eid", flat=True)) == [0, 1, 2]


@pytest.mark.django_db
def test_a_new_sessions_first_frame_is_stored_as_publish_frame_stores_it_and_replays() -> None:
    """Admission stores a new session's first frame with the session itself; the rows equal what publish_frame
    stores on a channel, and the library replays them."""
    from trainer_agent.eventstream import FrameStorage
    from trainer_agent.turns import admit_turn

    frame = {"type": "status", "data": {"message": "Message received ✓", "tool": "agent", "phase": "start"}}
    session, frame_id = admit_turn(user_id=uuid.uuid4(), session_id=None, first_frame=frame)
    other = create_session(user_id=uuid.uuid4())
    published_id = publish_frame(session_id=other.pk, frame=frame)

    def rows(session_id: uuid.UUID) -> list[tuple[int, str, str]]:
        return list(
            StoredFrame.objects.filter(channel=session_channel(session_id))
            .order_by("eid")
            .values_list("eid", "type", "data")
        )

    assert rows(session.pk) == rows(other.pk)
    assert (frame_id, published_id) == (f"{session_channel(session.pk)}:1", f"{session_channel(other.pk)}:1")
    assert [json.loads(e.data) for e in FrameStorage().get_events(session_channel(session.pk), 0)] == [frame]
    assert publish_frame(session_id=session.pk, frame={"type": "done"}) == f"{session_channel(session.pk)}:2"


@pytest.mark.skipif(connection.vendor != "postgresql", reason="several statements per message: PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_on_postgresql_a_new_session_and_its_first_frame_take_one_round_trip() -> None:
    from django.test.utils import CaptureQueriesContext

    from trainer_agent.turns import admit_turn

    with CaptureQueriesContext(connection) as queries:
        session, frame_id = admit_turn(user_id=uuid.uuid4(), session_id=None, first_frame={"type": "status"})
    assert len(queries) == 1 and frame_id is not None
    assert AgentSession.objects.filter(pk=session.pk).exists()
    assert StoredFrame.objects.filter(channel=session_channel(session.pk)).count() == 2
