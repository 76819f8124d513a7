"""Drafting balance probe: the demo user's drafts for a range of briefs, each exercise with its movement pattern.

    .venv/bin/python benchmarks/draft_balance.py          # SQLite file var/draftbal.sqlite3

Seeds two throw-away users with the demo data (Home: dumbbells, bench, bands; Gym: everything), one with the demo
user's mild knee and one without, drafts each brief of `BRIEFS` at each location (saving nothing) and prints the
warm-up, main and cool-down exercises with the catalogue's movement pattern, so a coach can read the drafts.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
if not os.environ.get("DATABASE_URL"):
    (BASE_DIR / "var").mkdir(exist_ok=True)
    os.environ["DATABASE_URL"] = f"sqlite:///{BASE_DIR / 'var' / 'draftbal.sqlite3'}"

from benchmarks.event_store import setup_django  # noqa: E402

BRIEFS: tuple[tuple[tuple[str, ...], int], ...] = (
    ((), 45),
    (("full body",), 30),
    (("full body",), 60),
    (("upper body",), 20),
    (("upper body",), 30),
    (("upper body",), 45),
    (("upper body",), 60),
    (("lower body",), 30),
    (("lower body",), 45),
    (("lower body",), 60),
    (("push",), 30),
    (("push",), 45),
    (("pull",), 30),
    (("pull",), 45),
    (("legs",), 30),
    (("legs",), 60),
    (("arms",), 30),
    (("core",), 20),
    (("chest", "back"), 45),
    (("shoulders", "arms"), 45),
)


def main() -> None:
    setup_django()
    from datasources_app import services
    from datasources_app.models import Location
    from tools_app.training_facts import load_catalog
    from tools_app.workout_drafting import WorkoutBrief, balance_pattern, draft_workout_for

    services.load_exercise_catalog()
    by_name = {c.name: c for c in load_catalog()}
    knee = uuid.uuid4()
    no_knee = uuid.uuid4()
    for user_id in (knee, no_knee):
        services.seed_demo_user(reset=True, user_id=user_id)
    services.upsert_profile(user_id=no_knee, injuries="", limitations=[])
    # Each argument: a label of BRIEFS ("upper body"), or a brief of its own: "chest,shoulders,triceps:45".
    only = [arg for arg in sys.argv[1:] if ":" not in arg]
    extra = tuple(
        (tuple(part.strip() for part in focus.split(",")), int(minutes))
        for focus, _, minutes in (arg.rpartition(":") for arg in sys.argv[1:] if ":" in arg)
    )
    try:
        for user_id, who in ((knee, "mild knee"), (no_knee, "no injury")):
            for location in Location.objects.filter(user_id=user_id).order_by("name"):
                for focus, minutes in extra or BRIEFS:
                    label = " & ".join(focus) or "(open)"
                    if only and not extra and label not in only:
                        continue
                    brief = WorkoutBrief(focus=list(focus), minutes=minutes)
                    drafted = draft_workout_for(user_id=user_id, brief=brief, location_id=location.id)
                    print(f"\n## {label}, {minutes} min, {location.name}, {who}")
                    if drafted is None:
                        print("   (nothing)")
                        continue
                    for exercise in drafted.workout["exercises"]:
                        section = (exercise.get("group") or {}).get("type") or "main"
                        candidate = by_name.get(exercise["exercise_name"])
                        pattern = candidate.movement_pattern if candidate else "?"
                        coarse = balance_pattern(candidate) if candidate else "?"
                        primary = candidate.primary if candidate else "?"
                        print(
                            f"   {section:8} {exercise['exercise_name'][:38]:38} {primary:11} {pattern:16} {coarse}"
                        )
                    print(f"   ~{drafted.estimated_min} min; notes: {'; '.join(drafted.notes)}")
    finally:
        for user_id in (knee, no_knee):
            services.delete_user_data(user_id=user_id)


if __name__ == "__main__":
    main()
