"""Realistic, reproducible workout logs for the demo user (`seed_demo --history-days N`).

Four sessions a week (upper push Mon, lower Wed, upper pull Fri, conditioning + mobility Sat), each kept or
missed by a per-date random draw, loads creeping up over the period, the last sets sometimes short of
target. The draws are seeded by the date, so a given day always gets the same workout.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Any

from datasources_app.catalog import slugify_exercise_name

HISTORY_MARKER = "seed_demo_history"  # artifact_id of generated logs, so reruns can find them
RANDOM_SEED = 20240601
ATTENDANCE = 0.85
PLATE_STEP_KG = 2.5


@dataclass(frozen=True)
class Move:
    name: str
    exercise_type: str
    muscles: tuple[tuple[str, float], ...]
    goals: tuple[tuple[str, float], ...]
    sets: int = 3
    reps: int = 0
    load_kg: float = 0.0
    hold_sec: int = 0
    minutes: float = 0.0
    distance_km: float = 0.0
    rounds: int = 0
    work_sec: int = 0
    rest_sec: int = 0


_STRENGTH = (("strength", 0.6), ("hypertrophy", 0.4))
_HYPERTROPHY = (("hypertrophy", 0.7), ("strength", 0.3))

WEEKLY_TEMPLATES: dict[int, tuple[str, tuple[Move, ...]]] = {
    0: (
        "Upper Body Push",
        (
            Move(
                "Dumbbell Bench Press",
                "reps",
                (("Chest", 0.7), ("Shoulders", 0.15), ("Triceps", 0.15)),
                _STRENGTH,
                sets=4,
                reps=8,
                load_kg=22.5,
            ),
            Move(
                "Seated Dumbbell Shoulder Press",
                "reps",
                (("Shoulders", 0.7), ("Triceps", 0.3)),
                _HYPERTROPHY,
                reps=10,
                load_kg=15,
            ),
            Move(
                "Push-Up",
                "reps",
                (("Chest", 0.7), ("Shoulders", 0.15), ("Triceps", 0.15)),
                (("endurance", 0.5), ("hypertrophy", 0.5)),
                reps=15,
            ),
            Move(
                "Overhead Dumbbell Triceps Extension",
                "reps",
                (("Triceps", 1.0),),
                _HYPERTROPHY,
                reps=12,
                load_kg=10,
            ),
            Move("Plank", "hold", (("Abs", 1.0),), (("endurance", 0.6), ("strength", 0.4)), hold_sec=45),
        ),
    ),
    2: (
        "Lower Body",
        (
            Move(
                "Goblet Squat",
                "reps",
                (("Quadriceps", 0.7), ("Glutes", 0.15), ("Hamstrings", 0.15)),
                _STRENGTH,
                sets=4,
                reps=10,
                load_kg=24,
            ),
            Move(
                "Dumbbell Romanian Deadlift",
                "reps",
                (("Hamstrings", 0.7), ("Lower Back", 0.15), ("Glutes", 0.15)),
                _STRENGTH,
                reps=10,
                load_kg=22.5,
            ),
            Move(
                "Bulgarian Split Squat",
                "reps",
                (("Quadriceps", 0.7), ("Hamstrings", 0.15), ("Glutes", 0.15)),
                _HYPERTROPHY,
                reps=8,
                load_kg=12.5,
            ),
            Move("Glute Bridge", "reps", (("Glutes", 0.7), ("Hamstrings", 0.3)), _HYPERTROPHY, reps=12),
            Move("Dumbbell Calf Raise", "reps", (("Calves", 1.0),), _HYPERTROPHY, reps=15, load_kg=20),
        ),
    ),
    4: (
        "Upper Body Pull",
        (
            Move("Pull-Up", "reps", (("Back", 0.7), ("Biceps", 0.3)), _STRENGTH, sets=4, reps=6),
            Move(
                "Bent-Over Dumbbell Row",
                "reps",
                (("Back", 0.7), ("Shoulders", 0.15), ("Biceps", 0.15)),
                _STRENGTH,
                sets=4,
                reps=10,
                load_kg=25,
            ),
            Move(
                "Alternating Dumbbell Curl",
                "reps",
                (("Biceps", 0.7), ("Forearms", 0.3)),
                _HYPERTROPHY,
                reps=12,
                load_kg=12.5,
            ),
            Move(
                "Side Plank",
                "hold",
                (("Abs", 0.7), ("Shoulders", 0.3)),
                (("endurance", 0.5), ("strength", 0.5)),
                hold_sec=30,
            ),
        ),
    ),
    5: (
        "Conditioning & Mobility",
        (
            Move(
                "Outdoor Run",
                "duration",
                (("Quadriceps", 0.4), ("Hamstrings", 0.2), ("Glutes", 0.2), ("Calves", 0.2)),
                (("endurance", 1.0),),
                minutes=30,
                distance_km=5.0,
            ),
            Move(
                "Mountain Climber",
                "intervals",
                (("Quadriceps", 0.4), ("Abs", 0.3), ("Shoulders", 0.3)),
                (("endurance", 0.8), ("power", 0.2)),
                rounds=8,
                work_sec=30,
                rest_sec=15,
            ),
            Move(
                "Kneeling Hip Flexor Stretch",
                "hold",
                (("Quadriceps", 1.0),),
                (("mobility", 1.0),),
                sets=2,
                hold_sec=45,
            ),
            Move(
                "Hamstring Stretch", "hold", (("Hamstrings", 1.0),), (("mobility", 1.0),), sets=2, hold_sec=45
            ),
        ),
    ),
}


def _progressed_load(base_kg: float, progress: float) -> float:
    """The base load raised by up to 15% over the period, rounded to the nearest 2.5 kg plate step."""
    raised = base_kg * (1 + 0.15 * progress)
    return max(PLATE_STEP_KG, round(raised / PLATE_STEP_KG) * PLATE_STEP_KG)


def _entry(move: Move, rng: random.Random, progress: float, order: int, when: datetime) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "order": order,
        "exercise_name": move.name,
        "exercise_slug": slugify_exercise_name(move.name),
        "exercise_type": move.exercise_type,
        "muscles": [{"muscle": muscle, "share": share} for muscle, share in move.muscles],
        "goals": [{"goal": goal, "share": share} for goal, share in move.goals],
        "rpe": round(rng.uniform(6.5, 9.0) * 2) / 2,
        "completed_at": when,
    }
    if move.exercise_type == "reps":
        target_reps = move.reps + (1 if progress > 0.5 and not move.load_kg else 0)
        load = _progressed_load(move.load_kg, progress) if move.load_kg else 0.0
        actual = []
        for index in range(move.sets):
            # Fatigue: now and then one of the last two sets falls a rep or two short.
            short = rng.randint(1, 2) if index >= move.sets - 2 and rng.random() < 0.3 else 0
            actual.append(max(1, target_reps - short))
        entry |= {
            "target_sets": move.sets,
            "target_reps": [target_reps] * move.sets,
            "actual_sets": move.sets,
            "actual_reps": actual,
        }
        if load:
            entry |= {"target_load_each": [load] * move.sets, "actual_load_each": [load] * move.sets}
    elif move.exercise_type == "hold":
        hold = move.hold_sec + 5 * int(3 * progress)  # +0…15 s over the period
        entry |= {
            "target_sets": move.sets,
            "target_hold_sec": [hold] * move.sets,
            "actual_sets": move.sets,
            "actual_hold_sec": [hold - rng.choice((0, 0, 5)) for _ in range(move.sets)],
        }
    elif move.exercise_type == "duration":
        minutes = move.minutes + rng.choice((-5, 0, 0, 5))
        pace = 6.0 - 0.4 * progress + rng.uniform(-0.2, 0.2)  # min/km, getting faster
        entry |= {
            "target_duration_min": move.minutes,
            "target_distance": move.distance_km,
            "actual_duration_min": minutes,
            "actual_distance": round(minutes / pace, 1),
        }
    else:
        entry |= {
            "target_rounds": move.rounds,
            "target_work_sec": move.work_sec,
            "target_rest_sec": move.rest_sec,
            "actual_rounds": move.rounds - (1 if rng.random() < 0.2 else 0),
            "actual_work_sec": move.work_sec,
        }
    return entry


@dataclass(frozen=True)
class DemoWorkout:
    day: date
    title: str
    started_at: datetime
    completed_at: datetime
    entries: list[dict[str, Any]]


def demo_workouts(*, days: int, today: date, tz: tzinfo) -> list[DemoWorkout]:
    """The demo workouts of the `days` days before `today` (today excluded), oldest first."""
    workouts = []
    for back in range(days, 0, -1):
        day = today - timedelta(days=back)
        template = WEEKLY_TEMPLATES.get(day.weekday())
        rng = random.Random(RANDOM_SEED + day.toordinal())
        if template is None or rng.random() > ATTENDANCE:
            continue
        title, moves = template
        progress = 1 - back / days
        start = datetime.combine(day, time(18, rng.choice((0, 15, 30))), tzinfo=tz)
        minutes = 0
        entries = []
        for order, move in enumerate(moves):
            minutes += rng.randint(6, 10)
            entries.append(_entry(move, rng, progress, order, start + timedelta(minutes=minutes)))
        workouts.append(
            DemoWorkout(
                day=day,
                title=title,
                started_at=start,
                completed_at=start + timedelta(minutes=minutes + 2),
                entries=entries,
            )
        )
    return workouts
