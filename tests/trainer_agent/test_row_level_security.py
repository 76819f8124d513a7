"""PostgreSQL's own tenant isolation and the event log the application role cannot rewrite (issue 18).

The application role is `trainer_app` (scripts/postgres_roles.sql; the migrations grant its rights). Tests in
one transaction switch to it with `SET LOCAL ROLE` (what `acting_for` does under DATABASE_ASSUME_ROLE);
the ones marked `transaction=True` log in as it on committed rows, as a deployed process does.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from django.db import DatabaseError, connection, transaction
from pytest_django import Settings

from datasources_app.models import UserProfile, WorkoutLogEntry
from sessions_app.models import AgentSession, AgentSessionEvent
from sessions_app.services import delete_session
from tests.datasources_app.factories import UserProfileFactory, WorkoutLogEntryFactory
from tests.sessions_app.factories import AgentSessionEventFactory, AgentSessionFactory
from trainer_agent.tenancy import acting_for

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="row-level security is PostgreSQL's; SQLite filters in the app"
)

APP_ROLE = "trainer_app"
ALICE = uuid.UUID("aaaaaaaa-0000-4000-8000-000000000001")
BOB = uuid.UUID("bbbbbbbb-0000-4000-8000-000000000002")

# Tables without row-level security, and why: the rest of the schema must have a forced policy.
SYSTEM_TABLES = {
    "agent_turns": "leases and status of turns (no user content); workers claim and sweep across users",
    "django_tasks_database_dbtaskresult": "the task queue; workers claim across users",
    "agent_workers": "worker heartbeats (no user content); every web process reads them",
    "exercises": "the shared catalogue",
    "equipment": "the shared catalogue",
    "exercises_equipment": "the shared catalogue",
    "auth_group": "staff",
    "auth_group_permissions": "staff",
    "auth_permission": "staff",
    "auth_user": "staff",
    "auth_user_groups": "staff",
    "auth_user_user_permissions": "staff",
    "django_admin_log": "staff",
    "django_content_type": "framework",
    "django_migrations": "framework",
    "django_session": "staff logins",
    "django_cache": "the shared cache: throttle counters (no user content), read and written across users",
}


def two_users_data() -> dict[uuid.UUID, dict[str, Any]]:
    """For Alice and Bob each: a session with two events, a profile, and a logged exercise."""
    data: dict[uuid.UUID, dict[str, Any]] = {}
    for user in (ALICE, BOB):
        session = AgentSessionFactory.create(user_id=user)
        events = [AgentSessionEventFactory.create(session=session) for _ in range(2)]
        UserProfileFactory.create(user_id=user)
        entry = WorkoutLogEntryFactory.create(log__user_id=user)
        data[user] = {"session": session, "events": {e.pk for e in events}, "entry": entry}
    return data


@pytest.fixture
def as_app_role(settings: Settings) -> None:
    """Units of work switch to the application role, as the test run's privileged login must."""
    settings.DATABASE_ASSUME_ROLE = APP_ROLE


@pytest.mark.django_db
@pytest.mark.usefixtures("as_app_role")
def test_unfiltered_queries_in_a_users_context_see_only_that_users_rows() -> None:
    """AgentSession.objects.all(), a raw SELECT of every event, profiles and log entries: only Alice's."""
    data = two_users_data()
    with acting_for(ALICE):
        sessions = list(AgentSession.objects.all())
        with connection.cursor() as cursor:
            cursor.execute("SELECT id FROM agent_session_events")
            event_ids = {row[0] for row in cursor.fetchall()}
        profiles = list(UserProfile.objects.values_list("user_id", flat=True))
        entries = list(WorkoutLogEntry.objects.values_list("pk", flat=True))
    assert [s.pk for s in sessions] == [data[ALICE]["session"].pk]
    assert event_ids == data[ALICE]["events"]
    assert profiles == [ALICE]
    assert entries == [data[ALICE]["entry"].pk]
    # Outside the unit of work the test's own (privileged) connection sees both users again.
    assert AgentSession.objects.count() == 2


@pytest.mark.django_db
def test_with_no_user_set_the_application_role_sees_nothing() -> None:
    """A unit of work that forgot to say whose it is reads no tenant row and cannot write one."""
    two_users_data()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL ROLE {APP_ROLE}")
        cursor.execute("SELECT count(*) FROM agent_sessions")
        assert cursor.fetchone() == (0,)
        cursor.execute("SELECT count(*) FROM agent_session_events")
        assert cursor.fetchone() == (0,)
        cursor.execute("SELECT count(*) FROM user_profiles")
        assert cursor.fetchone() == (0,)
        cursor.execute("SET LOCAL ROLE NONE")
    with (
        pytest.raises(DatabaseError, match="row-level security"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(f"SET LOCAL ROLE {APP_ROLE}")
        cursor.execute(
            "INSERT INTO agent_sessions (id, user_id, created_at, updated_at, context_start_sequence,"
            " total_tokens, cached_tokens, total_cost_cents, status, metadata)"
            " VALUES (gen_random_uuid(), %s, now(), now(), 0, 0, 0, 0, 'active', '{}')",
            [str(ALICE)],
        )


@pytest.mark.django_db
@pytest.mark.usefixtures("as_app_role")
def test_a_user_cannot_write_into_another_users_session() -> None:
    """Appending an event to Bob's session while acting for Alice is refused by the policy's check."""
    data = two_users_data()
    with pytest.raises(DatabaseError), transaction.atomic(), acting_for(ALICE), connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO agent_session_events (id, session_id, sequence_number, event_type, timestamp, data)"
            " VALUES (gen_random_uuid(), %s, 99, 'user_message', now(), '{}')",
            [data[BOB]["session"].pk],
        )
    assert AgentSessionEvent.objects.filter(session=data[BOB]["session"]).count() == 2


@pytest.mark.django_db(transaction=True)  # committed rows: no pending foreign-key checks block TRUNCATE
def test_truncating_events_is_refused_even_to_a_role_granted_truncate() -> None:
    """The BEFORE TRUNCATE trigger refuses every role but the owner, even one that was granted TRUNCATE."""
    AgentSessionEventFactory.create()
    with (
        pytest.raises(DatabaseError, match="append-only: TRUNCATE refused"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(f"GRANT TRUNCATE ON agent_session_events TO {APP_ROLE}")  # undone with the savepoint
        cursor.execute(f"SET LOCAL ROLE {APP_ROLE}")
        cursor.execute("TRUNCATE agent_session_events CASCADE")
    assert AgentSessionEvent.objects.count() == 1


@pytest.mark.django_db
def test_every_table_has_a_forced_policy_or_is_a_named_system_table() -> None:
    """A new table must be declared tenant data (with a policy) or system data; views are staff-only."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.relname, c.relrowsecurity AND c.relforcerowsecurity,
                   EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = c.oid)
            FROM pg_class c WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace
            """
        )
        tables = {name: forced and policy for name, forced, policy in cursor.fetchall()}
        cursor.execute(
            "SELECT c.relname FROM pg_class c WHERE c.relkind = 'v'"
            " AND c.relnamespace = current_schema()::regnamespace AND has_table_privilege(%s, c.oid, 'SELECT')",
            [APP_ROLE],
        )
        views_readable_by_app = [row[0] for row in cursor.fetchall()]
    unprotected = {name for name, protected in tables.items() if not protected}
    assert unprotected == set(SYSTEM_TABLES) & set(tables)
    assert "agent_sessions" in tables and "workout_log_entries" in tables
    assert views_readable_by_app == []


# --- Logged in as the application role, on committed rows ----------------------------------------------------


@pytest.fixture
def app_login() -> Iterator[psycopg.Connection[Any]]:
    """A connection logged in as the application role to the test database, as a deployed process is."""
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    params["user"] = APP_ROLE
    params.pop("password", None)
    with psycopg.connect(**params) as conn:
        yield conn


def as_user(conn: psycopg.Connection[Any], user: uuid.UUID | None) -> None:
    if user is not None:
        conn.execute("SELECT set_config('app.user_id', %s, true)", [str(user)])


@pytest.mark.django_db(transaction=True)
def test_the_application_login_sees_only_the_users_rows(app_login: psycopg.Connection[Any]) -> None:
    """Logged in as trainer_app: Alice's context shows Alice's session and events; no context shows none."""
    data = two_users_data()
    with app_login.transaction():
        as_user(app_login, ALICE)
        sessions = app_login.execute("SELECT id FROM agent_sessions").fetchall()
        events = {row[0] for row in app_login.execute("SELECT id FROM agent_session_events").fetchall()}
    assert sessions == [(data[ALICE]["session"].pk,)]
    assert events == data[ALICE]["events"]
    with app_login.transaction():
        assert app_login.execute("SELECT count(*) FROM agent_session_events").fetchone() == (0,)
    row = app_login.execute(
        "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
    ).fetchone()
    assert row == (False, False)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE agent_session_events SET data = '{}'",
        "DELETE FROM agent_session_events",
        "TRUNCATE agent_session_events",
    ],
)
def test_the_application_login_cannot_rewrite_events(
    app_login: psycopg.Connection[Any], statement: str
) -> None:
    """UPDATE, DELETE and TRUNCATE of events fail for trainer_app, agent.allow_event_delete or not."""
    data = two_users_data()
    for allow in (False, True):
        with pytest.raises(psycopg.errors.InsufficientPrivilege), app_login.transaction():
            as_user(app_login, ALICE)
            if allow:
                app_login.execute("SET LOCAL agent.allow_event_delete = 'on'")
            app_login.execute(statement)
    assert (
        set(AgentSessionEvent.objects.filter(session=data[ALICE]["session"]).values_list("pk", flat=True))
        == (data[ALICE]["events"])
    )


@pytest.mark.django_db(transaction=True)
def test_the_delete_function_removes_only_the_callers_own_session(app_login: psycopg.Connection[Any]) -> None:
    """agent_delete_session: Bob's session untouched from Alice's context; Alice's goes with its events."""
    data = two_users_data()
    alice_session, bob_session = data[ALICE]["session"], data[BOB]["session"]
    with app_login.transaction():
        as_user(app_login, ALICE)
        refused = app_login.execute("SELECT agent_delete_session(%s)", [bob_session.pk]).fetchone()
        deleted = app_login.execute("SELECT agent_delete_session(%s)", [alice_session.pk]).fetchone()
    assert refused == (None,)
    assert deleted == (2,)
    assert not AgentSession.objects.filter(pk=alice_session.pk).exists()
    assert not AgentSessionEvent.objects.filter(session_id=alice_session.pk).exists()
    assert AgentSessionEvent.objects.filter(session=bob_session).count() == 2


@pytest.mark.django_db
@pytest.mark.usefixtures("as_app_role")
def test_delete_session_in_a_users_context_removes_their_session_only() -> None:
    """delete_session as the application role: its own session and events go, another user's stays."""
    data = two_users_data()
    with acting_for(ALICE):
        assert delete_session(session=data[BOB]["session"]) == 0
        assert delete_session(session=data[ALICE]["session"]) == 2
    assert list(AgentSession.objects.values_list("user_id", flat=True)) == [BOB]
    assert AgentSessionEvent.objects.count() == 2


@pytest.mark.django_db
def test_the_application_role_has_exactly_the_rights_it_needs() -> None:
    """trainer_app: no BYPASSRLS, owns nothing, events insert/select only, the queue and turns writable,
    the catalogue read-only, staff tables out of reach."""
    expected = {
        "agent_session_events": {"SELECT", "INSERT"},
        "agent_sessions": {"SELECT", "INSERT", "UPDATE", "DELETE"},
        "agent_turns": {"SELECT", "INSERT", "UPDATE", "DELETE"},
        "django_tasks_database_dbtaskresult": {"SELECT", "INSERT", "UPDATE", "DELETE"},
        "workout_log_entries": {"SELECT", "INSERT", "UPDATE", "DELETE"},
        "exercises": {"SELECT"},
        "auth_user": set(),
        "django_session": set(),
    }
    privileges = ("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE")
    with connection.cursor() as cursor:
        for table, rights in expected.items():
            granted = set()
            for privilege in privileges:
                cursor.execute("SELECT has_table_privilege(%s, %s, %s)", [APP_ROLE, table, privilege])
                if cursor.fetchone()[0]:
                    granted.add(privilege)
            assert granted == rights, table
        cursor.execute(
            "SELECT rolsuper OR rolbypassrls, (SELECT count(*) FROM pg_class WHERE relowner = r.oid)"
            " FROM pg_roles r WHERE rolname = %s",
            [APP_ROLE],
        )
        assert cursor.fetchone() == (False, 0)


@pytest.mark.django_db(transaction=True)  # lone statements in autocommit: each its own transaction
@pytest.mark.usefixtures("as_app_role")
def test_a_transactions_first_statement_reports_its_own_rows_not_the_tenant_settings() -> None:
    """The tenant's settings ride in front of a transaction's first statement (one round trip): what the
    statement reports (rows changed, rows read, rows returned) is still its own. An update of Bob's session
    while acting for Alice changes nothing, and the lease check built on that count refuses the write."""
    data = two_users_data()
    alice, bob = data[ALICE]["session"], data[BOB]["session"]
    with acting_for(ALICE):
        assert AgentSession.objects.filter(pk=bob.pk).update(total_tokens=7) == 0
        assert AgentSession.objects.filter(pk=alice.pk).update(total_tokens=7) == 1
        assert list(AgentSession.objects.values_list("pk", flat=True)) == [alice.pk]
        with transaction.atomic():  # a first statement that returns rows it wrote
            created = AgentSession.objects.create(user_id=ALICE)
        assert created.pk is not None and created.created_at is not None
        # A server-side cursor (.iterator()): the settings go as a statement of their own.
        streamed = list(AgentSession.objects.order_by("created_at").values_list("pk", flat=True).iterator(1))
    assert streamed == [alice.pk, created.pk]
    assert AgentSession.objects.get(pk=bob.pk).total_tokens == 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("as_app_role")
def test_a_failed_first_statement_in_a_savepoint_leaves_the_tenant_set_for_the_rest() -> None:
    """The settings sent with a first statement that fails still hold after the savepoint is rolled back:
    the transaction goes on reading the user's rows only."""
    data = two_users_data()
    with acting_for(ALICE), transaction.atomic():
        with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT 1 / 0")
        assert list(AgentSession.objects.values_list("pk", flat=True)) == [data[ALICE]["session"].pk]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("as_app_role")
def test_a_first_statement_the_driver_refuses_before_sending_leaves_the_settings_to_send() -> None:
    """A parameter the driver cannot send (a NUL in text) fails before the server sees the statement or the
    settings in front of it: the transaction goes on, and its next statement still carries them (Alice sees
    her session only, and can update it)."""
    data = two_users_data()
    alice = data[ALICE]["session"]
    with acting_for(ALICE), transaction.atomic():
        with pytest.raises(DatabaseError), connection.cursor() as cursor:
            cursor.execute("SELECT %s", ["\x00"])
        assert list(AgentSession.objects.values_list("pk", flat=True)) == [alice.pk]
        assert AgentSession.objects.filter(pk=alice.pk).update(total_tokens=5) == 1
    assert AgentSession.objects.get(pk=alice.pk).total_tokens == 5


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("as_app_role")
def test_a_user_whose_block_failed_inside_anothers_transaction_hands_it_back_cleanly() -> None:
    """Bob's unit of work fails inside a savepoint of Alice's transaction: its rollback runs (no settings sent
    into the failed transaction), and Alice's reads after it see Alice's rows only."""
    data = two_users_data()
    with acting_for(ALICE), transaction.atomic():
        assert AgentSession.objects.count() == 1
        with (
            pytest.raises(DatabaseError),
            transaction.atomic(),
            acting_for(BOB),
            connection.cursor() as cursor,
        ):
            cursor.execute("SELECT 1 / 0")
        assert list(AgentSession.objects.values_list("pk", flat=True)) == [data[ALICE]["session"].pk]
