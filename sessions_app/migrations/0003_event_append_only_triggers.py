"""Make agent_session_events append-only in the database itself, not only through the ORM.

PostgreSQL: a row trigger refuses every UPDATE, and every DELETE unless the transaction has set
`agent.allow_event_delete = 'on'` (SET LOCAL), which only `sessions_app.services.delete_session` does.
TRUNCATE fires no row triggers, so Django's test flush keeps working.

SQLite: a trigger refuses every UPDATE. There is no transaction-local setting to let delete_session
through, and Django's flush empties tables with DELETE (which would fire a trigger), so deletes are
guarded by the ORM only. Caution: Django rebuilds a SQLite table when a later migration alters its
columns, which drops this trigger; tests/sessions_app/test_append_only.py checks it still exists.
"""

from django.db import migrations

POSTGRESQL_INSTALL = (
    """
CREATE OR REPLACE FUNCTION agent_session_events_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('agent.allow_event_delete', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'agent_session_events is append-only: % refused', TG_OP
        USING HINT = 'Events are never changed; delete a whole session with sessions_app.services.delete_session.';
END;
$$
""",
    """
CREATE TRIGGER agent_session_events_append_only
    BEFORE UPDATE OR DELETE ON agent_session_events
    FOR EACH ROW EXECUTE FUNCTION agent_session_events_append_only()
""",
)

POSTGRESQL_UNINSTALL = (
    "DROP TRIGGER IF EXISTS agent_session_events_append_only ON agent_session_events",
    "DROP FUNCTION IF EXISTS agent_session_events_append_only()",
)

SQLITE_INSTALL = (
    """
CREATE TRIGGER agent_session_events_no_update BEFORE UPDATE ON agent_session_events
BEGIN
    SELECT RAISE(ABORT, 'agent_session_events is append-only: UPDATE refused');
END
""",
)

SQLITE_UNINSTALL = ("DROP TRIGGER IF EXISTS agent_session_events_no_update",)

STATEMENTS = {
    "postgresql": (POSTGRESQL_INSTALL, POSTGRESQL_UNINSTALL),
    "sqlite": (SQLITE_INSTALL, SQLITE_UNINSTALL),
}


def install(apps, schema_editor):
    install_sql, _ = STATEMENTS.get(schema_editor.connection.vendor, ((), ()))
    for statement in install_sql:
        # params=None: the SQL contains a literal % (plpgsql RAISE format), not a placeholder.
        schema_editor.execute(statement, params=None)


def uninstall(apps, schema_editor):
    _, uninstall_sql = STATEMENTS.get(schema_editor.connection.vendor, ((), ()))
    for statement in uninstall_sql:
        schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_app", "0002_event_ordering_by_session_id"),
    ]

    operations = [
        migrations.RunPython(install, uninstall, elidable=False),
    ]
