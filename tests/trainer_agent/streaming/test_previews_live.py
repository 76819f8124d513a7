"""Preview frames with real processes: a daphne process and `manage.py worker` on their own database (SQLite
file, or PostgreSQL when DATABASE_URL names one), the worker publishing over NOTIFY (PostgreSQL) or the cache
(SQLite) while the model streams.

Two models: the offline coach, whose stream is simulated a word at a time (OFFLINE_STREAM_DELAY_SECONDS apart;
it drafts workouts with draft_workout, so only its messages preview), and `claude-haiku-4-5` through the real Anthropic SDK (`messages.stream`) against the streaming fake model server
(tests/support/fake_model_server.py, in this process: its default script plays a 6-exercise workout turn for the
demo user), reached with ANTHROPIC_BASE_URL. Each gets a deployment of its own, started when first used.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from datasources_app.demo import DEMO_USER_ID
from tests.support.fake_model_server import FakeModelServer
from tests.support.live_server import (
    TEST_HEARTBEAT_SECONDS,
    TEST_LEASE_SECONDS,
    DaphneServer,
    LiveDatabase,
    WorkerProcess,
    create_live_database,
    mint_test_token,
    server_env,
)
from tests.trainer_agent.streaming.sse_client import PREVIEW_TYPES, SSEEvent, follow_session, post_turn

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]

WORKOUT_REQUEST = "Give me a quick chest workout"
# A word every 15 ms: the offline coach's workout call takes a few seconds to write, like a real model's.
STREAM_DELAY_S = "0.015"
# The fake Claude: 300 ms to the first token, then 600 tokens a second (the workout's ~1,500 tokens in ~2.5 s).
FAKE_TTFT_S, FAKE_TOKENS_PER_S = 0.3, 600.0
# The models that write a whole workout into their call (generate_workout), card by card: the fake Claude. The
# offline coach asks draft_workout for it instead (a brief: nothing to preview but its message).
WRITING_WORKOUTS = ("claude-haiku-4-5",)


@dataclass
class Deployment:
    database: LiveDatabase
    env: dict[str, str]
    web: DaphneServer
    worker: WorkerProcess
    logs: Path

    def restart_worker(self) -> None:
        self.worker.stop()
        self.worker = WorkerProcess(env=self.env, log_path=self.logs / "worker.log", threads=4).start()

    def stop(self) -> None:
        self.web.stop()
        self.worker.stop()
        self.database.drop()


class Deployments:
    """A daphne, a worker and a database per model, started on first use, stopped at the module's end."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self.tmp_path_factory = tmp_path_factory
        self.started: dict[str, Deployment] = {}
        self.fake: FakeModelServer | None = None

    def __call__(self, model: str) -> Deployment:
        if model not in self.started:
            self.started[model] = self._start(model)
        return self.started[model]

    def _start(self, model: str) -> Deployment:
        logs = self.tmp_path_factory.mktemp(f"previews-{model}")
        database = create_live_database(name=f"previews_{model.replace('-', '_')}", tmp_dir=logs)
        extra = {
            "SSE_HEARTBEAT_SECONDS": TEST_HEARTBEAT_SECONDS,
            "AGENT_TURN_RATE": "1000/min",
            "TURN_LEASE_SECONDS": TEST_LEASE_SECONDS,
            "PRIMARY_MODEL": model,
            "OFFLINE_STREAM_DELAY_SECONDS": STREAM_DELAY_S,
        }
        if model != "offline":
            self.fake = self.fake or FakeModelServer(ttft=FAKE_TTFT_S, tps=FAKE_TOKENS_PER_S).start()
            extra |= {
                "ANTHROPIC_BASE_URL": self.fake.base_url,
                "ANTHROPIC_API_KEY": "test",
                "LLM_MAX_RETRIES": "0",
            }
        env = server_env(database_url=database.url, extra=extra)
        worker = WorkerProcess(env=env, log_path=logs / "worker.log", threads=4).start()
        web = DaphneServer(env=env, log_path=logs / "daphne.log").start()
        return Deployment(database=database, env=env, web=web, worker=worker, logs=logs)

    def stop(self) -> None:
        for deployment in self.started.values():
            deployment.stop()
        if self.fake is not None:
            self.fake.stop()


@pytest.fixture(scope="module")
def deployments(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployments]:
    found = Deployments(tmp_path_factory)
    try:
        yield found
    finally:
        found.stop()


def token() -> str:
    return mint_test_token(DEMO_USER_ID)


def stream_turn(deployment: Deployment, body: dict[str, Any]) -> tuple[str, list[SSEEvent]]:
    stream = post_turn(deployment.web.base_url, token(), body)
    try:
        assert stream.status == 200, stream.body_json()
        return stream.headers["x-session-id"], stream.read_frames_until_done()
    finally:
        stream.close()


def replayed(deployment: Deployment, session_id: str) -> list[SSEEvent]:
    """The session's frames as a client resuming from the start gets them: read from the store."""
    stream = follow_session(deployment.web.base_url, token(), session_id)
    try:
        return stream.read_frames_until_done()
    finally:
        stream.close()


def kinds(events: list[SSEEvent]) -> list[str]:
    return [str(event.json()["type"]) for event in events]


def stored_only(events: list[SSEEvent]) -> list[tuple[str | None, str]]:
    """The frames other than previews (and the recovery status line, which comes from no event), as sent."""
    return [
        (event.id, event.data)
        for event in events
        if event.json()["type"] not in PREVIEW_TYPES
        and event.json().get("data", {}).get("tool") != "recovery"
    ]


def position(events: list[SSEEvent], tool: str, *, result: bool) -> int:
    return next(
        i
        for i, event in enumerate(events)
        if event.json()["type"] == tool and ("formatted" in event.json()) == result
    )


@pytest.mark.parametrize("model", WRITING_WORKOUTS)
def test_previews_arrive_before_their_calls_result_in_order_and_leave_the_stored_frames_as_they_are(
    deployments: Deployments, model: str
) -> None:
    """A workout turn: exercise cards one by one, then the message growing, each before its call's frames;
    the other frames are exactly what a client resuming from the store receives."""
    deployment = deployments(model)
    session_id, events = stream_turn(deployment, {"message": WORKOUT_REQUEST})
    assert kinds(events)[-1] == "done"
    cards = [event for event in events if event.json()["type"] == "exercise_preview"]
    texts = [event for event in events if event.json()["type"] == "message_preview"]
    assert cards and texts, kinds(events)
    assert all(event.id is None for event in cards + texts), "previews carry no id: they are not stored"

    workout_result = position(events, "generate_workout", result=True)
    assert events.index(cards[-1]) < position(events, "generate_workout", result=False) < workout_result
    indexes = [event.json()["data"]["index"] for event in cards]
    assert indexes == sorted(set(indexes)), "each card once, in the workout's order"
    words = [event.json()["data"]["text"] for event in texts]
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(words))
    message_start = position(events, "message_notify_user", result=False)
    assert events.index(texts[-1]) < message_start
    # The last preview may be dropped (its call's answer was stored first): the message goes on from it.
    assert events[message_start].json()["data"]["args"]["message"].startswith(words[-1])

    # The cards are the delivered workout's exercises (as far as they got through: late ones may be dropped).
    delivered = next(
        event.json()["artifact"]
        for event in events
        if event.json()["type"] == "message_notify_user" and "artifact" in event.json()
    )
    exercises = {
        index: {k: v for k, v in exercise.items() if k != "id"}
        for index, exercise in enumerate(delivered["payload"]["exercises"])
    }
    assert all(
        event.json()["data"]["exercise"] == exercises[event.json()["data"]["index"]] for event in cards
    )

    assert stored_only(events) == stored_only(replayed(deployment, session_id))


def test_an_opted_out_request_and_a_resumed_stream_show_no_previews(deployments: Deployments) -> None:
    """`"preview": false` is today's stream; a stream resumed after a Last-Event-ID shows stored frames only."""
    deployment = deployments("offline")
    session_id, events = stream_turn(deployment, {"message": WORKOUT_REQUEST, "preview": False})
    assert kinds(events)[-1] == "done"
    assert not PREVIEW_TYPES & set(kinds(events))

    cut = next(
        i for i, event in enumerate(events) if event.json()["type"] == "knowledge" and event.id is not None
    )
    stream = follow_session(deployment.web.base_url, token(), session_id, last_event_id=events[cut].id)
    try:
        resumed = stream.read_frames_until_done()
    finally:
        stream.close()
    assert not PREVIEW_TYPES & set(kinds(resumed))
    assert stored_only(resumed) == stored_only(events[cut + 1 :])


@pytest.mark.parametrize("model", WRITING_WORKOUTS)
def test_a_worker_killed_mid_stream_leaves_a_turn_that_recovers_as_without_previews(
    deployments: Deployments, model: str
) -> None:
    """kill -9 of the worker while the model writes the workout: previews stop, the stream says it is picking
    up, another worker finishes the turn, and the stored frames are exactly what a replay of the store gives."""
    deployment = deployments(model)
    stream = post_turn(deployment.web.base_url, token(), {"message": WORKOUT_REQUEST})
    killed = False
    try:
        assert stream.status == 200
        session_id = stream.headers["x-session-id"]
        seen: list[SSEEvent] = []
        for event in stream.frames():
            seen.append(event)
            if event.json()["type"] == "exercise_preview":
                deployment.worker.kill()  # the model is writing the workout
                killed = True
                break
        assert killed, kinds(seen)
        deployment.restart_worker()
        after_kill = stream.read_frames_until_done()
        seen += after_kill
    finally:
        stream.close()
        if not killed:
            deployment.restart_worker()

    assert kinds(seen)[-1] == "done"
    # The worker died while the model wrote the workout, so the message that delivers it is written by the
    # worker that recovered the turn, which runs it without previews. (Whether the stream shows "Picking up
    # where we left off…" depends on whether it looks before the new worker claims the turn.)
    assert "message_preview" not in kinds(after_kill), "the recovered turn does not preview"
    attempts = deployment.database.scalar(
        "SELECT attempts FROM agent_turns WHERE session_id = %s",
        [session_id if deployment.database.postgres_admin_url else session_id.replace("-", "")],
    )
    assert int(attempts) == 2
    assert stored_only(seen) == stored_only(replayed(deployment, session_id))
