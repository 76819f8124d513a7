"""Load the exercise catalogue (fixtures/exercises.json) and the equipment list into every database."""

import json
from pathlib import Path

from django.db import migrations

from datasources_app.services import sync_exercise_catalog

CATALOG_PATH = Path(__file__).resolve().parents[2] / "fixtures" / "exercises.json"


def load_catalog(apps, schema_editor):
    rows = json.loads(CATALOG_PATH.read_text(encoding="utf-8"))
    sync_exercise_catalog(
        equipment_model=apps.get_model("datasources_app", "Equipment"),
        exercise_model=apps.get_model("datasources_app", "Exercise"),
        rows=rows,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("datasources_app", "0001_initial"),
    ]

    # Reversing leaves the rows; 0001's reversal drops the tables anyway.
    operations = [
        migrations.RunPython(load_catalog, migrations.RunPython.noop),
    ]
