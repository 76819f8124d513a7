"""A fresh clone of the checkout in a temporary directory, set up the way `make run` sets it up.

The copy holds the checkout's files without anything a clone would not have (.git, .venv, .env, databases,
collected static files, caches); its `.venv` links to the virtualenv running the tests, so the README's
`.venv/bin/python manage.py …` lines run there as printed. `make .env` (the recipe `make run` uses) writes the
local settings, then migrate, seed_demo and collectstatic run as in `make run`.

Commands get the environment of a new terminal (PATH, HOME, a UTF-8 locale) and nothing else: no DEBUG, no
SECRET_KEY, no DATABASE_URL, so the copy's `.env` and its own SQLite database are all the settings they see.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.live_server import BASE_DIR

# What a clone does not have, or what `make run` creates (besides `.env`, which is the point of the tests).
NOT_IN_A_CLONE = (
    ".git",
    ".venv",
    ".env",
    "var",
    "*.sqlite3",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    ".pytest_cache",
    "*.egg-info",
)
# The variables a new terminal has; whatever else the test process carries stays out.
TERMINAL_VARIABLES = ("PATH", "HOME", "TMPDIR", "USER")
COMMAND_TIMEOUT_S = 300


class CommandFailed(AssertionError):
    pass


@dataclass(frozen=True)
class FreshClone:
    root: Path

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {name: os.environ[name] for name in TERMINAL_VARIABLES if name in os.environ}
        env["LANG"] = "C.UTF-8"
        env.update(extra or {})
        return env

    def run(
        self, command: str, *, stdin: str | None = None, extra_env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run `command` (a shell-style line, no pipes) in the clone; fails the test unless it exits 0."""
        completed = subprocess.run(
            shlex.split(command),
            cwd=self.root,
            env=self.env(extra_env),
            input=stdin if stdin is not None else "",
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
        )
        if completed.returncode != 0:
            raise CommandFailed(
                f"`{command}` exited {completed.returncode}\n"
                f"stdout:\n{completed.stdout[-3000:]}\nstderr:\n{completed.stderr[-3000:]}"
            )
        return completed

    def read_env_file(self) -> str:
        return (self.root / ".env").read_text()


def make_fresh_clone(directory: Path) -> FreshClone:
    """Copy the checkout to `directory`, link its .venv, and set it up like `make run` (without serving)."""
    if shutil.which("make") is None:
        pytest.skip("`make` is not installed: the clone's .env is written by `make .env`")
    root = directory / "checkout"
    shutil.copytree(BASE_DIR, root, ignore=shutil.ignore_patterns(*NOT_IN_A_CLONE), symlinks=True)
    (root / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    clone = FreshClone(root=root)
    clone.run("make --no-print-directory .env")
    for command in ("migrate --noinput", "seed_demo", "collectstatic --noinput -v0"):
        clone.run(f".venv/bin/python manage.py {command}")
    return clone


@pytest.fixture(scope="session")
def fresh_clone(tmp_path_factory: pytest.TempPathFactory) -> FreshClone:
    """One clone per test session (each user of it must leave it usable for the others)."""
    return make_fresh_clone(tmp_path_factory.mktemp("fresh-clone"))
