"""Durable turns with real processes: `kill -9` a worker (or a web process) mid-turn and the turn still ends.

Each test runs a live daphne and `manage.py worker` subprocesses on their own database, with a scripted model
whose calls (and the `scripted_note` tool) wait for gate files, so the test knows where the turn is when it
kills the process. The turn's lease is short (TEST_LEASE_SECONDS), so a second worker takes it over within
seconds and continues it from the event store.
"""

from __future__ import annotations

import json
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from datasources_app.demo import DEMO_USER_ID
from tests.support.live_server import (
    DEMO_WORKOUT_EXERCISES,
    TEST_HEARTBEAT_SECONDS,
    TEST_LEASE_SECONDS,
    DaphneServer,
    LiveDatabase,
    WorkerProcess,
    create_live_database,
    mint_test_token,
    server_env,
    wait_for,
    write_scripts,
)
from tests.trainer_agent.streaming.sse_client import SSEEvent, follow_session, post_turn

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]


@pytest.fixture(scope="module")
def crash_setup(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[LiveDatabase, dict[str, str], Path]]:
    directory = tmp_path_factory.mktemp("crash")
    gates = directory / "gates"
    gates.mkdir()
    gate = str(gates / "{user_id}")
    models: dict[str, Any] = {
        "models": {
            # A workout turn whose model calls each wait for a gate: 1 generate, 2 deliver, 3 idle.
            "scripted-crash": {
                "steps": [
                    {
                        "tool": "generate_workout",
                        "args": {"title": "Crash Test Chest", "exercises": DEMO_WORKOUT_EXERCISES},
                        "wait_for_file": gate + "-1",
                    },
                    {
                        "tool": "message_notify_user",
                        "args": {"message": "Here it is.", "artifact_id": "{last_artifact_id}"},
                        "wait_for_file": gate + "-2",
                    },
                    {"tool": "idle", "args": {"reason": "done"}},
                ]
            },
            # A tool that writes, then waits for a gate while its transaction is open.
            "scripted-tool-crash": {
                "steps": [
                    {"tool": "scripted_note", "args": {"text": "note {user_id}", "gate": gate + "-tool"}},
                    {"tool": "message_notify_user", "args": {"message": "Noted."}},
                    {"tool": "idle", "args": {"reason": "done"}},
                ]
            },
        }
    }
    scripts = write_scripts(directory, models)
    database = create_live_database(name="crash", tmp_dir=directory)
    env = server_env(
        database_url=database.url,
        scripts=scripts,
        extra={
            "SSE_HEARTBEAT_SECONDS": TEST_HEARTBEAT_SECONDS,
            "AGENT_TURN_RATE": "1000/min",
            "TURN_LEASE_SECONDS": TEST_LEASE_SECONDS,
        },
    )
    yield database, env, gates
    database.drop()


@pytest.fixture
def web(crash_setup: tuple[LiveDatabase, dict[str, str], Path], tmp_path: Path) -> Iterator[DaphneServer]:
    server = DaphneServer(env=crash_setup[1], log_path=tmp_path / "daphne.log").start()
    yield server
    server.stop()


def start_worker(env: dict[str, str], log: Path) -> WorkerProcess:
    return WorkerProcess(env=env, log_path=log, threads=4).start()


def open_gate(gates: Path, user_id: uuid.UUID, name: str) -> None:
    (gates / f"{user_id}-{name}").touch()


def _id(db: LiveDatabase, value: str) -> str:
    return value if db.postgres_admin_url else uuid.UUID(value).hex


def events(db: LiveDatabase, session_id: str) -> list[tuple[int, str, str]]:
    """(sequence number, event type, tool name) of every stored event of the session; a model call that is not
    the trainer's is typed with its purpose ("llm_request:initializer")."""
    rows = db.query(
        "SELECT sequence_number, event_type, data FROM agent_session_events WHERE session_id = %s "
        "ORDER BY sequence_number",
        [_id(db, session_id)],
    )
    out = []
    for number, kind, data in rows:
        value = json.loads(data) if isinstance(data, str) else data
        purpose = value.get("purpose", "trainer")
        if kind in ("llm_request", "llm_response") and purpose != "trainer":
            kind = f"{kind}:{purpose}"
        out.append((int(number), str(kind), str(value.get("tool_name", ""))))
    return out


def turn_row(db: LiveDatabase, session_id: str) -> tuple[str, int, Any, str]:
    """(status, attempts, finished_at, worker) of the session's first turn."""
    rows = db.query(
        "SELECT status, attempts, finished_at, worker FROM agent_turns WHERE session_id = %s "
        "ORDER BY start_sequence",
        [_id(db, session_id)],
    )
    status, attempts, finished, worker = rows[0]
    return str(status), int(attempts), finished, str(worker)


def holder(workers: list[WorkerProcess], db: LiveDatabase, session_id: str) -> WorkerProcess:
    """The worker process holding the turn's lease (its pid is part of the lease holder's name)."""
    name = wait_for(lambda: turn_row(db, session_id)[3], "a worker to take the turn")
    pid = int(name.split(":")[1])
    return next(worker for worker in workers if worker.pid == pid)


def assert_stored_once(db: LiveDatabase, session_id: str, *, messages: int = 1) -> list[tuple[int, str, str]]:
    stored = events(db, session_id)
    numbers = [number for number, _, _ in stored]
    assert numbers == list(range(len(numbers))), "sequence numbers are contiguous: nothing written twice"
    kinds = [kind for _, kind, _ in stored]
    assert kinds.count("user_message") == messages
    return stored


def resume_until_done(base_url: str, token: str, session_id: str, last_id: str | None) -> list[SSEEvent]:
    stream = follow_session(base_url, token, session_id, last_event_id=last_id)
    try:
        assert stream.status == 200
        return stream.read_frames_until_done()
    finally:
        stream.close()


@pytest.mark.parametrize("point", ["model_call", "between_commit_and_next_call"])
def test_a_killed_worker_s_turn_is_finished_by_another(
    crash_setup: tuple[LiveDatabase, dict[str, str], Path], web: DaphneServer, tmp_path: Path, point: str
) -> None:
    """kill -9 of the worker running the turn (a) while the model is answering, (c) after the tool's commit,
    before the next model call: the other worker continues from the store; one workout artifact, no duplicate
    event, a client reconnecting with Last-Event-ID gets `done`, and the session takes a new message within
    lease + 2 s of the kill."""
    database, env, gates = crash_setup
    user_id = DEMO_USER_ID  # the demo user's home has the dumbbells and bench the workout needs
    token = mint_test_token(user_id)
    workers = [start_worker(env, tmp_path / f"worker-{n}.log") for n in (1, 2)]
    try:
        stream = post_turn(web.base_url, token, {"message": "Quick chest workout", "model": "scripted-crash"})
        assert stream.status == 200
        session_id = stream.headers["x-session-id"]
        received = [next(stream.frames())]  # "Message received"
        if point == "model_call":
            wait_for(lambda: any(k == "llm_request" for _, k, _ in events(database, session_id)), "the call")
        else:
            open_gate(gates, user_id, "1")
            wait_for(
                lambda: [k for _, k, _ in events(database, session_id)].count("llm_request") == 2,
                "the workout's commit and the second model call",
            )
        running = holder(workers, database, session_id)
        running.kill()
        killed_at = time.monotonic()
        stream.close()  # the client drops too
        for gate in ("1", "2"):
            open_gate(gates, user_id, gate)

        while True:  # a new message is refused (409) while the dead worker's turn is open
            again = post_turn(
                web.base_url, token, {"message": "thanks", "sessionId": session_id, "model": "scripted-crash"}
            )
            accepted_after = time.monotonic() - killed_at
            again.close()
            if again.status == 200:
                break
            assert again.status == 409
            assert accepted_after < float(TEST_LEASE_SECONDS) + 2, "the session stays locked too long"
            time.sleep(0.1)
        assert accepted_after < float(TEST_LEASE_SECONDS) + 2

        status, attempts, _, _ = turn_row(database, session_id)
        assert (status, attempts) == ("completed", 2)
        wait_for(
            lambda: (
                not database.scalar(
                    "SELECT COUNT(*) FROM agent_turns WHERE session_id = %s AND finished_at IS NULL",
                    [_id(database, session_id)],
                )
            ),
            "the second turn to end",
        )
        stored = assert_stored_once(database, session_id, messages=2)
        kinds = [kind for _, kind, _ in stored]
        assert kinds.count("artifact") == 2, "one workout per turn: the first turn's was made once"
        generated = [n for n, kind, tool in stored if kind == "tool_result" and tool == "generate_workout"]
        assert len(generated) == 2, "a tool whose result was committed never runs again"
        first_turn = [
            kind
            for number, kind, _ in stored
            if number < next(n for n, kind, _ in stored if kind == "user_message" and n > 0)
        ]
        assert first_turn.count("artifact") == 1 and first_turn.count("llm_response") == 3

        last_id = next((e.id for e in reversed(received) if e.id is not None), None)
        frames = [e.json() for e in resume_until_done(web.base_url, token, session_id, last_id)]
        assert frames[-1] == {"type": "done", "sessionId": session_id}
    finally:
        for worker in workers:
            worker.stop()
        for gate in ("1", "2"):
            (gates / f"{user_id}-{gate}").unlink(missing_ok=True)


def test_the_stream_says_a_killed_worker_s_turn_is_being_picked_up_and_its_task_row_ends(
    crash_setup: tuple[LiveDatabase, dict[str, str], Path], web: DaphneServer, tmp_path: Path
) -> None:
    """While a killed worker's turn waits for another worker, its stream shows "Picking up where we left off…"
    (once), then the turn's frames go on to `done`; the killed worker's task row does not stay RUNNING."""
    database, env, gates = crash_setup
    user_id = DEMO_USER_ID
    token = mint_test_token(user_id)
    first = start_worker(env, tmp_path / "worker-1.log")
    second: WorkerProcess | None = None
    try:
        stream = post_turn(web.base_url, token, {"message": "Quick chest workout", "model": "scripted-crash"})
        assert stream.status == 200
        session_id = stream.headers["x-session-id"]
        wait_for(lambda: any(k == "llm_request" for _, k, _ in events(database, session_id)), "the call")
        first.kill()
        frames = stream.frames()
        seen = [next(frames).json()]  # "Message received"
        while seen[-1]["type"] != "status" or seen[-1]["data"]["tool"] != "recovery":
            seen.append(next(frames).json())
        assert seen[-1] == {
            "type": "status",
            "data": {"message": "Picking up where we left off…", "tool": "recovery", "phase": "start"},
        }
        second = start_worker(env, tmp_path / "worker-2.log")
        for gate in ("1", "2"):
            open_gate(gates, user_id, gate)
        seen += [e.json() for e in stream.read_frames_until_done()]
        stream.close()
        assert seen[-1] == {"type": "done", "sessionId": session_id}
        recovery = [f for f in seen if f["type"] == "status" and f["data"]["tool"] == "recovery"]
        assert len(recovery) == 1, "said once per lapsed lease"

        running = "SELECT COUNT(*) FROM django_tasks_database_dbtaskresult WHERE status = 'RUNNING'"
        wait_for(lambda: database.scalar(running) == 0, "the killed worker's task row to end")
        failed = database.query(
            "SELECT exception_class_path FROM django_tasks_database_dbtaskresult WHERE status = 'FAILED'"
        )
        assert ("trainer_agent.turns.WorkerDied",) in [tuple(row) for row in failed]
    finally:
        for worker in (first, second):
            if worker is not None:
                worker.stop()
        for gate in ("1", "2"):
            (gates / f"{user_id}-{gate}").unlink(missing_ok=True)


def test_a_worker_killed_while_a_tool_runs_leaves_no_half_done_write(
    crash_setup: tuple[LiveDatabase, dict[str, str], Path], web: DaphneServer, tmp_path: Path
) -> None:
    """kill -9 while the tool's transaction is open: its write is rolled back, the next worker runs it again,
    and exactly one note exists."""
    database, env, gates = crash_setup
    user_id = uuid.uuid4()
    token = mint_test_token(user_id)
    workers = [start_worker(env, tmp_path / f"worker-{n}.log") for n in (1, 2)]
    try:
        stream = post_turn(web.base_url, token, {"message": "note this", "model": "scripted-tool-crash"})
        session_id = stream.headers["x-session-id"]
        wait_for(
            lambda: any(k == "tool_call" for _, k, _ in events(database, session_id)), "the tool to start"
        )
        time.sleep(0.3)  # the tool has written its note inside the open transaction and waits at its gate
        holder(workers, database, session_id).kill()
        open_gate(gates, user_id, "tool")
        frames = [e.json() for e in stream.read_frames_until_done()]
        stream.close()
        assert frames[-1] == {"type": "done", "sessionId": session_id}, "the first client sees the end too"
        stored = assert_stored_once(database, session_id)
        assert [kind for _, kind, tool in stored if tool == "scripted_note"].count("tool_result") == 1
        notes = database.scalar(
            "SELECT COUNT(*) FROM user_preferences WHERE user_id = %s", [_id(database, str(user_id))]
        )
        assert notes == 1, "exactly one note: the killed worker's write never committed"
        assert turn_row(database, session_id)[:2] == ("completed", 2)
    finally:
        for worker in workers:
            worker.stop()


def test_killing_the_web_process_does_not_stop_the_turn(
    crash_setup: tuple[LiveDatabase, dict[str, str], Path], tmp_path: Path
) -> None:
    """kill -9 of daphne mid-stream: the worker finishes the turn; the client resumes on another web process
    with Last-Event-ID and receives the rest, then `done`."""
    database, env, gates = crash_setup
    user_id = DEMO_USER_ID
    token = mint_test_token(user_id)
    worker = start_worker(env, tmp_path / "worker.log")
    web_a = DaphneServer(env=env, log_path=tmp_path / "a.log").start()
    web_b = DaphneServer(env=env, log_path=tmp_path / "b.log").start()
    try:
        stream = post_turn(
            web_a.base_url, token, {"message": "Quick chest workout", "model": "scripted-crash"}
        )
        session_id = stream.headers["x-session-id"]
        first = next(stream.frames())
        assert web_a.process is not None
        web_a.process.send_signal(signal.SIGKILL)
        web_a.process.wait(timeout=10)
        for gate in ("1", "2"):
            open_gate(gates, user_id, gate)
        rest = resume_until_done(web_b.base_url, token, session_id, first.id)
        assert rest[-1].json() == {"type": "done", "sessionId": session_id}
        assert any(e.json().get("type") == "generate_workout" and "formatted" in e.json() for e in rest)
        assert turn_row(database, session_id)[:2] == ("completed", 1), "the worker was never interrupted"
    finally:
        web_b.stop()
        web_a.stop()
        worker.stop()
        for gate in ("1", "2"):
            (gates / f"{user_id}-{gate}").unlink(missing_ok=True)
