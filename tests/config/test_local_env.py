"""config/local_env.py: the checkout's `.env`, read before the settings, never over the environment."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.local_env import load_env_file, parse_env_file


def test_parses_assignments_comments_quotes_and_export() -> None:
    """KEY=VALUE lines, blank and # lines skipped, `export ` allowed, one pair of matching quotes removed."""
    text = (
        "# local settings\n"
        "\n"
        "DEBUG=1\n"
        "SECRET_KEY = abc#def=ghi\n"
        "export ALLOWED_HOSTS='example.com,localhost'\n"
        'GREETING="  two words  "\n'
        "EMPTY=\n"
        "HALF='quoted\n"
    )
    assert parse_env_file(text) == {
        "DEBUG": "1",
        "SECRET_KEY": "abc#def=ghi",
        "ALLOWED_HOSTS": "example.com,localhost",
        "GREETING": "  two words  ",
        "EMPTY": "",
        "HALF": "'quoted",
    }


@pytest.mark.parametrize("line", ["DEBUG", "2FAST=1", "some words = 1"])
def test_a_line_that_is_not_an_assignment_is_an_error_naming_the_line(line: str) -> None:
    """A malformed line stops start-up with its file and line number, not with a silently missing setting."""
    with pytest.raises(ImproperlyConfigured, match=r"^\.env line 2 is not KEY=VALUE"):
        parse_env_file(f"DEBUG=1\n{line}\n")


def test_variables_already_in_the_environment_win(tmp_path: Path) -> None:
    """Only names the environment lacks are added; what was added is returned."""
    path = tmp_path / ".env"
    path.write_text("DEBUG=1\nSECRET_KEY=from-file\n")
    environ = {"DEBUG": "0"}
    assert load_env_file(path, environ) == {"SECRET_KEY": "from-file"}
    assert environ == {"DEBUG": "0", "SECRET_KEY": "from-file"}


def test_a_missing_file_changes_nothing(tmp_path: Path) -> None:
    """A checkout without `.env` (production, CI) runs on the environment alone."""
    environ = {"DEBUG": "0"}
    assert load_env_file(tmp_path / ".env", environ) == {}
    assert environ == {"DEBUG": "0"}
