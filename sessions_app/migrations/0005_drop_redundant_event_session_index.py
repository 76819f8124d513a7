"""Drop agent_session_events' index on session_id alone.

The unique (session_id, sequence_number) index leads with the session and serves every lookup by session; the
extra index cost every insert, and with statistics older than a session the planner used it to read all of the
session's events when it looked for the last sequence number.

Only the index is dropped (same name on both vendors). A plain AlterField would rebuild the table on SQLite,
losing the append-only triggers of 0003, and drop and re-validate the foreign key on PostgreSQL.
"""

import django.db.models.deletion
from django.db import migrations, models

INDEX = "agent_session_events_session_id_438e27de"


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_app", "0004_observability_views"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="agentsessionevent",
                    name="session",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="events",
                        to="sessions_app.agentsession",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    sql=f'DROP INDEX IF EXISTS "{INDEX}"',
                    reverse_sql=f'CREATE INDEX "{INDEX}" ON "agent_session_events" ("session_id")',
                ),
            ],
        ),
    ]
