"""The week chain with real processes: daphne takes the turn, `manage.py worker` runs it and then, as its own
task, prepares the week (the task row committed with the plan tool's result)."""

from __future__ import annotations

import time
import uuid

import pytest

from tests.support.live_server import DaphneServer, LiveDatabase, mint_test_token
from tests.trainer_agent.streaming.sse_client import post_turn

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]

WAIT_S = 60.0


def test_the_turn_ends_and_the_worker_prepares_week_one(
    live_server_process: DaphneServer, live_database: LiveDatabase
) -> None:
    """The plan turn streams to `done`; the week's three days then turn ready, each with a message."""
    user_id = uuid.uuid4()
    stream = post_turn(
        live_server_process.base_url,
        mint_test_token(user_id),
        {"message": "Make me a 12-week plan to get stronger, 3 days a week", "model": "offline"},
    )
    assert stream.status == 200
    try:
        frames = [event.json() for event in stream.read_frames_until_done() if event.data]
    finally:
        stream.close()
    assert frames[-1]["type"] == "done", frames[-1]
    deadline = time.monotonic() + WAIT_S
    rows: list[tuple[object, ...]] = []
    while time.monotonic() < deadline:
        rows = live_database.query(
            "SELECT preparation, length(message) FROM scheduled_workouts WHERE user_id = %s "
            "AND preparation <> ''",
            [str(user_id).replace("-", "") if live_database.url.startswith("sqlite") else str(user_id)],
        )
        if rows and all(state != "pending" for state, _ in rows):
            break
        time.sleep(0.2)
    assert len(rows) == 3, rows
    assert all(state == "ready" and 0 < int(str(length)) <= 1600 for state, length in rows), rows
