"""The application role may use django-tasks-db's queue: the web tier enqueues turns, workers claim them and
delete a session's task rows with it (docs/architecture.md "Tenant isolation in PostgreSQL"). System data:
no row-level security. PostgreSQL only."""

from django.db import migrations


def grant(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "GRANT SELECT, INSERT, UPDATE, DELETE ON django_tasks_database_dbtaskresult TO trainer_app"
        )


def revoke(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("REVOKE ALL ON django_tasks_database_dbtaskresult FROM trainer_app")


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_app", "0009_row_level_security"),  # creates the role
        ("django_tasks_database", "0021_conditional_partial_index_ordering"),
    ]

    operations = [
        migrations.RunPython(grant, revoke, elidable=False),
    ]
