# The catalogue gained bodyweight cardio for a place with no machines (skaters, butt kicks, bench step-ups, and the
# low-impact marching high knees, step jacks, low-impact skaters and shadow boxing) and a Kettlebell Goblet Squat,
# and its Goblet Squat now needs one dumbbell, not a kettlebell. `migrate` is what a deployment runs, so the
# catalogue is written again here, as 0009 and 0010 did.

from django.db import migrations

from datasources_app.migrations._catalog_sync import sync_catalog


class Migration(migrations.Migration):

    dependencies = [
        ('datasources_app', '0010_spanish_squat_hold'),
    ]

    operations = [
        migrations.RunPython(sync_catalog, migrations.RunPython.noop),
    ]
