"""One logging setup for every process (trainer_agent/logs.py): the console format by default, JSON lines with
LOG_FORMAT=json, the call site's `extra` fields and the bound turn ids in both."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent.parent

# A process of the service logging what a worker's turn logs: a console-log line and a record with `extra`.
SCRIPT = """
import datetime, logging, django
django.setup()
from trainer_agent.console import format_event
from trainer_agent.logs import log_context
with log_context(session_id="5e55", turn_id="7a7a"):
    logging.getLogger("agent.console").info(format_event(
        timestamp=datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC), session_id="5e55aaaa-0000",
        event_type="user_message", data={"message": "Hi coach"}, duration_ms=None))
    logging.getLogger("tools_app.registry").info("tool.executed", extra={"tool_name": "idle", "success": True})
logging.getLogger("trainer_agent.worker").warning("outside a turn")
"""


def run(**env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "LOG_FORMAT"))}
    environ.update({"DEBUG": "1", "DJANGO_SETTINGS_MODULE": "config.settings", **env})
    return subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=BASE_DIR, env=environ, capture_output=True, text=True, timeout=120
    )


def expected_console_line() -> str:
    from trainer_agent.console import format_event

    return format_event(
        timestamp=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        session_id="5e55aaaa-0000",
        event_type="user_message",
        data={"message": "Hi coach"},
        duration_ms=None,
    )


def test_the_default_is_the_console_format() -> None:
    """The agent console log prints exactly as docs/contracts.md shows it; other records are one human line each,
    with their `extra` fields and the turn's ids kept."""
    completed = run()
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr.splitlines() == [
        expected_console_line(),
        "INFO tools_app.registry: tool.executed tool_name=idle success=True session_id=5e55 turn_id=7a7a",
        "WARNING trainer_agent.worker: outside a turn",
    ]


def test_json_lines_carry_the_extra_fields_and_the_turn_ids() -> None:
    completed = run(LOG_FORMAT="json")
    assert completed.returncode == 0, completed.stderr
    console, tool, outside = (json.loads(line) for line in completed.stderr.splitlines())
    assert console["logger"] == "agent.console"
    assert console["message"] == expected_console_line()
    assert (console["session_id"], console["turn_id"]) == ("5e55", "7a7a")
    assert tool["level"] == "INFO"
    assert (tool["message"], tool["tool_name"], tool["success"]) == ("tool.executed", "idle", True)
    assert (tool["session_id"], tool["turn_id"]) == ("5e55", "7a7a")
    assert datetime.strptime(tool["time"], "%Y-%m-%dT%H:%M:%S%z")
    assert "turn_id" not in outside


def test_an_unknown_log_format_is_refused_with_the_choices() -> None:
    completed = run(LOG_FORMAT="xml")
    assert completed.returncode != 0
    assert "LOG_FORMAT must be 'console' or 'json', got 'xml'" in completed.stderr
