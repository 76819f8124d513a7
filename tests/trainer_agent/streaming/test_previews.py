"""Preview frames from a model call's partial tool input (trainer_agent/previews.py): what a follower is sent."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest

from datasources_app.demo import DEMO_USER_ID
from datasources_app.services import seed_demo_user
from sessions_app.services import create_session
from tests.support.live_server import DEMO_WORKOUT_EXERCISES
from tools_app.registry import execute_tool
from tools_app.types import ToolContext
from trainer_agent.llm.scripted import tool_response
from trainer_agent.llm.simulated_stream import replay_as_stream
from trainer_agent.llm.types import PartialToolCall
from trainer_agent.previews import (
    NOTIFY_PAYLOAD_BYTES,
    PreviewBatch,
    PreviewInbox,
    PreviewPublisher,
    cache_previews,
    cached_previews,
    exercise_list_of,
    notification_payloads,
    receive_notification,
)

SESSION = uuid.UUID("00000000-0000-4000-8000-000000000001")
TURN = uuid.UUID("00000000-0000-4000-8000-000000000002")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def publisher(
    published: list[PreviewBatch], *, clock: Clock | None = None, user_id: uuid.UUID = DEMO_USER_ID
) -> PreviewPublisher:
    return PreviewPublisher(
        session_id=SESSION,
        turn_id=TURN,
        user_id=user_id,
        request_sequence=7,
        publish=published.append,
        interval=0.075,
        clock=clock or Clock(),
    )


def partial(
    name: str, arguments: dict[str, Any], *, complete: bool = False, index: int = 0
) -> PartialToolCall:
    return PartialToolCall(index=index, call_id="toolu_1", name=name, arguments=arguments, complete=complete)


def frames_of(published: list[PreviewBatch]) -> list[dict[str, Any]]:
    return [frame for batch in published for frame in batch.frames]


def texts(published: list[PreviewBatch]) -> list[str]:
    return [frame["data"]["text"] for frame in frames_of(published) if frame["type"] == "message_preview"]


def cards(published: list[PreviewBatch]) -> list[dict[str, Any]]:
    return [frame for frame in frames_of(published) if frame["type"] == "exercise_preview"]


def streamed_workout(exercises: list[dict[str, Any]], on_partial: Any) -> None:
    """The workout call as a model would write it: its JSON a word at a time (the simulated stream)."""
    replay_as_stream(
        tool_response("generate_workout", {"workout": {"title": "Chest", "exercises": exercises}}),
        on_partial,
        delay_s=0,
    )


# --- messages -----------------------------------------------------------------------------------------


def test_a_message_preview_carries_the_whole_text_so_far() -> None:
    """Each message preview is the text written so far, not a delta: the client replaces its bubble's text."""
    published: list[PreviewBatch] = []
    clock = Clock()
    publish = publisher(published, clock=clock)
    for words, done in (("Here's", False), ("Here's your", False), ("Here's your plan.", True)):
        clock.now += 1.0
        publish(partial("message_notify_user", {"message": words}, complete=done))
    assert texts(published) == ["Here's", "Here's your", "Here's your plan."]
    frame = frames_of(published)[-1]
    assert frame == {
        "type": "message_preview",
        "data": {"tool": "message_notify_user", "call_id": "toolu_1", "text": "Here's your plan."},
    }
    assert all(batch.request_sequence == 7 and batch.session_id == SESSION for batch in published)


def test_the_throttle_publishes_the_latest_text_at_most_every_interval_and_flushes_at_the_end() -> None:
    """Within 75 ms only the first partial is published; the latest then goes out, and the last on completion."""
    published: list[PreviewBatch] = []
    clock = Clock()
    publish = publisher(published, clock=clock)
    steps = [
        (0.000, "Hel", False),
        (0.010, "Hello", False),
        (0.050, "Hello wo", False),
        (0.080, "Hello world", False),  # 80 ms after the first publication: the latest state goes out
        (0.100, "Hello world, ", False),
        (0.110, "Hello world, again.", True),  # complete: flushed at once
    ]
    for at, text, done in steps:
        clock.now = 100.0 + at
        publish(partial("message_notify_user", {"message": text}, complete=done))
    assert texts(published) == ["Hel", "Hello world", "Hello world, again."]


def test_an_unchanged_or_blank_text_is_not_published_again() -> None:
    """A partial that adds nothing to the text (another argument grew) publishes nothing; whitespace is no text."""
    published: list[PreviewBatch] = []
    clock = Clock()
    publish = publisher(published, clock=clock)
    publish(partial("message_notify_user", {"message": " "}))
    clock.now += 1
    publish(partial("message_notify_user", {"message": "Done"}))
    clock.now += 1
    publish(partial("message_notify_user", {"message": "Done", "artifact_id": "art_1"}, complete=True))
    assert texts(published) == ["Done"]


def test_a_question_and_seed_001_text_are_previewed() -> None:
    """message_ask_user previews its question; `text` (seed 001's spelling) is read as the message."""
    published: list[PreviewBatch] = []
    publisher(published)(partial("message_ask_user", {"question": "How long", "options": []}, complete=True))
    other: list[PreviewBatch] = []
    publisher(other)(partial("message_notify_user", {"text": "Hi there"}, complete=True))
    assert frames_of(published)[0]["data"] == {
        "tool": "message_ask_user",
        "call_id": "toolu_1",
        "text": "How long",
    }
    assert texts(other) == ["Hi there"]


def test_only_the_first_tool_call_of_an_answer_is_previewed() -> None:
    """A second call in the same answer is never run (it is answered "not executed"): no preview of it."""
    published: list[PreviewBatch] = []
    publish = publisher(published)
    publish(partial("message_notify_user", {"message": "Second call"}, complete=True, index=1))
    publish(partial("idle", {"reason": "done"}, complete=True))
    assert published == []


def test_a_failing_transport_never_fails_the_model_call() -> None:
    """Whatever goes wrong while previewing is logged; the provider's call goes on."""

    def broken(batch: PreviewBatch) -> None:
        raise ConnectionError("the database went away")

    publish = PreviewPublisher(
        session_id=SESSION,
        turn_id=TURN,
        user_id=DEMO_USER_ID,
        request_sequence=7,
        publish=broken,
        interval=0.075,
    )
    publish(partial("message_notify_user", {"message": "Hello"}, complete=True))  # does not raise


# --- exercises ----------------------------------------------------------------------------------------


def test_generate_workout_is_the_tool_whose_input_holds_a_list_of_exercises() -> None:
    """The list is found in the tool's input model (workout.exercises), with the tool's own exercise model."""
    found = exercise_list_of("generate_workout")
    assert found is not None and found.path == ("workout", "exercises")
    assert found.model.__name__ == "Exercise"
    assert exercise_list_of("message_notify_user") is None
    assert exercise_list_of("log_workout") is None  # completed sets, not exercises to show as cards


@pytest.mark.django_db
def test_each_exercise_is_previewed_once_complete_in_order() -> None:
    """Cards come one per exercise, index 0, 1, 2, each once a later one has started or the input is done."""
    seed_demo_user()
    published: list[PreviewBatch] = []
    seen: list[PartialToolCall] = []
    publish = publisher(published)

    def on_partial(call: PartialToolCall) -> None:
        seen.append(call)
        publish(call)

    streamed_workout(DEMO_WORKOUT_EXERCISES, on_partial)
    previewed = cards(published)
    assert [frame["data"]["index"] for frame in previewed] == [0, 1, 2]
    assert [frame["data"]["exercise"]["exercise_name"] for frame in previewed] == [
        "Dumbbell Bench Press",
        "Push-Up",
        "Plank",
    ]
    assert all(
        frame["data"]["tool"] == "generate_workout" and frame["data"]["call_id"] == seen[0].call_id
        for frame in previewed
    )
    # No card before its exercise was complete: the first card went out once the second exercise had started.
    first_card = next(i for i, batch in enumerate(published) if batch.frames)
    assert len(published) >= 2 and first_card == 0
    assert published[-1].state == previewed, "the state of the call is every card so far"


@pytest.mark.django_db
def test_a_card_has_the_shape_of_the_stored_workouts_exercise() -> None:
    """A card is the exercise as the artifact stores it (canonical fields, slug, units, implements), without
    the id the stored one gets."""
    seed_demo_user()
    published: list[PreviewBatch] = []
    exercises = copy.deepcopy(DEMO_WORKOUT_EXERCISES)
    exercises[0] = {
        **exercises[0],
        "load_each": [44, 44, 50],
        "load_unit": "lbs",
        "name": "Dumbbell Bench Press",
    }
    del exercises[0]["exercise_name"]  # seed 001's `name`
    streamed_workout(exercises, publisher(published))

    session = create_session(user_id=DEMO_USER_ID)
    result = execute_tool(
        "generate_workout",
        {"workout": {"title": "Chest", "exercises": exercises}},
        ToolContext(user_id=DEMO_USER_ID, session=session),
    )
    assert result.success, result.formatted
    assert result.artifact is not None
    stored = [
        {k: v for k, v in exercise.items() if k != "id"}
        for exercise in result.artifact["payload"]["exercises"]
    ]
    assert [frame["data"]["exercise"] for frame in cards(published)] == stored
    assert stored[0]["load_unit"] == "kg" and stored[0]["implements"] == 2


@pytest.mark.django_db
def test_an_invalid_or_incomplete_exercise_is_not_previewed() -> None:
    """An exercise the tool's model refuses (a missing field, an unknown field, an unknown type) gets no card,
    and neither does the last exercise while the model may still be writing it."""
    seed_demo_user()
    bench, push_up, plank = copy.deepcopy(DEMO_WORKOUT_EXERCISES)
    without_reasoning = {k: v for k, v in push_up.items() if k != "reasoning"}
    unknown_field = {**plank, "tempo": "3-1-1"}
    unknown_type = {**plank, "exercise_type": "stretch", "order": 4}
    published: list[PreviewBatch] = []
    streamed_workout([bench, without_reasoning, unknown_field, unknown_type], publisher(published))
    assert [frame["data"]["index"] for frame in cards(published)] == [0]

    half_written: list[PreviewBatch] = []
    publish = publisher(half_written)
    publish(partial("generate_workout", {"workout": {"exercises": [bench, {"exercise_name": "Push"}]}}))
    publish(
        partial("generate_workout", {"workout": {"exercises": [bench, push_up]}})
    )  # push_up may still grow
    assert [frame["data"]["index"] for frame in cards(half_written)] == [0]


@pytest.mark.django_db
def test_seed_001_top_level_exercises_are_previewed() -> None:
    """generate_workout also takes `exercises` at the top level of its input: those are previewed too."""
    seed_demo_user()
    published: list[PreviewBatch] = []
    publisher(published)(
        partial("generate_workout", {"exercises": DEMO_WORKOUT_EXERCISES[:2]}, complete=True)
    )
    assert [frame["data"]["index"] for frame in cards(published)] == [0, 1]


# --- the follower's inbox -----------------------------------------------------------------------------


def message(text: str, call_id: str = "toolu_1") -> dict[str, Any]:
    return {
        "type": "message_preview",
        "data": {"tool": "message_notify_user", "call_id": call_id, "text": text},
    }


def card(index: int, call_id: str = "toolu_1") -> dict[str, Any]:
    return {
        "type": "exercise_preview",
        "data": {
            "tool": "generate_workout",
            "call_id": call_id,
            "index": index,
            "exercise": {"order": index + 1},
        },
    }


def test_a_follower_sends_previews_only_once_it_has_sent_the_calls_request() -> None:
    """A follower that has not yet sent the call's `llm_request` (it is behind) sends nothing of it yet."""
    inbox = PreviewInbox(after=3)
    inbox.offer(7, [message("Hi")])
    assert inbox.take(after=6) == []
    assert inbox.take(after=7) == [message("Hi")]


def test_a_follower_keeps_only_the_latest_text_and_sends_each_card_once() -> None:
    """Texts that arrive while the follower is busy collapse into the latest; a card is never sent twice."""
    inbox = PreviewInbox(after=3)
    inbox.offer(7, [message("Here")])
    inbox.offer(7, [message("Here is")])
    inbox.offer(7, [card(1), card(0)])
    assert inbox.take(after=7) == [message("Here is"), card(0), card(1)]
    inbox.offer(7, [message("Here is"), card(0), card(1), card(2)])  # a whole state (the cache's)
    assert inbox.take(after=7) == [card(2)]
    assert inbox.take(after=7) == []


def test_previews_of_an_answered_call_are_stale() -> None:
    """Once the follower has read the call's `llm_response`, what is left of its previews is dropped, and
    previews of calls from before the stream started are never sent."""
    inbox = PreviewInbox(after=3)
    inbox.offer(2, [message("an earlier turn")])
    inbox.offer(7, [message("Hi")])
    inbox.answered(8)
    inbox.offer(7, [message("Hi there")])  # late
    assert inbox.take(after=8) == []
    inbox.offer(11, [message("Next call")])
    assert inbox.take(after=11) == [message("Next call")]


# --- transports ---------------------------------------------------------------------------------------


def batch(frames: list[dict[str, Any]]) -> PreviewBatch:
    return PreviewBatch(session_id=SESSION, turn_id=TURN, request_sequence=7, frames=frames, state=frames)


def test_a_notification_carries_the_session_and_the_frames() -> None:
    """One NOTIFY payload under PostgreSQL's limit: `<session id> <JSON>`, decoded back by the listener."""
    payloads = notification_payloads(batch([message("Hi"), card(0)]))
    assert len(payloads) == 1 and payloads[0].startswith(f"{SESSION} ")
    assert receive_notification(payloads[0]) == (str(SESSION), 7, [message("Hi"), card(0)])
    assert receive_notification(payloads[0], wanted=lambda session_id: False) is None


def test_a_publication_over_the_notify_limit_travels_in_parts() -> None:
    """A long text (here 9,000 characters, 10,500 bytes) is split into parts under 8000 bytes and put together."""
    text = "Übung " * 1500
    payloads = notification_payloads(batch([message(text)]))
    assert len(payloads) > 1
    assert all(len(payload.encode()) <= NOTIFY_PAYLOAD_BYTES < 8000 for payload in payloads)
    received = [receive_notification(payload) for payload in payloads]
    assert received[:-1] == [None] * (len(payloads) - 1)
    assert received[-1] == (str(SESSION), 7, [message(text)])


@pytest.mark.django_db
def test_the_cache_keeps_the_latest_state_of_the_call() -> None:
    """Without NOTIFY (SQLite) the session's latest preview state is in the cache for followers that poll."""
    cache_previews(PreviewBatch(SESSION, TURN, 7, frames=[card(1)], state=[card(0), card(1)]))
    assert cached_previews(SESSION) == (7, [card(0), card(1)])
    assert cached_previews(uuid.uuid4()) is None
