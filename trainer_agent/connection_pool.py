"""Borrowing a pooled connection only while the database is used (docs/architecture.md "Connections").

On PostgreSQL each process lends its connections from Django's psycopg pool (`DATABASES[...]["OPTIONS"]
["pool"]`, config/settings.py): a thread's first statement borrows one, and Django's `close()` gives it back.
A turn waits on its model most of the time, so its worker thread gives the connection back around each model
call (`tracing.model_call_span`), after each unit of work and before an idle wait; the next statement borrows
again. That is what lets one worker run many turns on a few connections.

Giving back never happens inside a transaction (an `atomic` block owns its connection until it ends), and it is
safe for row-level security: `tenancy` sets the tenant per transaction (`set_config(…, true)`), so a connection
goes back to the pool with no tenant, and the pool rolls back one returned in a transaction. Without a pool
(SQLite, DATABASE_POOL=0) it does nothing: the thread keeps its connection, as before.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import DEFAULT_DB_ALIAS, connections


def pooled(*, using: str = DEFAULT_DB_ALIAS) -> bool:
    """Whether the alias lends its connections from a pool."""
    return bool(connections[using].settings_dict.get("OPTIONS", {}).get("pool"))


def give_back_connection(*, using: str = DEFAULT_DB_ALIAS) -> None:
    """Return the thread's connection to the pool, unless a transaction is open on it or there is no pool."""
    connection = connections[using]
    if connection.connection is None or connection.in_atomic_block or not pooled(using=using):
        return
    connection.close()


def giving_back_after[**P, R](fn: Callable[P, R]) -> Callable[P, R]:
    """`fn`, returning the thread's connection to the pool after each call (a callback during a model call)."""

    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        finally:
            give_back_connection()

    return call
