"""`manage.py load_exercise_catalog [PATH]`: upsert the equipment list and the exercise catalogue."""

from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand

from datasources_app.services import DEFAULT_CATALOG_PATH, load_exercise_catalog


class Command(BaseCommand):
    help = "Idempotently load fixtures/exercises.json (built by scripts/build_exercise_catalog.py)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_CATALOG_PATH)

    def handle(self, *args: Any, **options: Any) -> None:
        count = load_exercise_catalog(options["path"])
        self.stdout.write(f"loaded {count} exercises from {options['path']}")
