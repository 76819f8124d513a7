"""Preview frames on POST /agent/stream, in process (Django test client, ImmediateBackend): where they come in
the stream, that the stored frames are the same without them, and who never gets them.

Under the ImmediateBackend the request runs the turn before its stream starts; the previews the turn published
are sent at their place (after the call's request, before its answer), as a follower that kept up would have
seen them (trainer_agent/previews.py). The live tests (test_previews_live.py) watch them arrive from a worker.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.db import connection
from django.test import Client
from pytest_django import Settings

from datasources_app.demo import DEMO_USER_ID
from datasources_app.services import seed_demo_user, upsert_settings
from tests.trainer_agent.api.support import JWT_SECRET, ApiUser, make_user
from tests.trainer_agent.streaming.sse_client import PREVIEW_TYPES
from trainer_agent.auth import mint_token
from trainer_agent.llm.providers import override_provider
from trainer_agent.llm.scripted import ScriptedProvider, tool_response
from trainer_agent.llm.types import LLMRequest, LLMResponse, PartialCallback, PartialToolCall

pytestmark = pytest.mark.django_db

STREAM = "/agent/stream"
# Bodyweight exercises: valid for a user with no location, so a scripted workout is stored for anyone.
BODYWEIGHT = [
    {
        "exercise_name": "Push-Up",
        "exercise_type": "reps",
        "order": 1,
        "sets": 3,
        "reps": [15, 12, 10],
        "rest_sec": 60,
        "muscles_utilized": [{"muscle": "Chest", "share": 0.7}, {"muscle": "Triceps", "share": 0.3}],
        "goals_addressed": [{"goal": "endurance", "share": 1.0}],
        "reasoning": "Bodyweight press.",
    },
    {
        "exercise_name": "Plank",
        "exercise_type": "hold",
        "order": 2,
        "sets": 3,
        "hold_sec": [30, 30, 45],
        "rest_sec": 45,
        "muscles_utilized": [{"muscle": "Abs", "share": 1.0}],
        "goals_addressed": [{"goal": "stability", "share": 1.0}],
        "reasoning": "Core to finish.",
    },
]


@pytest.fixture(autouse=True)
def _settings(settings: Settings) -> None:
    settings.SUPABASE_JWT_SECRET = JWT_SECRET
    settings.SUPABASE_PUBLIC_URL = ""
    settings.AGENT_TURN_RATE = "1000/min"
    settings.PRIMARY_MODEL = "offline"
    settings.INITIALIZER_MODEL = "offline"


@pytest.fixture
def demo() -> ApiUser:
    """The seeded demo user (home equipment): the offline coach builds them a real workout."""
    seed_demo_user()
    return ApiUser(
        user_id=DEMO_USER_ID, token=mint_token(user_id=DEMO_USER_ID, secret=JWT_SECRET), client=Client()
    )


@dataclass
class Frame:
    json: dict[str, Any]
    id: str | None

    @property
    def type(self) -> str:
        return str(self.json["type"])


def read_stream(response: Any, *, until_done: bool = False) -> list[Frame]:
    """Every `data:` frame of an SSE response, with its `id:` line if it had one; with `until_done` up to the
    first `done` (a session stream does not end with its turn)."""

    async def collect() -> list[bytes]:
        chunks = []
        async for chunk in response.streaming_content:
            chunks.append(chunk)
            if until_done and b'"type": "done"' in chunk:
                await response.streaming_content.aclose()
                break
        return chunks

    text = b"".join(async_to_sync(collect)()).decode()
    frames = []
    for block in text.split("\n\n"):
        lines = block.split("\n")
        ids = [line[4:] for line in lines if line.startswith("id: ")]
        for line in lines:
            if line.startswith("data: "):
                frames.append(Frame(json.loads(line[6:]), ids[0] if ids else None))
    return frames


def stream(user: ApiUser, body: dict[str, Any]) -> list[Frame]:
    response = user.post_json(STREAM, body)
    assert response.status_code == 200, response.content
    return read_stream(response)


def start_index(frames: list[Frame], tool: str) -> int:
    """Position of the tool's start frame (its `data.status` is running)."""
    return next(
        i
        for i, frame in enumerate(frames)
        if frame.type == tool
        and frame.json["data"].get("status") == "running"
        and "formatted" not in frame.json
    )


def previews(frames: list[Frame], kind: str) -> list[dict[str, Any]]:
    return [frame.json["data"] for frame in frames if frame.type == kind]


def stored_frames(frames: list[Frame]) -> list[Frame]:
    return [frame for frame in frames if frame.type not in PREVIEW_TYPES]


_IDS = re.compile(
    r"art_[0-9a-f]{12}|ex_[0-9a-f]{6}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)


def without_ids(frames: list[Frame]) -> list[tuple[str | None, str]]:
    """The frames as text with artifact, exercise and session ids blanked (they are random per run)."""
    return [(frame.id, _IDS.sub("…", json.dumps(frame.json, sort_keys=True))) for frame in frames]


def scripted_workout_turn() -> list[LLMResponse]:
    """A workout, its delivery and the end, with fixed call ids (the same answers for every run)."""
    return [
        tool_response("generate_workout", {"workout": {"title": "Anywhere", "exercises": BODYWEIGHT}}),
        tool_response(
            "message_notify_user",
            {
                "message": "Here is a short **bodyweight** workout you can do anywhere.",
                "artifact_id": "{artifact}",
            },
        ),
        tool_response("idle", {"reason": "delivered"}),
    ]


class ArtifactFiller(ScriptedProvider):
    """Plays the script, filling the stored artifact's id into the delivery (as a model reads it)."""

    def complete(self, request: LLMRequest) -> LLMResponse:
        response = super().complete(request)
        call = response.first_tool_call
        if call is None or call.arguments.get("artifact_id") != "{artifact}":
            return response
        found = re.findall(r"art_[0-9a-f]{12}", json.dumps(request.messages))
        arguments = {**call.arguments, "artifact_id": found[-1]}
        return LLMResponse(
            tool_calls=[type(call)(id=call.id, name=call.name, arguments=arguments)],
            text=response.text,
            usage=response.usage,
            stop_reason=response.stop_reason,
            model=response.model,
            raw=response.raw,
        )


class CountingStreams(ScriptedProvider):
    """A scripted model that counts its streamed calls, and those somebody watched (an `on_partial`)."""

    streamed = 0
    watched = 0

    def stream(self, request: LLMRequest, *, on_partial: PartialCallback | None) -> LLMResponse:
        type(self).streamed += 1
        type(self).watched += on_partial is not None
        return super().stream(request, on_partial=on_partial)


# --- where previews come ------------------------------------------------------------------------------


def test_previews_arrive_before_the_calls_own_frames_in_order(demo: ApiUser) -> None:
    """A model writing a whole workout (generate_workout), then its message: each exercise card, then the
    message growing, each before the frames of its call (tool start and result), after the knowledge frames,
    without `id:`; the cards are the delivered workout's exercises and the last text is the message sent."""
    with override_provider("offline", ArtifactFiller(scripted_workout_turn())):
        frames = stream(demo, {"message": "Give me a quick chest workout"})
    kinds = [frame.type for frame in frames]
    assert kinds[0] == "status" and kinds[-1] == "done"

    cards = previews(frames, "exercise_preview")
    texts = previews(frames, "message_preview")
    assert cards and texts, kinds
    assert all(frame.id is None for frame in frames if frame.type in PREVIEW_TYPES)

    workout_start = start_index(frames, "generate_workout")
    card_positions = [i for i, frame in enumerate(frames) if frame.type == "exercise_preview"]
    assert max(i for i, frame in enumerate(frames) if frame.type == "knowledge") < card_positions[0]
    assert max(card_positions) < workout_start, "every card before the workout call's start frame"
    assert [card["index"] for card in cards] == list(range(len(cards))), "one card per exercise, in order"
    assert len({card["call_id"] for card in cards}) == 1 and {card["tool"] for card in cards} == {
        "generate_workout"
    }

    message_start = start_index(frames, "message_notify_user")
    text_positions = [i for i, frame in enumerate(frames) if frame.type == "message_preview"]
    assert (
        start_index(frames, "generate_workout") < min(text_positions) and max(text_positions) < message_start
    )
    words = [text["text"] for text in texts]
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(words)), words
    assert words[-1] == frames[message_start].json["data"]["args"]["message"]

    delivered = next(
        frame.json["artifact"]
        for frame in frames
        if frame.type == "message_notify_user" and "artifact" in frame.json
    )
    stored = [
        {k: v for k, v in exercise.items() if k != "id"} for exercise in delivered["payload"]["exercises"]
    ]
    assert [card["exercise"] for card in cards] == stored


class QueriesWhileWatched(ArtifactFiller):
    """Records every SQL statement run while somebody watches the model write (inside ``on_partial``)."""

    statements: list[str] = []

    def stream(self, request: LLMRequest, *, on_partial: PartialCallback | None) -> LLMResponse:
        def recorded(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
            type(self).statements.append(sql)
            return execute(sql, params, many, context)

        def watched(partial: PartialToolCall) -> None:
            assert on_partial is not None
            with connection.execute_wrapper(recorded):
                on_partial(partial)

        return super().stream(request, on_partial=watched if on_partial else None)


def test_cards_show_the_units_of_the_request_the_model_saw_without_reading_the_database() -> None:
    """A user in pounds: the workout's cards show its loads in pounds, as the model's request did, and
    previewing reads nothing of the user's from the database while the model writes (in a burst, a read there
    waited for a connection the turns' own work held, and the cards with it)."""
    user = make_user()
    upsert_settings(user_id=user.user_id, weight_unit="lb")
    dumbbells = {**BODYWEIGHT[0], "exercise_name": "Push-Up", "load_each": [10, 10, 10], "load_unit": "kg"}
    script = scripted_workout_turn()
    script[0] = tool_response(
        "generate_workout", {"workout": {"title": "Anywhere", "exercises": [dumbbells, BODYWEIGHT[1]]}}
    )
    QueriesWhileWatched.statements = []
    with override_provider("offline", QueriesWhileWatched(script)):
        frames = stream(user, {"message": "A workout I can do anywhere"})
    cards = previews(frames, "exercise_preview")
    assert [card["exercise"]["load_unit"] for card in cards if "load_unit" in card["exercise"]] == ["lb"]
    # Only the catalogue's entry of a name the process had not seen yet (it is remembered: the second turn, the
    # same names, reads nothing).
    assert all('"exercises' in sql for sql in QueriesWhileWatched.statements), QueriesWhileWatched.statements
    QueriesWhileWatched.statements = []
    with override_provider("offline", QueriesWhileWatched(script)):
        stream(user, {"message": "The same again"})
    assert QueriesWhileWatched.statements == []


def test_the_stored_frames_are_the_same_with_previews_and_without() -> None:
    """The same answers streamed with and without previews: the frames other than previews are identical
    (ids, order, content), and only the first has previews."""
    runs = []
    for preview in (True, False):
        script = scripted_workout_turn()
        with override_provider("offline", ArtifactFiller(script)):
            runs.append(stream(make_user(), {"message": "A workout I can do anywhere", "preview": preview}))
    with_previews, without = runs
    assert previews(with_previews, "exercise_preview") and previews(with_previews, "message_preview")
    assert not [frame for frame in without if frame.type in PREVIEW_TYPES]
    assert without_ids(stored_frames(with_previews)) == without_ids(without)


def test_a_failed_workout_still_previews_its_cards_and_its_result_tells_the_client_it_failed() -> None:
    """A workout the tool refuses (equipment the user lacks) had its cards previewed; the result frame that
    replaces them says it failed, and the stream goes on."""
    barbell = {**BODYWEIGHT[0], "exercise_name": "Barbell Bench Press", "equipment": ["barbell", "bench"]}
    script = [
        tool_response("generate_workout", {"workout": {"exercises": [barbell, BODYWEIGHT[1]]}}),
        tool_response("message_notify_user", {"message": "You have no barbell here."}),
        tool_response("idle", {"reason": "done"}),
    ]
    with override_provider("offline", ScriptedProvider(script)):
        frames = stream(make_user(), {"message": "Bench day"})
    assert [card["index"] for card in previews(frames, "exercise_preview")] == [0, 1]
    result = next(frame for frame in frames if frame.type == "generate_workout" and "formatted" in frame.json)
    assert result.json["status"] == "failed"
    assert frames[-1].type == "done"


# --- who gets none ------------------------------------------------------------------------------------


def test_a_request_that_opts_out_gets_no_previews_and_nobody_watches_its_model() -> None:
    """`"preview": false`: today's stream exactly; the model's calls stream (as every trainer call does) but
    nothing reads their input while it is written."""
    CountingStreams.streamed = CountingStreams.watched = 0
    with override_provider("offline", CountingStreams(scripted_workout_turn())):
        frames = stream(make_user(), {"message": "A workout", "preview": False})
    assert frames[-1].type == "done"
    assert not [frame for frame in frames if frame.type in PREVIEW_TYPES]
    assert CountingStreams.streamed > 0
    assert CountingStreams.watched == 0


def test_chat_never_previews(demo: ApiUser) -> None:
    """/agent/chat is unchanged: it accepts the field (one body for both endpoints) and never watches a call."""
    CountingStreams.streamed = CountingStreams.watched = 0
    with override_provider("offline", CountingStreams(scripted_workout_turn()[1:])):
        response = demo.post_json("/agent/chat", {"message": "Hello", "preview": True})
    assert response.status_code == 200, response.content
    assert response.json()["response"]["messages"]
    assert CountingStreams.watched == 0


def test_a_resumed_stream_shows_stored_frames_only(demo: ApiUser) -> None:
    """GET /agent/sessions/<id>/events (from the start, or after a Last-Event-ID) sends no preview: exactly the
    stored frames the turn's own stream sent."""
    with override_provider("offline", ArtifactFiller(scripted_workout_turn())):
        response = demo.post_json(STREAM, {"message": "Give me a quick chest workout"})
        session_id = response["X-Session-Id"]
        live = read_stream(response)
    assert previews(live, "exercise_preview")

    def resumed(**headers: str) -> list[Frame]:
        answer = demo.get(f"/agent/sessions/{session_id}/events", **headers)
        assert answer.status_code == 200
        return read_stream(answer, until_done=True)

    assert without_ids(resumed()) == without_ids(stored_frames(live))
    middle = next(frame.id for frame in live if frame.type == "knowledge" and frame.id is not None)
    assert middle is not None
    again = resumed(HTTP_LAST_EVENT_ID=middle)
    assert not [frame for frame in again if frame.type in PREVIEW_TYPES]
    assert again[-1].type == "done"


# --- the field ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", [STREAM, "/agent/chat"])
@pytest.mark.parametrize(
    ("value", "named"), [("no", "a string"), (0, "a number"), (None, "null"), ([], "an array")]
)
def test_a_preview_that_is_not_a_boolean_is_refused(endpoint: str, value: Any, named: str) -> None:
    """400 with a `detail` naming the field and what was sent; nothing is admitted."""
    user = make_user()
    response = user.post_json(endpoint, {"message": "Hi", "preview": value})
    assert response.status_code == 400
    assert response.json() == {"detail": f"preview: must be a boolean, got {named}."}


def test_the_offline_coachs_drafted_workout_previews_its_message_and_delivers_whole_cards(
    demo: ApiUser,
) -> None:
    """The offline model asks draft_workout for the workout (a short brief, nothing to preview): the workout comes
    whole with its delivery, and the message still grows before its call's frames."""
    frames = stream(demo, {"message": "Give me a quick chest workout"})
    assert not previews(frames, "exercise_preview")
    texts = [text["text"] for text in previews(frames, "message_preview")]
    assert len(texts) >= 2 and all(later.startswith(earlier) for earlier, later in itertools.pairwise(texts))
    drafted = next(frame for frame in frames if frame.type == "draft_workout" and "formatted" in frame.json)
    assert drafted.json["status"] == "done" and drafted.json["data"]["success"], drafted.json
    assert (
        start_index(frames, "draft_workout")
        < frames.index(drafted)
        < start_index(frames, "message_notify_user")
    )
    delivered = next(
        f.json["artifact"] for f in frames if f.type == "message_notify_user" and "artifact" in f.json
    )
    assert delivered["payload"]["exercises"]
