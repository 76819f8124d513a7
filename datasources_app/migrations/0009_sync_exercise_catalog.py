# The catalogue gained knee-friendly home quad work (Dumbbell Box Squat, Spanish Squat) and changed entries'
# patterns; `migrate` is what a deployment runs, so the catalogue is written again here (0002 and 0005 did the
# same). Exercises no longer in the file are left alone: workouts and logs may still name them.

from django.db import migrations

from datasources_app.migrations._catalog_sync import sync_catalog


class Migration(migrations.Migration):

    dependencies = [
        ('datasources_app', '0008_workout_log_entry_section'),
    ]

    operations = [
        migrations.RunPython(sync_catalog, migrations.RunPython.noop),
    ]
