"""What the offline model reads of its request, as a model reads it: the `<user_data>` block and the messages.

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
    """The `<user_data>` block: today, units, injuries, the current location and the others."""

    today: date | None = None
    weight_unit: str = "kg"
    location: str | None = None
    equipment: tuple[str, ...] = ()  # names as listed ("Dumbbells", "Pull-up Bar")
    other_locations: tuple[str, ...] = ()
    injuries: str = ""
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
            injuries=_field(_section(xml, "body_stats"), "Injuries"),
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


def _texts(messages: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    """Every text block of the messages, in order (a string content is one block)."""
    for message in messages:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or ()
        for block in blocks:
            if isinstance(block, Mapping):
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
    pattern = re.compile(rf'\s*<knowledge source="{re.escape(source)}">\n?(.*)</knowledge>\s*$', re.S)
    found = [match.group(1).strip() for text in _texts(messages) if (match := pattern.match(text))]
    return found[-1] if found else None
