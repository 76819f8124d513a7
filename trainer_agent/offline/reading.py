"""What the offline model reads of its request, as a model reads it: the `<user_data>` block and the messages
(split at the latest real user message into history and this turn's tool calls with their results).

Nothing here touches the database: the user's date, units, locations and equipment come from `<user_data>`,
the current workout from the latest `<artifact type="exercise_list">` block (one line per exercise, tagged
"warm-up" / "cool-down" and with its equipment), the data the initializer loaded from `<knowledge>` blocks.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

_SECTION = r"<{tag}>\s*(.*?)\s*</{tag}>"
INJECTED_PREFIXES = ("<knowledge", "<artifact", "<checkpoint", "<pending_question")
_ARTIFACT_ID = re.compile(r"\bart_[0-9a-zA-Z]+\b")
_KNOWLEDGE = re.compile(r'\s*<knowledge source="([^"]+)">\n?(.*)</knowledge>\s*$', re.S)
_EXERCISE_LINE = re.compile(r"^(?P<order>\d+)\. \[(?P<id>[^\]]*)\] (?P<rest>.+)$")
_SETS = re.compile(r"^(?P<sets>\d+)×(?P<what>\d+s?)")


def _section(xml: str, tag: str) -> str:
    found = re.search(_SECTION.format(tag=tag), xml, re.S)
    return found.group(1) if found else ""


def _field(text: str, name: str) -> str:
    found = re.search(rf"^\s*{name}:\s*(.+)$", text, re.M)
    return found.group(1).strip() if found else ""


@dataclass(frozen=True)
class UserData:
    """The `<user_data>` block: today, units, name, the current location and the others."""

    today: date | None = None
    weight_unit: str = "kg"
    location: str | None = None
    equipment: tuple[str, ...] = ()  # names as listed ("Dumbbells", "Pull-up Bar")
    other_locations: tuple[str, ...] = ()
    name: str = ""

    @classmethod
    def parse(cls, xml: str) -> UserData:
        iso = re.search(r"\((\d{4}-\d{2}-\d{2})\)", _section(xml, "today"))
        current = _section(xml, "current_location")
        equipment = tuple(
            re.sub(r"\s*\(.*$|:.*$", "", line.strip()[2:])
            for line in current.splitlines()
            if line.strip().startswith("- ")
        )
        others = tuple(
            re.sub(r"\s*\(current\)$", "", line[2:].split(":", 1)[0]).strip()
            for line in _section(xml, "other_locations").splitlines()
            if line.startswith("- ")
        )
        return cls(
            today=date.fromisoformat(iso.group(1)) if iso else None,
            weight_unit=_field(_section(xml, "unit_preferences"), "Weight") or "kg",
            location=_field(current, "Location") or None,
            equipment=equipment,
            other_locations=others,
            name=_field(_section(xml, "body_stats"), "Name"),
        )

    @property
    def locations(self) -> tuple[str, ...]:
        return ((self.location,) if self.location else ()) + self.other_locations


def _listed_exercise(line: str) -> dict[str, Any] | None:
    """One artifact line as the exercise fields the coach reads: id, order, name, type, sets, section, equipment."""
    found = _EXERCISE_LINE.match(line.strip())
    if found is None:
        return None
    main, *tags = found.group("rest").split("; ")
    name, _, details = main.partition(" — ")
    exercise: dict[str, Any] = {
        "id": found.group("id"),
        "order": int(found.group("order")),
        "exercise_name": name,
    }
    sets = _SETS.match(details)
    if "/" in details.split(",")[0] and sets:
        exercise["exercise_type"] = "intervals"
    elif sets:
        exercise["sets"] = int(sets.group("sets"))
        exercise["exercise_type"] = "hold" if sets.group("what").endswith("s") else "reps"
    elif re.match(r"^[\d.]+\s*min", details):
        exercise["exercise_type"] = "duration"
    for tag in tags:
        if tag in ("warm-up", "cool-down"):
            exercise["group"] = {"type": tag.replace("-", "")}
        elif tag.startswith("equipment: "):
            exercise["equipment"] = [item.strip().replace(" ", "_") for item in tag[11:].split(",")]
    return exercise


@dataclass
class Artifact:
    artifact_id: str
    title: str
    exercises: list[dict[str, Any]] = field(default_factory=list)


def _blocks(content: Any) -> list[dict[str, Any]]:
    """A message's content as blocks (a string is one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [dict(block) for block in content or () if isinstance(block, Mapping)]


def _texts(messages: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    """Every text block of the messages, in order."""
    for message in messages:
        for block in _blocks(message.get("content")):
            yield str(block.get("text", ""))


def artifact_blocks(messages: Sequence[Mapping[str, Any]]) -> list[Artifact]:
    """Every workout artifact block of the conversation, oldest first."""
    found = []
    for text in _texts(messages):
        head = re.match(
            r'\s*<artifact type="(exercise_list|workout)" id="([^"]*)">\n(.*?)</artifact>', text, re.S
        )
        if head is None:
            continue
        title, *lines = head.group(3).strip().splitlines() or [""]
        listed = [exercise for line in lines if (exercise := _listed_exercise(line)) is not None]
        found.append(Artifact(head.group(2), title, listed))
    return found


def knowledge(messages: Sequence[Mapping[str, Any]], source: str) -> str | None:
    """The latest `<knowledge source=...>` block of one source (append-only: the later one is current)."""
    named = [
        match.group(2).strip()
        for text in _texts(messages)
        if (match := _KNOWLEDGE.match(text)) and match.group(1) == source
    ]
    return named[-1] if named else None


@dataclass(frozen=True)
class Step:
    """One tool call of the conversation and its result (`ok` None when no result has arrived)."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    ok: bool | None
    text: str

    @property
    def body(self) -> str:
        """The observation without its `<tool_result>` / `<tool_error>` wrapper."""
        return re.sub(r"^\s*<tool_(?:result|error)[^>]*>\s*|\s*</tool_(?:result|error)>\s*$", "", self.text)

    def first_problem(self) -> str:
        lines = [line.strip() for line in self.body.splitlines() if line.strip()]
        listed = [line[2:] for line in lines if line.startswith("- ")]
        return (listed or lines or ["it did not work"])[0]


@dataclass
class Transcript:
    """The latest user message, this turn's steps, and what came before."""

    user_text: str = ""
    earlier_user_texts: list[str] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    earlier_steps: list[Step] = field(default_factory=list)
    artifact_ids: list[str] = field(default_factory=list)
    logged_artifacts: set[str] = field(default_factory=set)  # workouts shown, then logged
    fresh_knowledge: dict[str, str] = field(default_factory=dict)  # source → data loaded for this message

    def calls(self, name: str) -> list[Step]:
        return [step for step in self.steps if step.name == name]

    def succeeded(self, name: str) -> list[Step]:
        return [step for step in self.steps if step.name == name and step.ok]

    def failed(self, name: str) -> list[Step]:
        return [step for step in self.steps if step.name == name and step.ok is False]

    @property
    def last(self) -> Step | None:
        return self.steps[-1] if self.steps else None

    def previous_question(self) -> Step | None:
        """The question the coach asked just before the latest user message, if that was its last act."""
        last = self.earlier_steps[-1] if self.earlier_steps else None
        return last if last is not None and last.name == "message_ask_user" else None


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(str(block.get("text", "")) for block in _blocks(content) if block.get("type") == "text")


def is_user_text(text: str) -> bool:
    """A text block the person wrote (not knowledge, an artifact or a checkpoint the system added)."""
    return not text.lstrip().startswith(INJECTED_PREFIXES)


def read_transcript(messages: Sequence[Mapping[str, Any]]) -> Transcript:
    """Split the messages at the latest real user text: before it is history, after it is this turn."""
    flat: list[tuple[str, dict[str, Any]]] = [
        (str(message.get("role", "")), block)
        for message in messages
        for block in _blocks(message.get("content"))
    ]
    results: dict[str, tuple[bool, str]] = {}
    for role, block in flat:
        if role == "user" and block.get("type") == "tool_result":
            text = _result_text(block.get("content"))
            failed = bool(block.get("is_error")) or text.lstrip().startswith("<tool_error")
            results[str(block.get("tool_use_id", ""))] = (not failed, text)
    latest = max(
        (
            index
            for index, (role, block) in enumerate(flat)
            if role == "user" and block.get("type") == "text" and is_user_text(str(block.get("text", "")))
        ),
        default=-1,
    )
    transcript = Transcript()
    shown = ""  # the latest workout artifact shown so far
    for index, (role, block) in enumerate(flat):
        kind = block.get("type")
        if role == "user" and kind == "text":
            text = str(block.get("text", ""))
            if text.lstrip().startswith("<artifact"):
                shown = next(iter(_ARTIFACT_ID.findall(text.split("\n", 1)[0])), shown)
            if index == latest:
                transcript.user_text = text.strip()
            elif is_user_text(text) and index < latest:
                transcript.earlier_user_texts.append(text.strip())
            elif index > latest and (loaded := _KNOWLEDGE.match(text)):
                transcript.fresh_knowledge[loaded.group(1)] = loaded.group(2)
            elif index > latest and text.lstrip().startswith("<artifact"):
                transcript.artifact_ids += _ARTIFACT_ID.findall(text.split("\n", 1)[0])
        elif role == "assistant" and kind == "tool_use":
            call_id = str(block.get("id", ""))
            ok, text = results.get(call_id, (None, ""))
            arguments = block.get("input") if isinstance(block.get("input"), dict) else {}
            step = Step(call_id, str(block.get("name", "")), dict(arguments or {}), ok, text)
            if step.name == "log_workout" and ok and shown:
                transcript.logged_artifacts.add(shown)
            (transcript.steps if index > latest else transcript.earlier_steps).append(step)
    return transcript
