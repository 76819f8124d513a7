"""The database cache's table (`django_cache`, config/settings.py CACHE_TABLE): the turn throttle's
counts, shared by every web process (config/settings.py CACHES). Created whatever CACHES says today, so
switching REDIS_URL off later needs no extra command; on PostgreSQL the application role may use it (system
data: no row-level security)."""

from django.core.management import call_command
from django.db import migrations

APP_ROLE = "trainer_app"
CACHE_TABLE = "django_cache"


def create(apps, schema_editor):
    call_command("createcachetable", CACHE_TABLE, database=schema_editor.connection.alias, verbosity=0)
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON {CACHE_TABLE} TO {APP_ROLE}")


def drop(apps, schema_editor):
    schema_editor.execute(f"DROP TABLE IF EXISTS {schema_editor.quote_name(CACHE_TABLE)}")


class Migration(migrations.Migration):
    dependencies = [
        ("trainer_agent", "0002_application_role_reads_migrations"),
        ("sessions_app", "0009_row_level_security"),  # creates the role
    ]

    operations = [
        migrations.RunPython(create, drop, elidable=False),
    ]
