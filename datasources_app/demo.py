"""Identity of the demo user that `manage.py seed_demo` creates and `manage.py demo_token` signs for,
and the data `seed_demo` gives them."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

DEMO_USER_ID = uuid.UUID("00000000-0000-4000-8000-00000000de00")
DEMO_USER_EMAIL = "demo@example.com"

DEMO_PROFILE: dict[str, Any] = {
    "display_name": "Alex",
    "birth_year": 1994,
    "sex": "male",
    "height_cm": 180.0,
    "weight_kg": 82.0,
    "body_fat_pct": 15.0,
    "experience_level": "intermediate",
    "injuries": "Mild discomfort in the left knee during deep lunges; no other injuries.",
    "limitations": ["knee"],
}

DEMO_SETTINGS: dict[str, Any] = {"weight_unit": "kg", "distance_unit": "km", "timezone": "Europe/London"}


@dataclass(frozen=True)
class DemoLocation:
    name: str
    description: str
    equipment_slugs: tuple[str, ...] | None  # None = every piece of equipment in the catalogue
    available_weights_kg: dict[str, list[float]] = field(default_factory=dict)


DEMO_LOCATIONS: tuple[DemoLocation, ...] = (
    DemoLocation(
        name="Home",
        description="Spare room: an adjustable bench, dumbbell pairs from 5 to 25 kg and resistance bands.",
        equipment_slugs=("dumbbells", "bench", "resistance_bands"),
        available_weights_kg={"dumbbells": [5, 7.5, 10, 12.5, 15, 17.5, 20, 22.5, 25]},
    ),
    DemoLocation(
        name="Gym",
        description="Commercial gym: free weights, racks, cables, machines and cardio equipment.",
        equipment_slugs=None,
        available_weights_kg={
            "dumbbells": [2.5 * step for step in range(1, 21)],
            "kettlebell": [8, 12, 16, 20, 24, 28, 32],
        },
    ),
)
DEMO_CURRENT_LOCATION = "Home"

DEMO_CATEGORY_GOALS: dict[str, float] = {
    "strength": 0.4,
    "hypertrophy": 0.3,
    "endurance": 0.2,
    "mobility": 0.1,
}
DEMO_CATEGORY_DESCRIPTIONS: dict[str, str] = {
    "strength": "Compound lifts and progressive overload",
    "hypertrophy": "Muscle size: moderate loads, 8-15 reps",
    "endurance": "Aerobic base: running and conditioning",
    "mobility": "Hips and hamstrings, stretching",
}
DEMO_MUSCLE_GOALS: dict[str, float] = {
    "Chest": 0.15,
    "Back": 0.2,
    "Shoulders": 0.1,
    "Quadriceps": 0.15,
    "Glutes": 0.15,
    "Hamstrings": 0.1,
    "Abs": 0.15,
}
DEMO_PREFERENCE: dict[str, Any] = {
    "preference_type": "permanent",
    "category": "exercise",
    "description": "No burpees",
    "guidance": "Never program burpees; use squat thrusts or mountain climbers for conditioning instead.",
    "exclude_exercises": ["burpee"],
}
