"""Any web process streams any session: a turn admitted on one daphne process, followed live on another."""

from __future__ import annotations

import uuid

import pytest

from tests.support.live_server import DaphneServer, LiveScripts, mint_test_token
from tests.trainer_agent.streaming.sse_client import follow_session, post_turn, stored_frames

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]


def test_a_follower_on_another_process_receives_the_turn_live(
    live_server_pair: tuple[DaphneServer, DaphneServer], live_scripts: LiveScripts
) -> None:
    """Process B streams the turn admitted on process A, live, with the same frames and ids: both read the one
    event store (woken by LISTEN/NOTIFY on PostgreSQL, by polling on SQLite)."""
    server_a, server_b = live_server_pair
    user_id = uuid.uuid4()
    token = mint_test_token(user_id)
    turn = post_turn(
        server_a.base_url, token, {"message": "Plan me a quick workout", "model": "scripted-gated"}
    )
    assert turn.status == 200
    session_id = turn.headers["x-session-id"]
    first = next(turn.frames())  # the turn waits at its first gate

    follower = follow_session(server_b.base_url, token, session_id)
    assert follower.status == 200
    on_b_frames = follower.frames()
    assert next(on_b_frames).json() == first.json(), "B replays what A already sent"

    for step in (1, 2, 3):
        live_scripts.open_gate(user_id, step)
    # Previews go to the admitting stream only; the follower on B reads the stored frames (§7.5).
    on_a = [(e.id, e.json()) for e in stored_frames([first, *turn.read_frames_until_done()])]
    turn.close()
    on_b = [(first.id, first.json())]
    for event in on_b_frames:
        on_b.append((event.id, event.json()))
        if event.json()["type"] == "done":
            break
    follower.close()

    assert on_b == on_a
    assert on_b[-1][1] == {"type": "done", "sessionId": session_id}
