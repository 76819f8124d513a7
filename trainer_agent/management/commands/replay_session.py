"""`manage.py replay_session <id>`: print a stored session, export it, or rerun it against a model.

<id> is the session's UUID or its first characters (the 8 the admin shows are enough when no other session's
id starts with them; an ambiguous prefix lists the sessions it could mean).

--format console   the console log of docs/contracts.md §15.1 (console log), one line per event (default)
--format json      one JSON document: {"session": {...}, "events": [...]}
--format jsonl     the session row, then one event per line: loadable by `manage.py import_session`
--from-seq N       only events with sequence number >= N
--rerun [--model M] [--as-user U]
                   replay the recorded user messages in a new session against model M (default
                   `offline`) and print a side-by-side comparison of tool sequences, iterations, tokens
                   and cost. Tools run for real: they act on the data of the session's user (or U).
"""

from __future__ import annotations

import json
import string
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from sessions_app.events import is_trainer
from sessions_app.models import AgentSession, AgentSessionEvent, EventType
from sessions_app.services import create_session
from sessions_app.staff import staff_work
from trainer_agent.console import format_event, k_tokens
from trainer_agent.llm.models import UnknownModel, get_model
from trainer_agent.loop import TurnError
from trainer_agent.management.commands.import_session import event_record, session_record
from trainer_agent.tenancy import acting_for
from trainer_agent.turns import run_turn

FORMATS = ("console", "json", "jsonl")
CURRENT_WORKOUT_SOURCE = "current_workout_session"
EVENT_CHUNK = 500
TOOLS_COLUMN = 58
# Where a canonical id has hyphens: a prefix must follow it ("3f2a9c1b", "3f2a9c1b-0d").
ID_LAYOUT = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
AMBIGUOUS_SHOWN = 5


@dataclass
class Turn:
    """One user message and what the agent did about it, read back from the events."""

    message: str
    current_workout_text: str | None = None
    tools: list[str] = field(default_factory=list)
    iterations: int = 0
    tokens: int = 0
    cached_tokens: int = 0
    cost_cents: float = 0.0
    errors: int = 0
    model: str = ""


def read_turns(events: Iterable[AgentSessionEvent]) -> list[Turn]:
    """Split a session into turns at each user message (events before the first one are ignored)."""
    turns: list[Turn] = []
    for event in events:
        data = event.data if isinstance(event.data, dict) else {}
        if event.event_type == EventType.USER_MESSAGE:
            turns.append(Turn(message=str(data.get("message", ""))))
            continue
        if not turns:
            continue
        turn = turns[-1]
        if event.event_type == EventType.KNOWLEDGE and data.get("source") == CURRENT_WORKOUT_SOURCE:
            turn.current_workout_text = str(data.get("data", ""))
        elif event.event_type == EventType.TOOL_CALL:
            turn.tools.append(str(data.get("tool_name", "?")))
        elif event.event_type == EventType.LLM_REQUEST and is_trainer(data):
            turn.iterations += 1
            turn.model = str(data.get("model", turn.model))
        elif event.event_type == EventType.LLM_RESPONSE:
            tokens: dict[str, Any] = data["tokens"] if isinstance(data.get("tokens"), dict) else {}
            turn.tokens += _number(tokens.get("total"))
            turn.cached_tokens += _number(tokens.get("cached"))
            turn.cost_cents += float(_number(data.get("cost_cents"), integer=False))
        elif event.event_type == EventType.ERROR:
            turn.errors += 1
    return turns


def _number(value: Any, *, integer: bool = True) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return int(value) if integer else value


def rerun_session(
    *,
    session: AgentSession,
    original: list[Turn],
    from_sequence: int,
    model: str,
    user_id: uuid.UUID | None = None,
) -> tuple[AgentSession, list[Turn], list[str]]:
    """Replay the session's user messages (`original`, read from it from `from_sequence` on), one turn each, in
    a new session of its user (or `user_id`), as that user. Returns the new session, its turns, failures."""
    with acting_for(user_id or session.user_id):
        new_session = create_session(
            user_id=user_id or session.user_id,
            metadata={
                "rerun_of": str(session.pk),
                "rerun_from_sequence": from_sequence,
                "rerun_model": model,
            },
        )
        failures = []
        for number, turn in enumerate(original, start=1):
            try:
                run_turn(
                    user_id=new_session.user_id,
                    message=turn.message,
                    session=new_session,
                    model=model,
                    current_workout_text=turn.current_workout_text,
                )
            except TurnError as exc:
                failures.append(f"turn {number}: {exc.kind}: {exc.message}")
        return new_session, read_turns(_events(new_session, 0)), failures


def _events(session: AgentSession, from_sequence: int) -> Iterable[AgentSessionEvent]:
    return (
        AgentSessionEvent.objects.filter(session=session, sequence_number__gte=from_sequence)
        .order_by("sequence_number")
        .iterator(chunk_size=EVENT_CHUNK)
    )


def _preview(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _tool_line(tools: list[str]) -> str:
    line = " → ".join(tools) if tools else "(no tool call)"
    return line if len(line) <= TOOLS_COLUMN else line[: TOOLS_COLUMN - 3] + "..."


def comparison_lines(
    *,
    original_session: AgentSession,
    rerun_session_row: AgentSession,
    original: list[Turn],
    rerun: list[Turn],
    model: str,
) -> list[str]:
    """The side-by-side report: tools and iterations per turn, then totals."""
    original_model = next((turn.model for turn in original if turn.model), "?")
    lines = [
        f"Rerun of session {str(original_session.pk)[:8]} ({original_model}) as "
        f"{str(rerun_session_row.pk)[:8]} ({model}): {len(original)} user messages",
        "",
    ]
    same = 0
    for number, (before, after) in enumerate(zip(original, rerun, strict=False), start=1):
        same += before.tools == after.tools
        lines += [
            f'Turn {number}: "{_preview(before.message)}"',
            f"  original  {_tool_line(before.tools):<{TOOLS_COLUMN}}  {before.iterations} iterations",
            f"  rerun     {_tool_line(after.tools):<{TOOLS_COLUMN}}  {after.iterations} iterations",
            "",
        ]
    for number, turn in enumerate(original[len(rerun) :], start=len(rerun) + 1):
        lines += [f'Turn {number}: "{_preview(turn.message)}"', "  rerun     (not run)", ""]

    def total(turns: list[Turn], name: str) -> float:
        return sum(getattr(turn, name) for turn in turns)

    rows = [
        ("iterations", str(int(total(original, "iterations"))), str(int(total(rerun, "iterations")))),
        ("tool calls", str(sum(len(t.tools) for t in original)), str(sum(len(t.tools) for t in rerun))),
        ("tokens", k_tokens(total(original, "tokens")), k_tokens(total(rerun, "tokens"))),
        (
            "cached tokens",
            k_tokens(total(original, "cached_tokens")),
            k_tokens(total(rerun, "cached_tokens")),
        ),
        ("cost", f"${total(original, 'cost_cents') / 100:.4f}", f"${total(rerun, 'cost_cents') / 100:.4f}"),
        ("errors", str(int(total(original, "errors"))), str(int(total(rerun, "errors")))),
    ]
    lines.append(f"{'':<16}{'original':>12}{'rerun':>12}")
    lines += [f"{label:<16}{left:>12}{right:>12}" for label, left, right in rows]
    lines.append(f"same tool sequence in {same} of {len(original)} turns")
    return lines


def find_session(text: str) -> AgentSession:
    """The session `text` names: its UUID, or a prefix of its canonical id that no other session's id has.
    CommandError for text that cannot start an id, a prefix of no id, and a prefix of several."""
    try:
        session_id = uuid.UUID(text)
    except ValueError:
        pass
    else:
        session = AgentSession.objects.filter(pk=session_id).first()
        if session is None:
            raise CommandError(f"No session {session_id}")
        return session
    prefix = text.strip().lower()
    if not _is_id_prefix(prefix):
        raise CommandError(
            f"{text!r} is not a session id: give the session's id or its first characters, as the admin shows "
            "them (e.g. 3f2a9c1b)."
        )
    digits = prefix.replace("-", "")
    # The ids a prefix can start: a range of UUIDs (the primary key's index; the same on PostgreSQL's uuid and
    # SQLite's hex text, where a LIKE on the text would see the hyphens on one and not the other).
    candidates = AgentSession.objects.filter(
        pk__gte=uuid.UUID(digits.ljust(32, "0")), pk__lte=uuid.UUID(digits.ljust(32, "f"))
    )
    matches = list(candidates.order_by("pk")[:AMBIGUOUS_SHOWN])
    if not matches:
        raise CommandError(f"No session whose id starts with {prefix}")
    if len(matches) > 1:
        count = candidates.count()
        shown = ", ".join(str(session.pk) for session in matches)
        more = f" and {count - len(matches)} more" if count > len(matches) else ""
        raise CommandError(
            f"{prefix} is the start of {count} sessions' ids ({shown}{more}): give more characters."
        )
    return matches[0]


def _is_id_prefix(text: str) -> bool:
    return 0 < len(text) <= len(ID_LAYOUT) and all(
        char == "-" if slot == "-" else char in string.hexdigits
        for char, slot in zip(text, ID_LAYOUT[: len(text)], strict=True)
    )


class Command(BaseCommand):
    help = "Print a stored session (console, json, jsonl) or rerun its user messages against a model."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "session_id", help="the session's id, or its first characters (as the admin shows)"
        )
        parser.add_argument("--format", choices=FORMATS, default="console")
        parser.add_argument("--from-seq", type=int, default=0, dest="from_seq", metavar="N")
        parser.add_argument(
            "--rerun", action="store_true", help="replay the user messages in a new session and compare"
        )
        parser.add_argument("--model", default="offline", help="model for --rerun (default: offline)")
        parser.add_argument(
            "--as-user",
            type=uuid.UUID,
            default=None,
            dest="as_user",
            help="run --rerun as this user instead of the session's (tools act on that user's data)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        from_sequence: int = options["from_seq"]
        if from_sequence < 0:
            raise CommandError("--from-seq must be >= 0")
        # Reading any user's session is staff work (its own login when STAFF_DATABASE_URL is set); a rerun's
        # turns are the user's, under the application's rules.
        with staff_work():
            session = find_session(options["session_id"])
            if not options["rerun"]:
                self._print(session, from_sequence, options["format"])
                return
            original = read_turns(_events(session, from_sequence))
        self._rerun(session, original, from_sequence, options["model"], options["as_user"])

    def _print(self, session: AgentSession, from_sequence: int, output_format: str) -> None:
        events = _events(session, from_sequence)
        if output_format == "console":
            for event in events:
                self.stdout.write(
                    format_event(
                        timestamp=event.timestamp,
                        session_id=session.pk,
                        event_type=event.event_type,
                        data=event.data if isinstance(event.data, dict) else {"value": event.data},
                        duration_ms=event.duration_ms,
                    )
                )
        elif output_format == "jsonl":
            self.stdout.write(json.dumps(session_record(session), ensure_ascii=False))
            for event in events:
                self.stdout.write(json.dumps(event_record(event), ensure_ascii=False))
        else:
            document = {
                "session": session_record(session),
                "events": [event_record(event) for event in events],
            }
            self.stdout.write(json.dumps(document, ensure_ascii=False, indent=2))

    def _rerun(
        self,
        session: AgentSession,
        original: list[Turn],
        from_sequence: int,
        model: str,
        as_user: uuid.UUID | None,
    ) -> None:
        try:
            get_model(model)
        except UnknownModel as exc:
            raise CommandError(str(exc)) from exc
        if not original:
            raise CommandError("The session has no user messages to replay")
        new_session, rerun, failures = rerun_session(
            session=session, original=original, from_sequence=from_sequence, model=model, user_id=as_user
        )
        for line in comparison_lines(
            original_session=session,
            rerun_session_row=new_session,
            original=original,
            rerun=rerun,
            model=model,
        ):
            self.stdout.write(line)
        for failure in failures:
            self.stderr.write(f"rerun {failure}")
        self.stdout.write(f"rerun session: {new_session.pk}")
