"""Row-level security on sessions and events, and an event log the application role cannot rewrite.

PostgreSQL only (SQLite keeps the application's own `user_id` filtering; docs/architecture.md "Tenant
isolation in PostgreSQL"):
- the application role `trainer_app` (created NOLOGIN here when missing; `.ci/run` and the README create it
  with LOGIN) gets SELECT/INSERT/UPDATE/DELETE on `agent_sessions` and `agent_turns`, and only SELECT/INSERT
  on `agent_session_events`: no UPDATE, DELETE or TRUNCATE, whatever it sets;
- `agent_sessions` shows a role without BYPASSRLS only the rows of `app.user_id` (a transaction-scoped
  setting), and `agent_session_events` only the events of a session it can see (FORCE: the owner too);
- `agent_delete_session(session_id)`, SECURITY DEFINER and owned by the migration role, deletes a session of
  the caller's `app.user_id` (any session for a caller logged in with BYPASSRLS) with its events and turns;
- a BEFORE TRUNCATE trigger refuses to truncate the events for every role but the owner and superusers
  (the owner's truncation is Django's test flush).
For a superuser or BYPASSRLS connection (the migration role) the policies change nothing.
"""

from django.db import migrations

APP_ROLE = "trainer_app"

# Parallel test databases run this at once: a concurrent CREATE ROLE may lose the race.
CREATE_APP_ROLE = f"""
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{APP_ROLE}') THEN
        CREATE ROLE {APP_ROLE} NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL;
END
$$
"""

# NULL (every policy false) when the transaction named no user: a forgotten context sees nothing.
APP_USER_ID = "NULLIF(current_setting('app.user_id', true), '')::uuid"


def install_statements(schema: str) -> list[str]:
    return [
        CREATE_APP_ROLE,
        f"GRANT USAGE ON SCHEMA {schema} TO {APP_ROLE}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON agent_sessions, agent_turns TO {APP_ROLE}",
        f"GRANT SELECT, INSERT ON agent_session_events TO {APP_ROLE}",
        "ALTER TABLE agent_sessions ENABLE ROW LEVEL SECURITY",
        "ALTER TABLE agent_sessions FORCE ROW LEVEL SECURITY",
        f"""
CREATE POLICY agent_sessions_of_user ON agent_sessions
    USING (user_id = {APP_USER_ID}) WITH CHECK (user_id = {APP_USER_ID})
""",
        "ALTER TABLE agent_session_events ENABLE ROW LEVEL SECURITY",
        "ALTER TABLE agent_session_events FORCE ROW LEVEL SECURITY",
        # The subquery reads agent_sessions under its own policy: an event is visible iff its session is.
        """
CREATE POLICY agent_session_events_of_user ON agent_session_events
    USING (EXISTS (SELECT 1 FROM agent_sessions s WHERE s.id = agent_session_events.session_id))
    WITH CHECK (EXISTS (SELECT 1 FROM agent_sessions s WHERE s.id = agent_session_events.session_id))
""",
        """
CREATE OR REPLACE FUNCTION agent_session_events_no_truncate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
       OR pg_has_role(current_user, (SELECT relowner FROM pg_class WHERE oid = TG_RELID), 'USAGE') THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'agent_session_events is append-only: TRUNCATE refused'
        USING HINT = 'Delete a whole session with sessions_app.services.delete_session.';
END;
$$
""",
        """
CREATE TRIGGER agent_session_events_no_truncate
    BEFORE TRUNCATE ON agent_session_events
    FOR EACH STATEMENT EXECUTE FUNCTION agent_session_events_no_truncate()
""",
        f"""
CREATE OR REPLACE FUNCTION agent_delete_session(p_session uuid) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = {schema}, pg_temp AS $$
DECLARE
    v_owner uuid;
    v_events integer;
BEGIN
    SELECT user_id INTO v_owner FROM agent_sessions WHERE id = p_session FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    -- Another user's session is indistinguishable from a missing one, except for a privileged login.
    IF v_owner IS DISTINCT FROM {APP_USER_ID}
       AND NOT (SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = session_user) THEN
        RETURN NULL;
    END IF;
    PERFORM set_config('agent.allow_event_delete', 'on', true);
    DELETE FROM agent_session_events WHERE session_id = p_session;
    GET DIAGNOSTICS v_events = ROW_COUNT;
    PERFORM set_config('agent.allow_event_delete', 'off', true);
    DELETE FROM agent_turns WHERE session_id = p_session;
    DELETE FROM agent_sessions WHERE id = p_session;
    RETURN v_events;
END;
$$
""",
        "REVOKE ALL ON FUNCTION agent_delete_session(uuid) FROM PUBLIC",
        f"GRANT EXECUTE ON FUNCTION agent_delete_session(uuid) TO {APP_ROLE}",
    ]


UNINSTALL = [
    "DROP FUNCTION IF EXISTS agent_delete_session(uuid)",
    "DROP TRIGGER IF EXISTS agent_session_events_no_truncate ON agent_session_events",
    "DROP FUNCTION IF EXISTS agent_session_events_no_truncate()",
    "DROP POLICY IF EXISTS agent_session_events_of_user ON agent_session_events",
    "ALTER TABLE agent_session_events NO FORCE ROW LEVEL SECURITY",
    "ALTER TABLE agent_session_events DISABLE ROW LEVEL SECURITY",
    "DROP POLICY IF EXISTS agent_sessions_of_user ON agent_sessions",
    "ALTER TABLE agent_sessions NO FORCE ROW LEVEL SECURITY",
    "ALTER TABLE agent_sessions DISABLE ROW LEVEL SECURITY",
    f"REVOKE ALL ON agent_sessions, agent_turns, agent_session_events FROM {APP_ROLE}",
]


def install(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT quote_ident(current_schema())")
        schema = cursor.fetchone()[0]
    for statement in install_statements(schema):
        schema_editor.execute(statement, params=None)


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for statement in UNINSTALL:
        schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_app", "0008_agent_turn_user_id"),
    ]

    operations = [
        migrations.RunPython(install, uninstall, elidable=False),
    ]
