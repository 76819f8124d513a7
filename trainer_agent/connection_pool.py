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

import time
from collections.abc import Callable
from typing import Any

import psycopg
from django.db import DEFAULT_DB_ALIAS, connection, connections
from psycopg_pool import ConnectionPool

# A connection a worker gave back around a model call less than this long ago is lent again without the pool's
# check (a round trip to the server): checking it after every model call cost an iteration of the loop ~0.15 ms
# of its ~5. One the server dropped in that window fails at its first statement instead, which a turn survives
# (`connection_loss`: it reconnects and goes on); the web's connections are always checked.
JUST_GIVEN_BACK_SECONDS = 2.0
_GIVEN_BACK_AT = "_trainer_given_back_at"


def conninfo() -> str:
    """The default database's connection string, for a connection of our own outside the pool (a LISTEN
    connection, the previews' notifying one)."""
    params = connection.get_connection_params()
    return psycopg.conninfo.make_conninfo("", **{k: v for k, v in params.items() if isinstance(v, str | int)})


def pooled(*, using: str = DEFAULT_DB_ALIAS) -> bool:
    """Whether the alias lends its connections from a pool."""
    return bool(connections[using].settings_dict.get("OPTIONS", {}).get("pool"))


def give_back_connection(*, using: str = DEFAULT_DB_ALIAS, lend_unchecked: bool = False) -> None:
    """Return the thread's connection to the pool, unless a transaction is open on it or there is no pool.
    `lend_unchecked`: for a moment it may be lent again without the pool's check (`check_unless_just_given_back`;
    only a worker's model calls ask it, whose turns survive a lost connection)."""
    connection = connections[using]
    if connection.connection is None or connection.in_atomic_block or not pooled(using=using):
        return
    if lend_unchecked:
        setattr(connection.connection, _GIVEN_BACK_AT, time.monotonic())
    connection.close()


def check_unless_just_given_back(conn: Any) -> None:
    """The pool's check of a connection it is about to lend (`DATABASES[...]["OPTIONS"]["pool"]["check"]`):
    psycopg_pool's own (`ConnectionPool.check_connection`, an empty query) unless `give_back_connection` with
    `lend_unchecked` returned it less than JUST_GIVEN_BACK_SECONDS ago and the driver has not seen it closed."""
    given_back_at = getattr(conn, _GIVEN_BACK_AT, None)
    if given_back_at is not None:
        setattr(conn, _GIVEN_BACK_AT, None)
        if time.monotonic() - given_back_at < JUST_GIVEN_BACK_SECONDS and not conn.closed:
            return
    ConnectionPool.check_connection(conn)


def giving_back_after[**P, R](fn: Callable[P, R]) -> Callable[P, R]:
    """`fn`, returning the thread's connection to the pool after each call (a callback during a model call)."""

    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        finally:
            give_back_connection()

    return call
