"""What PostgreSQL's own counters say about a connection's prepared statements (config.db.send_together)."""

from __future__ import annotations

from django.db import connection
from django.db.backends.base.base import BaseDatabaseWrapper


def prepared_statement_runs(conn: BaseDatabaseWrapper | None = None) -> dict[str, int]:
    """The connection's prepared statements (their PREPARE text) → how many times the server ran each."""
    with (conn or connection).cursor() as cursor:
        cursor.execute("SELECT statement, generic_plans + custom_plans FROM pg_prepared_statements")
        return {statement: runs for statement, runs in cursor.fetchall()}
