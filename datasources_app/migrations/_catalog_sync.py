"""The body of the migrations that write the exercise catalogue again (0009, 0010, 0011): `migrate` is what a
deployment runs, so a change to `fixtures/exercises.json` reaches deployed databases by a migration that calls
this. Django's loader skips modules whose names start with "_", so this is no migration of its own."""

from typing import Any

from datasources_app.services import read_exercise_catalog, sync_exercise_catalog


def sync_catalog(apps: Any, schema_editor: Any) -> None:
    """Upsert the catalogue file's exercises and their equipment (the historical models); exercises no longer in the
    file are left alone: workouts and logs may still name them."""
    sync_exercise_catalog(
        equipment_model=apps.get_model("datasources_app", "Equipment"),
        exercise_model=apps.get_model("datasources_app", "Exercise"),
        rows=read_exercise_catalog(),
    )
