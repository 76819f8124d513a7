"""A checkout's own settings file, `.env`: the local defaults every command of that checkout starts with.

`make run` writes one (DEBUG=1 and a random SECRET_KEY) when it is missing, so `manage.py createsuperuser`,
`chat` and the other commands work in a fresh clone as the README prints them, without exporting anything.
The format is the common subset of dotenv files: `KEY=VALUE` lines, an optional `export ` before the key,
blank lines and `#` comment lines, values optionally in matching single or double quotes (taken as they are:
no escapes, no `${...}` expansion, no comment after a value). Variables already in the environment win.
"""

from __future__ import annotations

import os
import re
from collections.abc import MutableMapping
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

_ASSIGNMENT = re.compile(r"^(?:export\s+)?(?P<key>[A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?P<value>.*)$")


def parse_env_file(text: str, *, source: str = ".env") -> dict[str, str]:
    """The KEY=VALUE pairs of a dotenv text; a line that is none of the above is an error naming it."""
    values: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _ASSIGNMENT.match(stripped)
        if match is None:
            raise ImproperlyConfigured(f"{source} line {number} is not KEY=VALUE: {stripped[:40]!r}")
        value = match["value"]
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[match["key"]] = value
    return values


def load_env_file(path: Path, environ: MutableMapping[str, str] = os.environ) -> dict[str, str]:
    """Add the file's variables to `environ` where it has none of that name; returns what was added."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    added = {
        key: value for key, value in parse_env_file(text, source=str(path)).items() if key not in environ
    }
    environ.update(added)
    return added
