"""Stored events are never changed or deleted, except with their whole session through delete_session."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction

from sessions_app.models import AgentSession, AgentSessionEvent, AppendOnlyError
from sessions_app.services import delete_session
from tests.sessions_app.factories import AgentSessionEventFactory, AgentSessionFactory

pytestmark = pytest.mark.django_db

postgresql_only = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="the DELETE trigger exists on PostgreSQL only (SQLite has no transaction-local setting for it)",
)


def test_saving_an_existing_event_raises() -> None:
    """Model save() of a stored event raises AppendOnlyError and the stored data is unchanged."""
    event = AgentSessionEventFactory.create(data={"message": "original"})
    event.data = {"message": "edited"}
    with pytest.raises(AppendOnlyError):
        event.save()
    assert AgentSessionEvent.objects.get(pk=event.pk).data == {"message": "original"}


def test_deleting_an_event_instance_raises() -> None:
    """Model delete() of an event raises AppendOnlyError."""
    event = AgentSessionEventFactory.create()
    with pytest.raises(AppendOnlyError):
        event.delete()
    assert AgentSessionEvent.objects.filter(pk=event.pk).exists()


def test_queryset_update_and_delete_of_events_raise() -> None:
    """QuerySet update() and delete() on events raise AppendOnlyError."""
    AgentSessionEventFactory.create()
    with pytest.raises(AppendOnlyError):
        AgentSessionEvent.objects.all().update(data={})
    with pytest.raises(AppendOnlyError):
        AgentSessionEvent.objects.all().delete()
    assert AgentSessionEvent.objects.count() == 1


def test_raw_sql_update_of_an_event_is_refused_by_the_database() -> None:
    """An UPDATE that bypasses the ORM is refused by a trigger (PostgreSQL and SQLite)."""
    event = AgentSessionEventFactory.create(data={"message": "original"})
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            "UPDATE agent_session_events SET duration_ms = 1 WHERE id = %s",
            [event.pk.hex if connection.vendor == "sqlite" else event.pk],
        )
    assert AgentSessionEvent.objects.get(pk=event.pk).duration_ms is None


@postgresql_only
def test_raw_sql_delete_of_an_event_is_refused_on_postgresql() -> None:
    """A DELETE that bypasses the ORM is refused by the PostgreSQL trigger."""
    event = AgentSessionEventFactory.create()
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("DELETE FROM agent_session_events WHERE id = %s", [event.pk])
    assert AgentSessionEvent.objects.filter(pk=event.pk).exists()


@postgresql_only
def test_deleting_a_session_outside_delete_session_is_refused_on_postgresql() -> None:
    """The ORM cascade from a plain session delete is refused; only delete_session may remove events."""
    event = AgentSessionEventFactory.create()
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        AgentSession.objects.filter(pk=event.session_id).delete()
    assert AgentSessionEvent.objects.filter(pk=event.pk).exists()


@postgresql_only
def test_delete_session_does_not_leave_deletes_allowed_for_the_rest_of_the_transaction() -> None:
    """After delete_session, a later raw DELETE in the same transaction is refused again."""
    doomed = AgentSessionFactory.create()
    AgentSessionEventFactory.create(session=doomed)
    survivor = AgentSessionEventFactory.create()
    with transaction.atomic():
        delete_session(session=doomed)
        with (
            pytest.raises(DatabaseError, match="append-only"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute("DELETE FROM agent_session_events WHERE id = %s", [survivor.pk])
    assert not AgentSession.objects.filter(pk=doomed.pk).exists()
    assert AgentSessionEvent.objects.filter(pk=survivor.pk).exists()


@pytest.mark.skipif(connection.vendor != "sqlite", reason="checks SQLite's catalogue")
def test_sqlite_update_trigger_is_installed() -> None:
    """The SQLite trigger exists; Django drops it silently if a migration rebuilds the events table."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'agent_session_events'"
        )
        assert cursor.fetchall() == [("agent_session_events_no_update",)]


@pytest.mark.django_db(transaction=True)
def test_flush_still_empties_the_event_table() -> None:
    """Django's flush (TransactionTestCase teardown) is not blocked: TRUNCATE/DELETE FROM fire no refusing trigger."""
    AgentSessionEventFactory.create_batch(2)
    call_command("flush", interactive=False, verbosity=0)
    assert not AgentSessionEvent.objects.exists()
    assert not AgentSession.objects.exists()
