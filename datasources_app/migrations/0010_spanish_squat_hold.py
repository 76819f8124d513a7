# The catalogue gained the Spanish Squat Hold (the isometric of the Spanish Squat, which stays the squat done for
# reps): a plan's 'Spanish squat hold 3×30s' is drafted as that hold. The catalogue is written again, as in 0009.

from django.db import migrations

from datasources_app.migrations._catalog_sync import sync_catalog


class Migration(migrations.Migration):

    dependencies = [
        ('datasources_app', '0009_sync_exercise_catalog'),
    ]

    operations = [
        migrations.RunPython(sync_catalog, migrations.RunPython.noop),
    ]
