"""The session's user on each turn (filled before row-level security is installed, 0009, so an owner without
BYPASSRLS reads every session): workers claim turns across users and must know whose work a turn is before
they may read its session under row-level security (docs/architecture.md "Tenant isolation in PostgreSQL")."""

from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def copy_session_users(apps, schema_editor):
    AgentTurn = apps.get_model("sessions_app", "AgentTurn")
    AgentSession = apps.get_model("sessions_app", "AgentSession")
    AgentTurn.objects.update(
        user_id=Subquery(AgentSession.objects.filter(pk=OuterRef("session_id")).values("user_id")[:1])
    )


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_app", "0007_session_lease_holder"),
    ]

    operations = [
        migrations.AddField(model_name="agentturn", name="user_id", field=models.UUIDField(null=True)),
        migrations.RunPython(copy_session_users, migrations.RunPython.noop, elidable=False),
        migrations.AlterField(model_name="agentturn", name="user_id", field=models.UUIDField()),
    ]
