"""The application role may read which migrations are applied (nothing else of Django's own tables): Django's
management commands check that before they run (`createsuperuser --database staff`, `runserver`), on the
default connection, which in a deployment logs in as `trainer_app` (docs/architecture.md "Tenant isolation in
PostgreSQL"). PostgreSQL only."""

from django.db import migrations


def grant(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("GRANT SELECT ON django_migrations TO trainer_app")


def revoke(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("REVOKE ALL ON django_migrations FROM trainer_app")


class Migration(migrations.Migration):
    dependencies = [
        ("trainer_agent", "0001_application_role_task_queue"),
    ]

    operations = [
        migrations.RunPython(grant, revoke, elidable=False),
    ]
