"""Training history the tests log for a user: what a coach (a tool, the offline model) must take into account."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from django.utils import timezone

from datasources_app.services import record_workout_log


def _heavy(name: str, muscles: dict[str, float], load: float) -> dict[str, Any]:
    return {
        "exercise_name": name,
        "exercise_type": "reps",
        "muscles": [{"muscle": m, "share": s} for m, s in muscles.items()],
        "goals": [{"goal": "strength", "share": 1.0}],
        "target_sets": 5,
        "target_reps": [5] * 5,
        "actual_sets": 5,
        "actual_reps": [5] * 5,
        "actual_load_each": [load] * 5,
        "load_unit": "kg",
    }


def log_heavy_legs(user_id: uuid.UUID, *, hours_ago: float) -> None:
    """A heavy leg session (squats, Romanian deadlifts, lunges, 5×5) logged `hours_ago` hours ago."""
    record_workout_log(
        user_id=user_id,
        title="Heavy legs",
        entries=[
            _heavy("Barbell Back Squat", {"Quadriceps": 0.6, "Glutes": 0.25, "Hamstrings": 0.15}, 100),
            _heavy("Romanian Deadlift", {"Hamstrings": 0.6, "Glutes": 0.3, "Lower Back": 0.1}, 80),
            _heavy("Walking Lunge", {"Quadriceps": 0.5, "Glutes": 0.4, "Hamstrings": 0.1}, 20),
        ],
        completed_at=timezone.now() - timedelta(hours=hours_ago),
    )


def log_bench_press(user_id: uuid.UUID, *, days_ago: int = 3) -> None:
    """A barbell bench press completed as planned, 3×6 at 60 kg, `days_ago` days ago."""
    record_workout_log(
        user_id=user_id,
        entries=[
            {
                "exercise_name": "Barbell Bench Press",
                "exercise_slug": "barbell-bench-press",
                "muscles": [{"muscle": "Chest", "share": 0.7}, {"muscle": "Triceps", "share": 0.3}],
                "target_reps": [6, 6, 6],
                "actual_sets": 3,
                "actual_reps": [6, 6, 6],
                "actual_load_each": [60, 60, 60],
                "load_unit": "kg",
            }
        ],
        completed_at=timezone.now() - timedelta(days=days_ago),
    )
