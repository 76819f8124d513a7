"""Database connections around slow waits.

A model call takes seconds; a thread that keeps its database connection through it pins one of the few the
database allows. With PostgreSQL's connection pool on (settings `DB_POOL_MAX_SIZE`), closing a connection
only hands it back to the pool, and the next query takes one again in microseconds, so the loop releases its
connection before every model call. Without a pool (SQLite, or pooling turned off) closing would mean
reconnecting, so nothing is released.
"""

from __future__ import annotations

from django.db import connections


def release_pooled_connections() -> None:
    """Return this thread's pooled connections to their pools. Never inside a transaction (a test's, or a
    caller's atomic block): the connection is then left alone."""
    for connection in connections.all(initialized_only=True):
        if connection.connection is None or connection.in_atomic_block:
            continue
        if getattr(connection, "pool", None) is not None:
            connection.close()
