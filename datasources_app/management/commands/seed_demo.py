"""`manage.py seed_demo`: the demo user's profile, settings, locations, goals and preference (optionally logged
workouts), plus a fresh exercise catalogue."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from datasources_app.demo import DEMO_USER_EMAIL, DEMO_USER_ID
from datasources_app.services import load_exercise_catalog, seed_demo_user


class Command(BaseCommand):
    help = (
        "Create the demo user's data (idempotent). --reset restores the demo data the agent may have changed."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--reset", action="store_true", help="Overwrite the demo user's data with the defaults."
        )
        parser.add_argument(
            "--history-days",
            type=int,
            default=0,
            metavar="N",
            help="Also log realistic workouts for the last N days (reproducible; 0 = none, benchmarks use 90).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        count = load_exercise_catalog()
        self.stdout.write(f"exercise catalogue: {count} exercises in sync")
        self.stdout.write(f"demo user {DEMO_USER_EMAIL} ({DEMO_USER_ID})")
        if options["history_days"] < 0:
            raise CommandError("--history-days must be 0 or more")
        for line in seed_demo_user(reset=options["reset"], history_days=options["history_days"]):
            self.stdout.write(f"  {line}")
