"""Whose data a unit of work touches, told to PostgreSQL's row-level security.

docs/architecture.md "Tenant isolation in PostgreSQL": on PostgreSQL the tenant tables show a connection only
the rows of `app.user_id`, a transaction-scoped setting. `acting_for(user_id)` runs its block in one
transaction that starts by setting it (and, when `DATABASE_ASSUME_ROLE` names the application role, by
switching to that role for the transaction: the test run's privileged login does so, so the application
code under test obeys the policies). Both end with the transaction, so a persistent connection never
carries one user's id into the next unit of work. On SQLite it is a plain transaction: the application's
own `user_id` filters are the only isolation there.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections, transaction


@contextmanager
def acting_for(user_id: uuid.UUID | str, *, using: str = DEFAULT_DB_ALIAS) -> Iterator[None]:
    """Run the block in one transaction in which PostgreSQL shows only `user_id`'s tenant rows."""
    connection = connections[using]
    with transaction.atomic(using=using):
        if connection.vendor != "postgresql":
            yield
            return
        role = settings.DATABASE_ASSUME_ROLE
        with connection.cursor() as cursor:
            if role:
                cursor.execute(f"SET LOCAL ROLE {connection.ops.quote_name(role)}")
            cursor.execute("SELECT set_config('app.user_id', %s, true)", [str(uuid.UUID(str(user_id)))])
        yield
        # Inside a caller's longer transaction (a test's), what follows the block is not this user's work.
        # After an exception the block's savepoint is rolled back, which undoes both settings.
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('app.user_id', '', true)")
            if role:
                cursor.execute("SET LOCAL ROLE NONE")
