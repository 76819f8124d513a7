"""Row-level security on the user's fitness data (PostgreSQL only; SQLite keeps the application's filtering).

Every per-user table shows a role without BYPASSRLS only the rows of `app.user_id` (a transaction-scoped
setting), FORCE'd so the owner's own non-privileged connections obey it too; child tables follow their
parent's policy. The application role `trainer_app` (created NOLOGIN here when missing; `.ci/run` and the
README create it with LOGIN) may read and write these tables and only read the catalogue. For a superuser or
BYPASSRLS connection (the migration role) nothing changes. docs/architecture.md "Tenant isolation in
PostgreSQL".
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

USER_TABLES = (
    "user_profiles",
    "user_settings",
    "user_locations",
    "current_workouts",
    "user_preferences",
    "workout_logs",
    "category_goals",
    "muscle_goals",
    "milestone_goals",
    "workout_plans",
    "scheduled_workouts",
)
# child table -> the parent whose visible rows it may reference
CHILD_TABLES = {
    "workout_log_entries": ("log_id", "workout_logs"),
    "user_locations_equipment": ("location_id", "user_locations"),
}
CATALOGUE_TABLES = ("exercises", "equipment", "exercises_equipment")


def install_statements(schema: str) -> list[str]:
    tenant_tables = (*USER_TABLES, *CHILD_TABLES)
    statements = [
        CREATE_APP_ROLE,
        f"GRANT USAGE ON SCHEMA {schema} TO {APP_ROLE}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON {', '.join(tenant_tables)} TO {APP_ROLE}",
        f"GRANT SELECT ON {', '.join(CATALOGUE_TABLES)} TO {APP_ROLE}",
    ]
    for table in tenant_tables:
        statements += [
            f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
            f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY",
        ]
    for table in USER_TABLES:
        rule = f"user_id = {APP_USER_ID}"
        statements.append(f"CREATE POLICY {table}_of_user ON {table} USING ({rule}) WITH CHECK ({rule})")
    for table, (column, parent) in CHILD_TABLES.items():
        # The subquery reads the parent under its own policy: a child row is visible iff its parent is.
        rule = f"EXISTS (SELECT 1 FROM {parent} p WHERE p.id = {table}.{column})"
        statements.append(f"CREATE POLICY {table}_of_user ON {table} USING ({rule}) WITH CHECK ({rule})")
    return statements


def uninstall_statements() -> list[str]:
    statements = []
    for table in (*USER_TABLES, *CHILD_TABLES):
        statements += [
            f"DROP POLICY IF EXISTS {table}_of_user ON {table}",
            f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY",
            f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY",
            f"REVOKE ALL ON {table} FROM {APP_ROLE}",
        ]
    return [*statements, f"REVOKE ALL ON {', '.join(CATALOGUE_TABLES)} FROM {APP_ROLE}"]


def grant_identity_sequences(cursor, tables: tuple[str, ...]) -> None:
    """Inserting into a bigint identity column draws from its sequence: let the application role do it."""
    cursor.execute(
        """
        SELECT quote_ident(n.nspname) || '.' || quote_ident(s.relname)
        FROM pg_class s
        JOIN pg_namespace n ON n.oid = s.relnamespace
        JOIN pg_depend d ON d.objid = s.oid AND d.classid = 'pg_class'::regclass
        JOIN pg_class t ON t.oid = d.refobjid
        WHERE s.relkind = 'S' AND t.relname = ANY(%s) AND t.relnamespace = current_schema()::regnamespace
        """,
        [list(tables)],
    )
    for (sequence,) in cursor.fetchall():
        cursor.execute(f"GRANT USAGE, SELECT ON SEQUENCE {sequence} TO {APP_ROLE}")


def install(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT quote_ident(current_schema())")
        schema = cursor.fetchone()[0]
        for statement in install_statements(schema):
            cursor.execute(statement)
        grant_identity_sequences(cursor, (*USER_TABLES, *CHILD_TABLES))


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        for statement in uninstall_statements():
            cursor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [
        ("datasources_app", "0005_exercise_movement_pattern"),
    ]

    operations = [
        migrations.RunPython(install, uninstall, elidable=False),
    ]
