"""Displayables (docs/contracts.md §11.7 (displayables)): ids the model uses to show stored things to the user.

The session's `artifact` events are the only store; nothing is kept in memory. An id resolves as:
- `art_…`      → the artifact with that id (seed 000 ids);
- `workout_N`  → the Nth workout artifact of the session, counting from 1 (seed 001 ids);
- anything else (`ex_…`, or an exercise UUID) → the exercise with that `id` in the session's workout
  artifacts, newest first, so a modified workout's version of an exercise wins.

A workout artifact is one whose type is in `WORKOUT_ARTIFACT_TYPES`, holding `payload.exercises`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from sessions_app.models import AgentSession, AgentSessionEvent, EventType
from sessions_app.selectors import get_artifact

WORKOUT_ARTIFACT_TYPES = frozenset({"exercise_list", "workout"})
ARTIFACT_ID_PREFIX = "art_"
_WORKOUT_ID = re.compile(r"^workout_([1-9][0-9]*)$")

DisplayableKind = Literal["workout", "exercise", "artifact"]


@dataclass(frozen=True)
class Displayable:
    """A resolved id: a workout or other artifact (`data` is the artifact) or one exercise."""

    kind: DisplayableKind
    id: str
    data: dict[str, Any]

    @property
    def artifact(self) -> dict[str, Any] | None:
        return None if self.kind == "exercise" else self.data

    def as_attachment(self) -> dict[str, Any]:
        """The seed 001 SSE attachment shape `{type, id, data}`."""
        return {"type": self.kind, "id": self.id, "data": self.data}


def is_workout_artifact(artifact: dict[str, Any]) -> bool:
    return artifact.get("type") in WORKOUT_ARTIFACT_TYPES


def resolve_displayable(*, session: AgentSession, displayable_id: str) -> Displayable | None:
    """The displayable `displayable_id` names in this session, or None."""
    return _SessionDisplayables(session).resolve(displayable_id)


def session_workouts(*, session: AgentSession) -> list[dict[str, Any]]:
    """The session's workout artifacts, oldest first (every version of a changed workout)."""
    return _SessionDisplayables(session).workouts


def resolve_displayables(
    *, session: AgentSession, displayable_ids: Iterable[str]
) -> tuple[list[Displayable], list[str]]:
    """Resolve several ids with one look at the session: (found in the given order, ids not found)."""
    displayables = _SessionDisplayables(session)
    found: list[Displayable] = []
    missing: list[str] = []
    for displayable_id in displayable_ids:
        resolved = displayables.resolve(displayable_id)
        if resolved is None:
            missing.append(displayable_id)
        else:
            found.append(resolved)
    return found, missing


class _SessionDisplayables:
    """One session's displayables, reading its workout artifacts at most once."""

    def __init__(self, session: AgentSession) -> None:
        self.session = session

    @cached_property
    def workouts(self) -> list[dict[str, Any]]:
        events = AgentSessionEvent.objects.filter(
            session=self.session, event_type=EventType.ARTIFACT
        ).order_by("sequence_number")
        artifacts = [event.data for event in events if isinstance(event.data, dict)]
        return [artifact for artifact in artifacts if is_workout_artifact(artifact)]

    def resolve(self, displayable_id: str) -> Displayable | None:
        displayable_id = displayable_id.strip()
        if not displayable_id:
            return None
        if displayable_id.startswith(ARTIFACT_ID_PREFIX):
            artifact = get_artifact(session=self.session, artifact_id=displayable_id)
            if artifact is None:
                return None
            kind: DisplayableKind = "workout" if is_workout_artifact(artifact) else "artifact"
            return Displayable(kind=kind, id=displayable_id, data=artifact)
        match = _WORKOUT_ID.match(displayable_id)
        if match:
            number = int(match.group(1))
            if number > len(self.workouts):
                return None
            return Displayable(kind="workout", id=displayable_id, data=self.workouts[number - 1])
        for workout in reversed(self.workouts):
            payload = workout.get("payload") or {}
            for exercise in payload.get("exercises") or ():
                if isinstance(exercise, dict) and str(exercise.get("id")) == displayable_id:
                    return Displayable(kind="exercise", id=displayable_id, data=exercise)
        return None
