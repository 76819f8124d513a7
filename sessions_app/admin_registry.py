"""Hooks through which higher apps add to the session admin without sessions_app importing them.

trainer_agent registers, from its AppConfig.ready():
- event actions: an admin page for one event (e.g. "Replay step" on trainer llm_request events), served at
  `admin/sessions_app/agentsessionsummary/<session id>/events/<sequence>/<action name>/` for staff only;
- the console describer: the icons and one-line descriptions of docs/contracts.md §15.1 (console log), used by the timeline;
- the user labeller: names staff recognise (the profile's display name) for user ids, which sessions_app
  stores alone;
- the exercise format: the cells of a workout artifact's exercise in the timeline's table (its prescription
  "3×10 @ 20kg each hand", rest, muscles, group, equipment), read by the same typed model and rendering every
  other surface uses (datasources_app.formatters.exercise_cells).

Without registrations the admin still works: events show their type and no action links, users their id.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from uuid import UUID

from django.http import HttpRequest, HttpResponse


class EventActionView(Protocol):
    def __call__(
        self, request: HttpRequest, *, session_id: UUID, sequence: int, admin_context: dict[str, Any]
    ) -> HttpResponse: ...


type EventPredicate = Callable[[str, dict[str, Any]], bool]
type EventDescriber = Callable[[str, dict[str, Any], int | None], str]
# Labels for as many of the given user ids as it knows, in one read (the list asks once per page).
type UserLabeller = Callable[[Collection[UUID]], Mapping[UUID, str]]
# One exercise of a workout artifact (and its 1-based position) as the timeline's table cells: order, name,
# kind, prescription ("3×10 @ 20kg each hand"), rest, muscles, group, equipment.
type ExerciseFormat = Callable[[Mapping[str, Any], int], Mapping[str, str]]
EXERCISE_CELLS = ("order", "name", "kind", "prescription", "rest", "muscles", "group", "equipment")


@dataclass(frozen=True)
class EventAction:
    """A staff page about one event. `applies_to(event_type, data)` decides which events link to it."""

    name: str
    label: str
    view: EventActionView
    applies_to: EventPredicate


@dataclass(frozen=True)
class ConsoleFormat:
    icons: Mapping[str, str]
    describe: EventDescriber


DEFAULT_ICON = "•"

_lock = threading.Lock()
_actions: dict[str, EventAction] = {}
_console: list[ConsoleFormat] = []
_user_labellers: list[UserLabeller] = []
_exercise_formats: list[ExerciseFormat] = []


def register_event_action(
    *, name: str, label: str, view: EventActionView, applies_to: EventPredicate
) -> None:
    """Offer `view` for the events `applies_to` accepts; registering a name again replaces it."""
    if not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"event action names are slugs, got {name!r}")
    with _lock:
        _actions[name] = EventAction(name=name, label=label, view=view, applies_to=applies_to)


def event_actions() -> list[EventAction]:
    with _lock:
        return list(_actions.values())


def get_event_action(name: str) -> EventAction | None:
    with _lock:
        return _actions.get(name)


def register_console_format(*, icons: Mapping[str, str], describe: EventDescriber) -> None:
    """Use these icons and one-line descriptions (the console log's) in the timeline."""
    with _lock:
        _console[:] = [ConsoleFormat(icons=dict(icons), describe=describe)]


def event_icon(event_type: str) -> str:
    with _lock:
        console = _console[0] if _console else None
    return console.icons.get(event_type, DEFAULT_ICON) if console else DEFAULT_ICON


def describe_event(event_type: str, data: dict[str, Any], duration_ms: int | None) -> str:
    """The console's description of the event, or its type when no describer is registered or it fails."""
    with _lock:
        console = _console[0] if _console else None
    if console is None:
        return event_type
    try:
        return console.describe(event_type, data, duration_ms)
    except Exception:  # odd data in one event must not break the whole timeline
        return event_type


def register_user_labeller(labeller: UserLabeller) -> None:
    """Show users by `labeller`'s labels (e.g. display names) in the session admin; replaces any earlier one."""
    with _lock:
        _user_labellers[:] = [labeller]


def user_labels(user_ids: Collection[UUID]) -> dict[UUID, str]:
    """Labels of those users that have one; none when no labeller is registered."""
    with _lock:
        labeller = _user_labellers[0] if _user_labellers else None
    if labeller is None or not user_ids:
        return {}
    return {user_id: label for user_id, label in labeller(user_ids).items() if label}


def register_exercise_format(describe: ExerciseFormat) -> None:
    """Show a workout artifact's exercises by `describe`; replaces any earlier one."""
    with _lock:
        _exercise_formats[:] = [describe]


def describe_exercise(exercise: Mapping[str, Any], position: int) -> dict[str, str]:
    """The registered cells of one exercise (each of EXERCISE_CELLS); without a registration, or when it fails
    on odd data, its position and "—" for the rest."""
    with _lock:
        describe = _exercise_formats[0] if _exercise_formats else None
    cells = dict.fromkeys(EXERCISE_CELLS, "")
    cells.update(order=str(position), name="—", prescription="—")
    if describe is None:
        return cells
    try:
        return {**cells, **{key: str(value) for key, value in describe(exercise, position).items()}}
    except Exception:  # one odd exercise must not break the whole timeline
        return cells
