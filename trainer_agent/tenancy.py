"""Whose data a unit of work touches, told to PostgreSQL's row-level security.

docs/architecture.md "Tenant isolation in PostgreSQL": on PostgreSQL the tenant tables show a connection only
the rows of `app.user_id`, a transaction-scoped setting, so it must be set at the start of every transaction
of the unit of work: a request's, or a turn's several commits with model calls between them.
`acting_for(user_id)` does that for the connection while its block runs: a Django execute wrapper starts each
transaction with `set_config('app.user_id', …, true)` (and, when `DATABASE_ASSUME_ROLE` names the
application role, `set_config('role', …, true)`: the test run's privileged login switches to it, so the code
under test obeys the policies), sent in front of the transaction's first statement in the same round trip, and
gives a lone autocommit statement a transaction of its own. Both settings
end with their transaction, so a persistent connection never carries one user's id into other work, and a
statement outside any unit of work runs with no user and sees no tenant row. On SQLite it does nothing: the
application's own `user_id` filters are the only isolation there.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from psycopg import ClientCursor
from psycopg.pq import PipelineStatus, TransactionStatus
from psycopg.sql import quote


class _TenantTransactions:
    """The execute wrapper of one connection: the unit of work's user (innermost `acting_for` last)."""

    def __init__(self) -> None:
        self.users: list[str] = []
        # The connection's savepoints when the settings were last made in the current transaction: a savepoint
        # rolled back since may have undone them (only when a unit of work starts inside a longer transaction).
        self.applied_at: list[str | None] | None = None

    def __call__(
        self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]
    ) -> Any:
        connection: BaseDatabaseWrapper = context["connection"]
        if connection.get_autocommit():
            with transaction.atomic(using=connection.alias):
                return self._first_of_transaction(execute, sql, params, many, context)
        if connection.connection.info.transaction_status == TransactionStatus.INERROR:
            # A failed transaction takes nothing but its rollback (to a savepoint): the settings, stale or
            # not, would fail too; the next statement after the rollback sends them if they are stale then.
            return execute(sql, params, many, context)
        if self.stale(connection):
            return self._first_of_transaction(execute, sql, params, many, context)
        return execute(sql, params, many, context)

    def _first_of_transaction(
        self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]
    ) -> Any:
        """The settings, then the statement. Where the driver sends the statement as a simple query (Django's
        client-side binding cursor: one `execute`, several statements allowed), the settings go in front of
        it in the same round trip and the cursor moves on to the statement's own result; otherwise (many
        parameter sets, a server-side cursor, SQL that is not text) they are a statement of their own."""
        connection: BaseDatabaseWrapper = context["connection"]
        cursor = getattr(context.get("cursor"), "cursor", None)
        if (
            many
            or not isinstance(sql, str)
            or not isinstance(cursor, ClientCursor)
            or connection.connection.info.pipeline_status != PipelineStatus.OFF  # extended protocol only
            or sql.lstrip().startswith(("--", "/*"))  # may hold no statement: no result of its own to move to
        ):
            self.apply(connection)
            return execute(sql, params, many, context)
        prefix = self.settings_sql()
        if params is not None:
            prefix = prefix.replace("%", "%%")  # the driver formats the parameters into the whole text
        earlier, self.applied_at = self.applied_at, list(connection.savepoint_ids)
        try:
            result = execute(prefix + sql, params, many, context)
        except Exception:
            # The server ran the settings ahead of a statement that failed there (the transaction failed with
            # it); a failure in the driver before anything was sent (a parameter it cannot send) ran nothing.
            if connection.connection.info.transaction_status != TransactionStatus.INERROR:
                self.applied_at = earlier
            raise
        cursor.nextset()
        return result

    def settings_sql(self) -> str:
        """The settings as one statement with literal values (a user id is a UUID; the role a setting)."""
        user, role = quote(self.users[-1]), settings.DATABASE_ASSUME_ROLE
        if role:
            return (
                f"SELECT set_config('app.user_id', {user}, true), set_config('role', {quote(role)}, true); "
            )
        return f"SELECT set_config('app.user_id', {user}, true); "

    def stale(self, connection: BaseDatabaseWrapper) -> bool:
        if connection.connection.info.transaction_status == TransactionStatus.IDLE or self.applied_at is None:
            return True  # the next statement begins a transaction
        return connection.savepoint_ids[: len(self.applied_at)] != self.applied_at

    def apply(self, connection: BaseDatabaseWrapper) -> None:
        role = settings.DATABASE_ASSUME_ROLE
        # The driver's own cursor (Django's would run this wrapper again), under Django's error wrapping: a lost
        # connection raises django.db.OperationalError and marks the connection for Django's health check, as
        # any ORM statement's failure does, so the callers' reconnect paths see it.
        with connection.wrap_database_errors, connection.connection.cursor() as cursor:
            if role:
                cursor.execute(
                    "SELECT set_config('app.user_id', %s, true), set_config('role', %s, true)",
                    [self.users[-1], role],
                )
            else:
                cursor.execute("SELECT set_config('app.user_id', %s, true)", [self.users[-1]])
        self.applied_at = list(connection.savepoint_ids)

    def clear(self, connection: BaseDatabaseWrapper) -> None:
        """The unit of work ended inside a transaction that goes on (a test's): what follows is not its work."""
        self.applied_at = None
        if connection.connection is None:
            return
        if connection.connection.info.transaction_status != TransactionStatus.INTRANS:
            return  # no transaction (the settings ended with it), or a failed one about to be rolled back
        with connection.wrap_database_errors, connection.connection.cursor() as cursor:
            if settings.DATABASE_ASSUME_ROLE:
                cursor.execute("SELECT set_config('app.user_id', '', true), set_config('role', 'none', true)")
            else:
                cursor.execute("SELECT set_config('app.user_id', '', true)")


_WRAPPER_ATTRIBUTE = "_tenant_transactions"


@contextmanager
def acting_for(user_id: uuid.UUID | str, *, using: str = DEFAULT_DB_ALIAS) -> Iterator[None]:
    """Every transaction the block runs on the connection shows PostgreSQL's tenant tables as `user_id` sees
    them; nested blocks act for their own user until they end."""
    connection = connections[using]
    if connection.vendor != "postgresql":
        yield
        return
    wrapper: _TenantTransactions | None = getattr(connection, _WRAPPER_ATTRIBUTE, None)
    outermost = wrapper is None
    if wrapper is None:
        wrapper = _TenantTransactions()
        setattr(connection, _WRAPPER_ATTRIBUTE, wrapper)
        connection.execute_wrappers.append(wrapper)
    wrapper.users.append(str(uuid.UUID(str(user_id))))
    wrapper.applied_at = None
    try:
        yield
    finally:
        wrapper.users.pop()
        if outermost:
            connection.execute_wrappers.remove(wrapper)
            delattr(connection, _WRAPPER_ATTRIBUTE)
            wrapper.clear(connection)
        else:
            wrapper.applied_at = None  # the outer user again from the next statement


def reads_together(*, using: str = DEFAULT_DB_ALIAS) -> AbstractContextManager[Any]:
    """Several reads of a unit of work in one transaction where that saves work: on PostgreSQL, where each
    transaction of a unit of work is a BEGIN, the tenant's `set_config` and a COMMIT, each a round trip. Not on
    SQLite, whose transactions begin IMMEDIATE (config/settings.py): there a read in a transaction would take
    the database's write lock, and its BEGIN and COMMIT cost no round trip. Inside a caller's transaction, that
    one (no savepoint)."""
    if connections[using].vendor == "postgresql":
        return transaction.atomic(using=using, savepoint=False)
    return nullcontext()
