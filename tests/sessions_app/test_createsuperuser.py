"""`manage.py createsuperuser` where staff work has its own connection (README "PostgreSQL and row-level security")."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from sessions_app.management.commands import createsuperuser

pytestmark = pytest.mark.django_db


def test_without_database_staff_it_says_how_instead_of_failing_on_the_database(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With STAFF_DATABASE_URL set (staff work on the `staff` alias), the application's login may not write the
    auth tables: the command names the flag to add and writes nothing. The test process has one connection, so
    only the command is told that staff work has its own alias."""
    monkeypatch.setattr(createsuperuser, "staff_alias", lambda: "staff")
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "a long enough test password")
    with pytest.raises(CommandError, match=r"createsuperuser --database staff"):
        call_command("createsuperuser", "--noinput", "--username", "ops", "--email", "ops@example.com")
    assert not User.objects.filter(username="ops").exists()


def test_with_one_login_it_is_djangos_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "a long enough test password")
    call_command("createsuperuser", "--noinput", "--username", "ops", "--email", "ops@example.com")
    assert User.objects.get(username="ops").is_superuser
