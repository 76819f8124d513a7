"""message_notify_user, message_ask_user, idle (docs/contracts.md §11.3 (communication tools)) and displayable resolution (docs/contracts.md §11.7 (displayables))."""

from __future__ import annotations

import uuid

import pytest

from sessions_app.models import AgentSession
from sessions_app.services import append_event, create_session
from tests.tools_app.conftest import StoreArtifact, workout_artifact
from tools_app.displayables import resolve_displayable, resolve_displayables
from tools_app.registry import execute_tool, get_tool
from tools_app.types import ToolContext

NOTE_ARTIFACT = {
    "artifact_id": "art_note",
    "type": "note",
    "schema_version": "1.0",
    "title": "A note",
    "summary": {},
    "auto_start": False,
    "payload": {"text": "not a workout"},
}


@pytest.mark.parametrize(
    ("name", "start", "done"),
    [
        ("message_notify_user", None, None),
        ("message_ask_user", None, None),
        ("idle", "Wrapping up...", "All done"),
    ],
)
def test_status_messages_follow_the_seed_table(name: str, start: str | None, done: str | None) -> None:
    """docs/contracts.md §11.2 (observations and status messages): only idle shows status messages among the communication tools."""
    tool = get_tool(name)
    assert (tool.status_start, tool.status_done) == (start, done)


def test_notify_sends_the_message_with_a_bare_confirmation(ctx: ToolContext) -> None:
    """A plain notify succeeds, echoes the message, shows no status and does not stop the loop."""
    result = execute_tool("message_notify_user", {"message": "Hello there"}, ctx)
    assert result.success
    assert result.data == {"message": "Hello there"}
    assert result.formatted == '<tool_result name="message_notify_user">\nok\n</tool_result>'
    assert (result.status_message, result.terminates_loop, result.delivered_artifact) == (None, False, None)


def test_notify_accepts_seed_001_text_spelling(ctx: ToolContext) -> None:
    """`text` is normalised to `message`."""
    result = execute_tool("message_notify_user", {"text": "Hi"}, ctx)
    assert result.success and result.data["message"] == "Hi"


@pytest.mark.parametrize("args", [{"message": ""}, {"message": "   "}, {}])
def test_notify_without_a_message_fails(ctx: ToolContext, args: dict[str, str]) -> None:
    """An empty, blank or missing message is a failed result naming the message field."""
    result = execute_tool("message_notify_user", args, ctx)
    assert not result.success
    assert result.data["error"].startswith("Invalid arguments for message_notify_user: message: ")
    assert "expected non-empty string" in result.data["error"]
    assert result.formatted.startswith('<tool_error name="message_notify_user">')


def test_notify_delivers_a_stored_artifact(ctx: ToolContext, store_artifact: StoreArtifact) -> None:
    """With artifact_id, the artifact event's data is resolved and included (docs/contracts.md §11.3 (communication tools))."""
    artifact = store_artifact(workout_artifact("art_abc", ["ex_1", "ex_2"]))
    result = execute_tool("message_notify_user", {"message": "Your workout", "artifact_id": "art_abc"}, ctx)
    assert result.success
    assert result.data == {"message": "Your workout", "artifact_id": "art_abc", "artifact": artifact}
    assert result.delivered_artifact == artifact
    assert result.artifact is None  # nothing new was created
    assert result.to_dict()["artifact"] == artifact and result.to_dict()["artifact_id"] == "art_abc"
    assert result.raw_formatted == "ok (delivered art_abc)"


def test_notify_with_an_unknown_artifact_warns_but_succeeds(ctx: ToolContext) -> None:
    """An unknown artifact_id is non-fatal: success with a warning the model also reads."""
    result = execute_tool("message_notify_user", {"message": "Here", "artifact_id": "art_missing"}, ctx)
    assert result.success
    assert result.data == {"message": "Here", "warning": "artifact art_missing not found"}
    assert result.raw_formatted == "ok (artifact art_missing not found)"
    assert result.artifact_id is None and result.delivered_artifact is None


def test_notify_does_not_deliver_another_sessions_artifact(ctx: ToolContext) -> None:
    """Artifacts are looked up in the caller's session only."""
    other = create_session(user_id=uuid.uuid4())
    append_event(session=other, event_type="artifact", data=workout_artifact("art_theirs", ["ex_1"]))
    result = execute_tool("message_notify_user", {"message": "x", "artifact_id": "art_theirs"}, ctx)
    assert result.data["warning"] == "artifact art_theirs not found"


def test_notify_attachments_deliver_the_first_workout_and_list_the_rest(
    ctx: ToolContext, store_artifact: StoreArtifact
) -> None:
    """Seed 001 attachments: the first workout becomes the delivered artifact; exercises and unknown ids are reported."""
    first = store_artifact(workout_artifact("art_1", ["ex_a", "ex_b"]))
    store_artifact(workout_artifact("art_2", ["ex_c"]))
    result = execute_tool(
        "message_notify_user", {"text": "Look", "attachments": ["ex_c", "workout_1", "workout_9"]}, ctx
    )
    assert result.success
    assert result.delivered_artifact == first
    assert result.data["artifact_id"] == "art_1"
    assert [(a["type"], a["id"]) for a in result.data["attachments"]] == [
        ("exercise", "ex_c"),
        ("workout", "workout_1"),
    ]
    assert result.data["attachments"][0]["data"]["exercise_name"] == "Exercise ex_c"
    assert result.data["warning"] == "attachment workout_9 not found"


def test_notify_schema_advertises_only_the_canonical_arguments() -> None:
    """The model is shown seed 000's {message, artifact_id}; seed 001's spellings are accepted silently."""
    from tools_app.registry import tool_specs

    (spec,) = tool_specs(["message_notify_user"])
    assert set(spec["input_schema"]["properties"]) == {"message", "artifact_id"}
    assert spec["input_schema"]["required"] == ["message"]


def test_ask_user_waits_for_a_response_and_stops_the_loop(ctx: ToolContext) -> None:
    """message_ask_user returns the question, its options and awaiting_response, and terminates."""
    result = execute_tool("message_ask_user", {"text": "How long?", "options": ["30 min", "45 min"]}, ctx)
    assert result.success and result.terminates_loop
    assert result.data == {
        "question": "How long?",
        "options": ["30 min", "45 min"],
        "awaiting_response": True,
    }
    assert result.raw_formatted == "asked: How long?; awaiting answer"
    assert result.status_message is None


def test_ask_user_options_are_optional(ctx: ToolContext) -> None:
    """Without options the question still goes out, with options null."""
    result = execute_tool("message_ask_user", {"question": "Any injuries?"}, ctx)
    assert result.data["options"] is None


def test_ask_user_without_a_question_fails_and_does_not_stop(ctx: ToolContext) -> None:
    """A blank question is a failed result, so the loop lets the model try again."""
    result = execute_tool("message_ask_user", {"question": " "}, ctx)
    assert not result.success and not result.terminates_loop
    assert "question:" in result.data["error"]


def test_idle_stops_the_loop_with_its_reason(ctx: ToolContext) -> None:
    """idle returns {idle: true, reason}, the 'All done' status, and terminates."""
    result = execute_tool("idle", {"reason": "workout delivered"}, ctx)
    assert result.success and result.terminates_loop
    assert result.data == {"idle": True, "reason": "workout delivered"}
    assert result.status_message == "All done"
    assert result.formatted == '<tool_result name="idle">\nidle: workout delivered\n</tool_result>'


def test_idle_without_a_reason_fails(ctx: ToolContext) -> None:
    """The reason is required (seed 000); a missing one is a correctable failure."""
    result = execute_tool("idle", {}, ctx)
    assert not result.success and not result.terminates_loop
    assert (
        result.data["error"]
        == "Invalid arguments for idle: reason: Field required (expected non-empty string)"
    )


def test_idle_with_an_unknown_argument_is_refused(ctx: ToolContext) -> None:
    """idle {reason, foo: 1} does not end the turn: foo is named as unknown, with the accepted reason."""
    result = execute_tool("idle", {"reason": "done", "foo": 1}, ctx)
    assert not result.success and not result.terminates_loop
    assert result.data["error"] == "Invalid arguments for idle: unknown argument(s) foo (accepted: reason)"


# --- displayables ----------------------------------------------------------------------------------


def test_workout_ids_count_workout_artifacts_only(
    session: AgentSession, store_artifact: StoreArtifact
) -> None:
    """workout_N is the Nth workout artifact of the session, 1-based; other artifact types do not count."""
    store_artifact(NOTE_ARTIFACT)
    first = store_artifact(workout_artifact("art_w1", ["ex_1"]))
    second = store_artifact(workout_artifact("art_w2", ["ex_2"]))
    resolved = [resolve_displayable(session=session, displayable_id=f"workout_{n}") for n in (1, 2)]
    assert [(d.kind, d.data) for d in resolved if d] == [("workout", first), ("workout", second)]
    assert resolve_displayable(session=session, displayable_id="workout_3") is None
    assert resolve_displayable(session=session, displayable_id="workout_0") is None


def test_artifact_ids_resolve_any_artifact_type(session: AgentSession, store_artifact: StoreArtifact) -> None:
    """art_… resolves to the stored artifact; a non-workout artifact has kind 'artifact'."""
    store_artifact(NOTE_ARTIFACT)
    workout = store_artifact(workout_artifact("art_w", ["ex_1"]))
    note = resolve_displayable(session=session, displayable_id="art_note")
    assert note is not None and (note.kind, note.artifact) == ("artifact", NOTE_ARTIFACT)
    found = resolve_displayable(session=session, displayable_id="art_w")
    assert found is not None and (found.kind, found.data) == ("workout", workout)


def test_exercise_ids_resolve_from_the_newest_workout_first(
    session: AgentSession, store_artifact: StoreArtifact
) -> None:
    """ex_… finds the exercise in the latest workout holding it, so a revised workout's version wins."""
    store_artifact(workout_artifact("art_old", ["ex_1", "ex_2"], title="Old"))
    newer = workout_artifact("art_new", ["ex_1"], title="New")
    newer["payload"]["exercises"][0]["exercise_name"] = "Revised squat"
    store_artifact(newer)
    exercise = resolve_displayable(session=session, displayable_id="ex_1")
    assert exercise is not None and exercise.kind == "exercise" and exercise.artifact is None
    assert exercise.data["exercise_name"] == "Revised squat"
    older_only = resolve_displayable(session=session, displayable_id="ex_2")
    assert older_only is not None and older_only.data["exercise_name"] == "Exercise ex_2"
    assert older_only.as_attachment() == {"type": "exercise", "id": "ex_2", "data": older_only.data}


def test_unknown_ids_are_reported_missing(session: AgentSession, store_artifact: StoreArtifact) -> None:
    """resolve_displayables keeps the given order for found ids and lists the unknown ones."""
    store_artifact(workout_artifact("art_w", ["ex_1"]))
    found, missing = resolve_displayables(
        session=session, displayable_ids=["ex_9", "workout_1", "", "art_nope", "ex_1"]
    )
    assert [d.id for d in found] == ["workout_1", "ex_1"]
    assert missing == ["ex_9", "", "art_nope"]
