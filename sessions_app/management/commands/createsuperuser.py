"""`manage.py createsuperuser`, Django's own, on the staff connection when there is one (sessions_app/staff.py).

Staff logins live in Django's auth tables, which the application's login (`trainer_app`) may not touch: with
STAFF_DATABASE_URL set the command needs `--database staff`, and says so instead of failing on the database's
"permission denied". (This app precedes django.contrib.auth in INSTALLED_APPS, so this command is the one run.)
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.management.commands.createsuperuser import Command as DjangoCreateSuperuser
from django.core.management.base import CommandError
from django.db import DatabaseError

from sessions_app.staff import staff_alias


class Command(DjangoCreateSuperuser):
    def handle(self, *args: Any, **options: Any) -> Any:
        database = options["database"]
        staff = staff_alias()
        if database != staff:
            raise CommandError(
                f"Staff logins are stored through the staff connection (STAFF_DATABASE_URL is set): run "
                f"`manage.py createsuperuser --database {staff}`."
            )
        try:
            return super().handle(*args, **options)
        except DatabaseError as exc:
            if "permission denied" not in str(exc).lower():
                raise
            raise CommandError(
                f"The database login of --database {database} may not write Django's auth tables "
                f"({str(exc).strip().splitlines()[0]}). Create staff logins with the tables' owner: set "
                "STAFF_DATABASE_URL to the owner's login and add `--database staff`, or run this command with "
                "the owner's DATABASE_URL."
            ) from None
