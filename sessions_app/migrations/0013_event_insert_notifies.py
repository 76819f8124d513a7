"""PostgreSQL: storing events wakes the session's followers from the database itself.

A statement-level trigger on agent_session_events sends `pg_notify('agent_events', <session id>)` once per
session whose events one INSERT stored (the rows it inserted, as a transition table). The notification is
delivered when the transaction commits and dropped if it rolls back, exactly as the `SELECT pg_notify(…)` that
`sessions_app.services.append_events` sent after its INSERT, one round trip fewer per append
(docs/architecture.md "One write path"). Notifications that do not follow an insert (a turn's end without events,
a deleted session) are still sent by `notify_session_changed`.

SQLite: nothing (followers poll there).
"""

from django.db import migrations

# The channel sessions_app.services.EVENTS_CHANNEL names; a literal here so the migration keeps its meaning.
POSTGRESQL_INSTALL = (
    """
CREATE OR REPLACE FUNCTION agent_session_events_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('agent_events', stored.session_id::text)
        FROM (SELECT DISTINCT session_id FROM inserted_events) AS stored;
    RETURN NULL;
END;
$$
""",
    """
CREATE TRIGGER agent_session_events_notify
    AFTER INSERT ON agent_session_events
    REFERENCING NEW TABLE AS inserted_events
    FOR EACH STATEMENT EXECUTE FUNCTION agent_session_events_notify()
""",
)

POSTGRESQL_UNINSTALL = (
    "DROP TRIGGER IF EXISTS agent_session_events_notify ON agent_session_events",
    "DROP FUNCTION IF EXISTS agent_session_events_notify()",
)


def install(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for statement in POSTGRESQL_INSTALL:
            schema_editor.execute(statement, params=None)


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for statement in POSTGRESQL_UNINSTALL:
            schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_app", "0012_latency_views_and_event_search"),
    ]

    operations = [
        migrations.RunPython(install, uninstall, elidable=False),
    ]
