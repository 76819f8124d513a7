"""`agent_workers`: one row per running worker process, its heartbeat (docs/architecture.md "The turn").
System data (no user content, read across users by every web process): no row-level security; on PostgreSQL
the application role may use it (docs/architecture.md "Tenant isolation in PostgreSQL")."""

from django.db import migrations, models

APP_ROLE = "trainer_app"


def grant(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON agent_workers TO {APP_ROLE}")


def revoke(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"REVOKE ALL ON agent_workers FROM {APP_ROLE}")


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_app", "0009_row_level_security"),  # creates the role
    ]

    operations = [
        migrations.CreateModel(
            name="WorkerHeartbeat",
            fields=[
                ("name", models.CharField(max_length=100, primary_key=True, serialize=False)),
                ("threads", models.IntegerField(help_text="Turns it runs at once")),
                ("started_at", models.DateTimeField()),
                ("seen_at", models.DateTimeField(db_index=True)),
            ],
            options={"db_table": "agent_workers"},
        ),
        migrations.RunPython(grant, revoke, elidable=False),
    ]
