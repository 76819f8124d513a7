"""Hooks through which higher apps add to the session admin without sessions_app importing them.

trainer_agent registers, from its AppConfig.ready():
- event actions: an admin page for one event (e.g. "Replay step" on trainer llm_request events), served at
  `admin/sessions_app/agentsessionsummary/<session id>/events/<sequence>/<action name>/` for staff only;
- the console describer: the icons and one-line descriptions of seed 000 §11.3, used by the timeline.

Without registrations the admin still works: events show their type and no action links.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
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
