"""Cross-process fan-out: a turn on one daphne process, a subscriber on another, the machine's Redis between."""

from __future__ import annotations

import uuid

import pytest

from tests.support.live_server import DaphneServer, LiveScripts, mint_test_token
from tests.trainer_agent.streaming.sse_client import follow_session, post_turn

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]


def test_subscriber_on_another_process_receives_the_turn_live(
    live_server_pair: tuple[DaphneServer, DaphneServer], live_scripts: LiveScripts
) -> None:
    """Frames of a turn running on process A reach a subscriber on process B as they happen (via Redis)."""
    server_a, server_b = live_server_pair
    user_id = uuid.uuid4()
    token = mint_test_token(user_id)
    turn = post_turn(
        server_a.base_url, token, {"message": "Plan me a quick workout", "model": "scripted-gated"}
    )
    assert turn.status == 200
    session_id = turn.headers["x-session-id"]
    first = next(turn.frames())  # the turn is running on A and waits at its first gate

    # No Last-Event-ID: B reads nothing from the database and only gets what is published from now on.
    subscriber = follow_session(server_b.base_url, token, session_id)
    assert subscriber.status == 200
    assert next(e for e in subscriber.events() if e.event == "stream-open")

    for step in (1, 2, 3):
        live_scripts.open_gate(user_id, step)
    on_a = [(e.id, e.json()) for e in [first, *turn.read_frames_until_done()]]
    turn.close()
    on_b = [(e.id, e.json()) for e in subscriber.read_frames_until_done()]
    subscriber.close()

    # B sees the tail of what A streamed, same ids and frames: at least everything from the first tool call
    # on (the "Message received" status and the knowledge frames before the gate may have been sent before B
    # subscribed).
    assert on_a[0][1]["type"] == "status"
    tool_phase = next(i for i, (_, frame) in enumerate(on_a) if i > 0 and frame["type"] != "knowledge")
    assert on_b == on_a[len(on_a) - len(on_b) :]
    assert len(on_b) >= len(on_a) - tool_phase
    assert on_b[-1][1] == {"type": "done", "sessionId": session_id}
