"""Telling a lost database connection from a failed statement, and what the service does about each.

PostgreSQL may end a connection at any time (a restart, a failover, `pg_terminate_backend`, a network cut).
Django wraps the driver's errors (`django.db.OperationalError`, `InterfaceError`; `tenancy` runs its
`set_config` under the same wrapping), and when the failure happened in an `atomic` block it drops the dead
connection (its rollback fails) and may already have opened a new one by the time the error reaches the caller,
which then sees the first error, or the `TransactionManagementError` of a statement that came after it. So a
lost connection is recognised by its error: an operational or interface error anywhere in the chain (psycopg's
`AdminShutdown` is one), or any database error after which the connection does not answer. A statement that
failed on a healthy connection (a bug, a constraint) is not one. docs/architecture.md "Recovery" says what each
tier does with it.
"""

from __future__ import annotations

import psycopg
from django.db import DEFAULT_DB_ALIAS, Error, InterfaceError, OperationalError, connections

_LOST = (OperationalError, InterfaceError, psycopg.OperationalError, psycopg.InterfaceError)


def database_unavailable(exc: BaseException) -> bool:
    """Whether `exc` says the database did not answer (an operational or interface error anywhere in its chain):
    a web process answers it with 503, never 500."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, _LOST):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def connection_lost(exc: BaseException, *, using: str = DEFAULT_DB_ALIAS) -> bool:
    """Whether `exc`, raised by database work on this thread, means the database did not answer (its connection
    was lost, or it is restarting) and the work may be done again on a new connection: not while an outer
    `atomic` block is open (its transaction went with the connection; only its owner can start again)."""
    connection = connections[using]
    if not isinstance(exc, Error | psycopg.Error) or connection.in_atomic_block:
        return False
    return database_unavailable(exc) or not connection.is_usable()


def reconnect(*, using: str = DEFAULT_DB_ALIAS) -> None:
    """Drop the thread's connection (dead, or opened again by Django after the loss); the next statement opens a
    new one."""
    connections[using].close()
