"""The communication and state tools (docs/contracts.md §11.3 (communication tools)): message_notify_user, message_ask_user, idle.

Argument names are seed 000's; seed 001's `text` (for `message`/`question`) and `attachments`
(displayable ids, see `tools_app.displayables`) are accepted on input but not advertised in the schema,
so the model is shown one way to do each thing.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints
from pydantic.json_schema import SkipJsonSchema

from tools_app.displayables import Displayable, resolve_displayables
from tools_app.formatting import confirmation, summary
from tools_app.registry import register
from tools_app.types import Tool, ToolContext, ToolOutcome

NonEmptyText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class NotifyUserInput(BaseModel):
    message: NonEmptyText = Field(description="Markdown allowed.")
    artifact_id: str | None = Field(
        default=None, description="An artifact of this session, e.g. 'art_3f9a1c'."
    )
    # Seed 001: displayable ids to show ('workout_1', 'ex_001', 'art_…').
    attachments: SkipJsonSchema[list[str] | None] = None


class AskUserInput(BaseModel):
    question: NonEmptyText
    options: list[NonEmptyText] | None = Field(
        default=None, description="One-tap answers, e.g. ['30 min', '45 min']."
    )


class IdleInput(BaseModel):
    reason: NonEmptyText = Field(description="A few words.")


def notify_user(args: NotifyUserInput, ctx: ToolContext) -> ToolOutcome:
    """Send the message; resolve the artifact and attachments it delivers. Unknown ids only warn."""
    artifact_ref = (args.artifact_id or "").strip()
    wanted = list(dict.fromkeys([*([artifact_ref] if artifact_ref else []), *(args.attachments or [])]))
    found, missing = resolve_displayables(session=ctx.session, displayable_ids=wanted)

    artifact: dict[str, Any] | None = None
    attachments: list[Displayable] = []
    for displayable in found:
        if displayable.id == artifact_ref and displayable.artifact is not None:
            artifact = displayable.artifact
        else:
            attachments.append(displayable)
    if artifact is None:
        # Seed 001 style: the first workout among the attachments is the one delivered.
        artifact = next((d.artifact for d in attachments if d.kind == "workout"), None)

    data: dict[str, Any] = {"message": args.message}
    if artifact is not None:
        data["artifact_id"] = artifact.get("artifact_id")
        data["artifact"] = artifact
    if attachments:
        data["attachments"] = [d.as_attachment() for d in attachments]
    warnings = [
        f"artifact {missing_id} not found"
        if missing_id == artifact_ref
        else f"attachment {missing_id} not found"
        for missing_id in missing
    ]
    if warnings:
        data["warning"] = "; ".join(warnings)

    delivered = f"delivered {data['artifact_id']}" if artifact is not None else None
    note = "; ".join(part for part in (delivered, data.get("warning")) if part) or None
    return ToolOutcome(success=True, data=data, text=confirmation(note=note), delivered_artifact=artifact)


def ask_user(args: AskUserInput, ctx: ToolContext) -> ToolOutcome:
    """Put the question to the user; the loop then waits for their answer."""
    data = {"question": args.question, "options": args.options, "awaiting_response": True}
    return ToolOutcome(success=True, data=data, text=summary("asked", args.question) + "; awaiting answer")


def go_idle(args: IdleInput, ctx: ToolContext) -> ToolOutcome:
    """Mark the work finished; the loop stops."""
    return ToolOutcome(
        success=True, data={"idle": True, "reason": args.reason}, text=summary("idle", args.reason)
    )


MESSAGE_NOTIFY_USER = register(
    Tool(
        name="message_notify_user",
        description=(
            "Send the user a message without waiting for a reply. Pass artifact_id to show a workout, timer "
            "or plan you created; otherwise the user never sees it."
        ),
        input_model=NotifyUserInput,
        handler=notify_user,
        category="communication",
        priority=10,
        observation="confirmation",
        aliases={"text": "message"},
        writes=False,
    )
)

MESSAGE_ASK_USER = register(
    Tool(
        name="message_ask_user",
        description=(
            "Ask the user a question and stop until they answer, only when you cannot go on without it."
        ),
        input_model=AskUserInput,
        handler=ask_user,
        category="communication",
        priority=11,
        observation="full",
        aliases={"text": "question"},
        terminates_loop=True,
        writes=False,
    )
)

IDLE = register(
    Tool(
        name="idle",
        description=(
            "Stop until the user writes again, once every task is done and delivered with "
            "message_notify_user."
        ),
        input_model=IdleInput,
        handler=go_idle,
        category="state",
        priority=900,
        observation="confirmation",
        status_start="Wrapping up...",
        status_done="All done",
        terminates_loop=True,
        writes=False,
    )
)
