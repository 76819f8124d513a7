"""The server processes keep what they made at start-up out of the garbage collector's full runs: a full
collection in a busy worker went through ~300k start-up objects (200-400 ms with every thread stopped)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# What a full collection would go through after start-up: every object the collector still tracks.
REPORT = (
    "import gc, json; print(json.dumps({'frozen': gc.get_freeze_count(), 'tracked': len(gc.get_objects())}))"
)


def _run(code: str) -> dict[str, int]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    env.pop("DATABASE_URL", None)  # SQLite: nothing here reads the database
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report: dict[str, int] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def test_the_worker_command_leaves_its_start_up_objects_out_of_full_collections() -> None:
    """Once `manage.py worker` has set up, a full collection goes through a small part of what it holds."""
    report = _run(
        "import django; django.setup()\n"
        "from django.core.management import call_command\n"
        "from trainer_agent.management.commands import worker\n"
        f"worker.WorkerPool.run = lambda self: exec({REPORT!r})\n"
        "call_command('worker', threads=1)\n"
    )
    assert report["frozen"] > 100_000
    assert report["tracked"] < report["frozen"] / 10


def test_the_web_application_leaves_its_start_up_objects_out_of_full_collections() -> None:
    """Once daphne has loaded the ASGI application, a full collection goes through a small part of what it holds."""
    report = _run(f"import config.asgi\n{REPORT}\n")
    assert report["frozen"] > 100_000
    assert report["tracked"] < report["frozen"] / 10
