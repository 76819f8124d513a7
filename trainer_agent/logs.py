"""One logging setup for web and worker processes (`config.settings.LOGGING`, chosen by LOG_FORMAT).

- `json`: one JSON object per line on stderr for every record of every logger: time, level, logger, message,
  every `extra={...}` field the call site passed, and the ids of the turn the record belongs to.
- `console` (the default; `make run`): the agent console log (docs/contracts.md "Console log") as before, and
  the other loggers' records as `LEVEL logger: message key=value…` (their `extra` fields appended).

The turn's ids come from `log_context`: a worker binds `turn_id` and `session_id` while it runs a turn
(`trainer_agent.turns.execute_turn`), and `TurnContextFilter` copies what is bound onto each record. Any other
code may bind more fields the same way (a tracing integration: `log_context(trace_id=…)`).

This module is imported by `logging.config.dictConfig` while Django sets up: it must import nothing of Django's
models or of the apps.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pythonjsonlogger.json import JsonFormatter

_context: ContextVar[dict[str, str]] = ContextVar("log_context", default={})  # noqa: B039 (never mutated)

# The attributes every LogRecord has: anything else on a record came from `extra` (or a filter).
_RECORD_ATTRIBUTES = frozenset(
    vars(logging.LogRecord("", 0, "", 0, "", None, None)).keys() | {"message", "asctime", "taskName"}
)


@contextmanager
def log_context(**fields: str) -> Iterator[None]:
    """Every record logged inside the block (this thread or task) carries these fields, besides the ones bound
    by an enclosing block."""
    token = _context.set({**_context.get(), **fields})
    try:
        yield
    finally:
        _context.reset(token)


def bound_fields() -> dict[str, str]:
    return dict(_context.get())


class TurnContextFilter(logging.Filter):
    """Adds the bound fields (`log_context`) to each record that does not set them itself."""

    def filter(self, record: logging.LogRecord) -> bool:
        for key, value in _context.get().items():
            if not hasattr(record, key):
                setattr(record, key, value)
        return True


class JSONLineFormatter(JsonFormatter):
    """python-json-logger's formatter with our field names: `time`, `level`, `logger`, `message`, extras."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("fmt", "%(asctime)s %(levelname)s %(name)s %(message)s")
        kwargs.setdefault("rename_fields", {"asctime": "time", "levelname": "level", "name": "logger"})
        kwargs.setdefault("datefmt", "%Y-%m-%dT%H:%M:%S%z")
        kwargs.setdefault("json_ensure_ascii", False)  # the console log's icons as they are
        super().__init__(*args, **kwargs)


class ConsoleFormatter(logging.Formatter):
    """`LEVEL logger: message key=value…`: a human line that keeps the call site's `extra` fields."""

    def __init__(self) -> None:
        super().__init__("%(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        extras = " ".join(
            f"{key}={value}"
            for key, value in vars(record).items()
            if key not in _RECORD_ATTRIBUTES and not key.startswith("_")
        )
        if not extras:
            return line
        first, newline, rest = line.partition("\n")  # a traceback stays below the line
        return f"{first} {extras}{newline}{rest}"


def logging_config(*, log_format: str, agent_level: str, level: str) -> dict[str, Any]:
    """The LOGGING dict: a root handler in every process (web and worker) in the chosen format."""
    if log_format not in {"console", "json"}:
        raise ValueError(f"LOG_FORMAT must be console or json, got {log_format!r}")
    json_lines = log_format == "json"
    handler = {
        "class": "logging.StreamHandler",
        "formatter": "json" if json_lines else "console",
        "filters": ["turn_context"],
    }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"turn_context": {"()": "trainer_agent.logs.TurnContextFilter"}},
        "formatters": {
            "json": {"()": "trainer_agent.logs.JSONLineFormatter"},
            "console": {"()": "trainer_agent.logs.ConsoleFormatter"},
            "plain": {"format": "%(message)s"},
        },
        "handlers": {
            "root": handler,
            # The console log's own lines, exactly as docs/contracts.md shows them.
            "agent_console": {**handler, "formatter": "json" if json_lines else "plain"},
        },
        "root": {"handlers": ["root"], "level": level},
        "loggers": {
            # Its own handler only: propagating to the root logger would print every line twice.
            "agent.console": {"handlers": ["agent_console"], "level": agent_level, "propagate": False},
            # Django's own records through the same handler (its default console handler would print them twice).
            "django": {"handlers": ["root"], "level": "INFO", "propagate": False},
        },
    }
