"""Database connections around slow waits.

A model call takes seconds; a thread that keeps its database connection through it pins one of the few the
database allows. With PostgreSQL's connection pool on (settings `DB_POOL_MAX_SIZE`), closing a connection
only hands it back to the pool, and the next query takes one again in microseconds, so the loop releases its
connection before every model call. Without a pool (SQLite, or pooling turned off) closing would mean
reconnecting, so nothing is released.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, overload
from weakref import WeakKeyDictionary

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Field, Model


def release_pooled_connections() -> None:
    """Return this thread's pooled connections to their pools. Never inside a transaction (a test's, or a
    caller's atomic block): the connection is then left alone."""
    for connection in connections.all(initialized_only=True):
        if connection.connection is None or connection.in_atomic_block:
            continue
        if getattr(connection, "pool", None) is not None:
            connection.close()


# --- Plain SQL on hot paths ---------------------------------------------------------------------------------
# The agent loop's per-iteration statements (sessions_app: appends and the context read; datasources_app: the
# user data) go through the connection's cursor instead of the ORM, whose query building costs several times
# the statements themselves. These helpers keep such SQL tied to the models (names from `_meta`, quoted for
# the vendor) and its results equal to the ORM's (values read back through the converters the ORM applies).


def quoted_table(conn: BaseDatabaseWrapper, model: type[Model]) -> str:
    """The model's table, quoted for the connection's vendor."""
    return str(conn.ops.quote_name(model._meta.db_table))


def quoted_column(conn: BaseDatabaseWrapper, model: type[Model], name: str) -> str:
    """The column of the model's field `name`, quoted for the connection's vendor."""
    field = model._meta.get_field(name)
    assert isinstance(field, Field) and field.column is not None
    return str(conn.ops.quote_name(field.column))


def sends_statements_together(conn: BaseDatabaseWrapper) -> bool:
    """Whether one `cursor.execute()` may carry several statements separated by ";" (results: `nextset()`).

    True for PostgreSQL with Django's default client-side binding: psycopg then sends the simple query
    protocol, which runs the statements in order, in one round trip, each with its own snapshot. Not with
    `server_side_binding` (prepared statements take one) nor on SQLite (Django's cursor refuses several).
    """
    return (
        conn.vendor == "postgresql" and conn.settings_dict["OPTIONS"].get("server_side_binding") is not True
    )


class RowReader[M: Model]:
    """Turns a row's columns for `names` (fields of `model`) into what the ORM makes of them on this connection:
    the same converters (the backend's, then the field's) applied to each value."""

    def __init__(self, conn: BaseDatabaseWrapper, model: type[M], names: Sequence[str]) -> None:
        self.conn = conn
        self.model = model
        self.names = list(names)
        self.width = len(self.names)
        self.converters: list[tuple[int, Any, list[Any]]] = []
        for index, name in enumerate(self.names):
            column = model._meta.get_field(name).get_col(model._meta.db_table)  # type: ignore[union-attr]
            functions = conn.ops.get_db_converters(column) + column.get_db_converters(conn)
            if functions:
                self.converters.append((index, column, functions))

    def convert(self, values: Sequence[Any]) -> Sequence[Any]:
        if not self.converters:
            return values
        converted = list(values)
        for index, column, functions in self.converters:
            for function in functions:
                converted[index] = function(converted[index], column, self.conn)
        return converted

    def instance(self, values: Sequence[Any]) -> M | None:
        """The model instance (fields not read are deferred), or None when the first value (the primary key)
        is NULL: an outer join found no row."""
        if values[0] is None:
            return None
        return self.model.from_db(self.conn.alias, self.names, self.convert(values))


type Rows = list[tuple[Any, ...]]
type Statement = tuple[str, Sequence[Any]]  # SQL with `%s` parameters, and the parameters


def send_together(cursor: Any, statements: Sequence[Statement]) -> None:
    """Execute the statements as one message (for `sends_statements_together` connections); their results
    follow one another (`cursor.nextset()`).

    With `settings.DB_PREPARED_STATEMENTS` (the default) each statement runs as `EXECUTE` of a prepared statement
    of this connection: the server parses and plans it once per connection instead of on every message. A
    statement's first use on a connection prepares it first, in a round trip of its own that is not in Django's
    query log (like the protocol-level preparing of server-side binding). A pooler that moves sessions between
    server connections, or resets them, would lose the prepared statements: turn the setting off there.
    """
    if not settings.DB_PREPARED_STATEMENTS:
        cursor.execute(
            "; ".join(sql for sql, _ in statements), [p for _, params in statements for p in params]
        )
        return
    raw = cursor.cursor  # psycopg's cursor, under Django's wrapper (which logs and maps errors)
    known = _PREPARED_ON.get(raw.connection)
    if known is None:
        known = _PREPARED_ON[raw.connection] = set()
    texts = []
    for sql, _ in statements:
        form = _prepared_form(sql)
        if form is None:
            texts.append(sql)
            continue
        if form.name not in known:
            with cursor.db.wrap_database_errors:
                raw.execute(form.prepare)
            known.add(form.name)
        texts.append(form.execute)
    cursor.execute("; ".join(texts), [p for _, params in statements for p in params])


@dataclass(frozen=True)
class _PreparedForm:
    name: str
    prepare: str  # PREPARE name AS the statement (with $n parameters)
    execute: str  # EXECUTE name(%s, ...)


# The server-side names are derived from the SQL, so one statement has one name on every connection.
_PREPARED_FORMS: dict[str, _PreparedForm] = {}
_PREPARED_ON: WeakKeyDictionary[Any, set[str]] = WeakKeyDictionary()  # psycopg connection → names prepared
_PLACEHOLDER = re.compile(r"%[s%]")
MAX_PREPARED = 64


def _prepared_form(sql: str) -> _PreparedForm | None:
    """The statement's prepared form; None past MAX_PREPARED distinct statements (a safeguard: the hot paths'
    statements are fixed texts, a handful per vendor), which then run unprepared."""
    form = _PREPARED_FORMS.get(sql)
    if form is None and len(_PREPARED_FORMS) < MAX_PREPARED:
        count = 0

        def numbered(match: re.Match[str]) -> str:
            nonlocal count
            if match.group() == "%%":
                return "%"
            count += 1
            return f"${count}"

        name = "hot_" + hashlib.blake2s(sql.encode(), digest_size=10).hexdigest()
        body = _PLACEHOLDER.sub(numbered, sql)
        arguments = f"({', '.join(['%s'] * count)})" if count else ""
        form = _PREPARED_FORMS[sql] = _PreparedForm(
            name, f"PREPARE {name} AS {body}", f"EXECUTE {name}{arguments}"
        )
    return form


@dataclass(frozen=True)
class PlannedRead[T]:
    """A selector's read, not yet sent: its statements (SQL with `%s` parameters, and the parameters) and how it
    makes its result of their rows (one list per statement). `read_together` sends several in one round trip."""

    statements: tuple[Statement, ...]
    finish: Callable[[list[Rows]], T]

    @staticmethod
    def of[A, R](read: PlannedRead[A], then: Callable[[A], R]) -> PlannedRead[R]:
        """The same statements, with `then` applied to the result."""
        return PlannedRead(statements=read.statements, finish=lambda rowsets: then(read.finish(rowsets)))


@overload
def read_together[A](first: PlannedRead[A], /) -> tuple[A]: ...
@overload
def read_together[A, B](first: PlannedRead[A], second: PlannedRead[B], /) -> tuple[A, B]: ...
def read_together(*reads: PlannedRead[Any]) -> tuple[Any, ...]:
    """Run the reads' statements, in one message where the connection takes several (`sends_statements_together`)
    and else one by one, and return each read's result. No transaction is opened for them."""
    conn = connections[DEFAULT_DB_ALIAS]
    statements = [statement for read in reads for statement in read.statements]
    rowsets: list[Rows] = []
    with conn.cursor() as cursor:
        if statements and sends_statements_together(conn):
            send_together(cursor, statements)
            rowsets.append(cursor.fetchall())
            while cursor.nextset():
                rowsets.append(cursor.fetchall())
        else:
            for sql, params in statements:
                cursor.execute(sql, params)
                rowsets.append(cursor.fetchall())
    results = []
    for read in reads:
        results.append(read.finish(rowsets[: len(read.statements)]))
        del rowsets[: len(read.statements)]
    return tuple(results)


def write_together(statements: Sequence[Statement]) -> None:
    """Run the statements as one transaction: all of them or none.

    Where the connection takes several statements in one message (`sends_statements_together`), one round trip:
    outside a transaction the server runs such a message as one transaction, commit included; inside a caller's
    transaction the statements join it. Elsewhere, one by one in an atomic block.
    """
    conn = connections[DEFAULT_DB_ALIAS]
    if statements and sends_statements_together(conn):
        with conn.cursor() as cursor:
            send_together(cursor, statements)
        return
    with transaction.atomic(using=conn.alias), conn.cursor() as cursor:
        for sql, params in statements:
            cursor.execute(sql, params)


def both[A, B](first: PlannedRead[A], second: PlannedRead[B]) -> PlannedRead[tuple[A, B]]:
    """One planned read of two: their statements in order, their results as a pair."""
    split = len(first.statements)
    return PlannedRead(
        statements=(*first.statements, *second.statements),
        finish=lambda rowsets: (first.finish(rowsets[:split]), second.finish(rowsets[split:])),
    )
