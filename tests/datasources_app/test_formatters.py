"""The compact text primitives the data-source formatters are built from."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from datasources_app import formatters
from datasources_app.formatters import Units

KG = Units()
LB = Units(weight="lb", distance="mi", tz=ZoneInfo("America/New_York"))


@pytest.mark.parametrize(
    ("value", "text"), [(20, "20"), (20.0, "20"), (16.53, "16.5"), (0.04, "0"), (7.25, "7.2")]
)
def test_number_keeps_at_most_one_decimal(value: float, text: str) -> None:
    """Numbers drop a trailing .0 and round to one decimal."""
    assert formatters.number(value) == text


def test_day_in_the_users_time_zone() -> None:
    """Dates read "Mon 14 Nov"; a datetime is converted to the user's zone first; years on request."""
    late_utc = dt.datetime(2022, 11, 15, 2, 0, tzinfo=dt.UTC)  # still Monday 14th in New York
    assert formatters.day(late_utc, LB) == "Mon 14 Nov"
    assert formatters.day(late_utc, KG) == "Tue 15 Nov"
    assert formatters.day(dt.date(2026, 6, 1), with_year=True) == "Mon 1 Jun 2026"


@pytest.mark.parametrize(
    ("kwargs", "units", "text"),
    [
        (
            {"exercise_type": "reps", "sets": 3, "reps": [8, 8, 8], "load_each": [20, 20, 20]},
            KG,
            "3×8 @ 20kg",
        ),
        (
            {"exercise_type": "reps", "sets": 3, "reps": [8, 8, 6], "load_each": [20, 20, 22.5]},
            KG,
            "3×8/8/6 @ 20/20/22.5kg",
        ),
        (
            {"exercise_type": "reps", "sets": 3, "reps": [8, 8, 8], "load_each": [20, 20, 20]},
            LB,
            "3×8 @ 44lb",
        ),
        (
            {"exercise_type": "reps", "sets": 2, "reps": 10, "load_each": 45, "load_unit": "lb"},
            LB,
            "2×10 @ 45lb",
        ),
        ({"exercise_type": "reps", "sets": 3, "reps": []}, KG, "3 sets"),
        ({"exercise_type": "reps", "sets": 3, "reps": [12]}, KG, "3×12"),
        ({"exercise_type": "hold", "sets": 3, "hold_sec": [45, 45, 40]}, KG, "3×45/45/40s"),
        ({"exercise_type": "duration", "duration_min": 30, "distance": 5}, KG, "30min 5km"),
        ({"exercise_type": "duration", "duration_min": 30, "distance": 5}, LB, "30min 3.1mi"),
        ({"exercise_type": "intervals", "rounds": 8, "work_sec": 20, "rest_sec": 10}, KG, "8×20s/10s"),
        ({"exercise_type": "intervals", "rounds": None}, KG, ""),
    ],
)
def test_prescription_by_type(kwargs: dict[str, object], units: Units, text: str) -> None:
    """Each exercise type has its abbreviation, loads and distances in the user's units."""
    assert formatters.prescription(units=units, **kwargs) == text  # type: ignore[arg-type]


def test_workout_exercise_line_accepts_both_seed_spellings() -> None:
    """Seed 000 (exercise_name, load_each) and seed 001 (name, type, load, "lbs") exercises both render."""
    seed_000 = {
        "exercise_name": "Goblet Squat",
        "exercise_type": "reps",
        "sets": 3,
        "reps": [10, 10, 10],
        "load_each": [24, 24, 24],
        "load_unit": "kg",
        "completed": True,
    }
    seed_001 = {
        "name": "Row",
        "type": "reps",
        "sets": 4,
        "reps": [10],
        "load": 50,
        "load_unit": "lbs",
        "group": {"id": "superset-1", "type": "superset", "position": 1},
    }
    assert formatters.workout_exercise_line(seed_000, 1, KG) == "✓ 1. Goblet Squat (reps) 3×10 @ 24kg"
    assert (
        formatters.workout_exercise_line(seed_001, 2, LB)
        == "○ 2. Row (reps) 4×10 @ 50lb [superset superset-1]"
    )
