"""scripts/build_exercise_catalog.py: deterministic output and the derivations it relies on."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from datasources_app.catalog import MUSCLES

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "scripts" / "build_exercise_catalog.py"


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_exercise_catalog", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


build = _load_script()
source_missing = pytest.mark.skipif(
    not build.DEFAULT_SOURCE.exists(), reason=f"source data not present at {build.DEFAULT_SOURCE}"
)


@source_missing
def test_build_is_deterministic_and_matches_the_committed_fixture(tmp_path: Path) -> None:
    """Two runs write identical bytes, equal to fixtures/exercises.json."""
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    assert build.main([str(build.DEFAULT_SOURCE), "--output", str(first)]) == 0
    assert build.main([str(build.DEFAULT_SOURCE), "--output", str(second)]) == 0
    assert first.read_bytes() == second.read_bytes()
    assert first.read_bytes() == (REPO_ROOT / "fixtures" / "exercises.json").read_bytes()


def test_source_muscles_map_onto_the_sixteen() -> None:
    """All 17 source muscles map to canonical names; lats and middle back merge into Back."""
    assert len(build.SOURCE_MUSCLES) == 17
    assert set(build.SOURCE_MUSCLES.values()) == set(MUSCLES)
    primary, secondary = build.map_muscles(["lats"], ["middle back", "biceps", "lats", "traps"])
    assert (primary, secondary) == (["Back"], ["Biceps", "Trapezius"])


@given(
    primary=st.lists(st.sampled_from(MUSCLES[:8]), min_size=1, max_size=3, unique=True),
    secondary=st.lists(st.sampled_from(MUSCLES[8:]), max_size=8, unique=True),
)
def test_muscle_shares_sum_to_exactly_one(primary: list[str], secondary: list[str]) -> None:
    """Shares are whole hundredths summing to 100, primaries 0.70 (1.00 alone), every muscle > 0."""
    shares = build.muscle_shares(primary, secondary)
    assert list(shares) == primary + secondary
    assert sum(round(share * 100) for share in shares.values()) == 100
    assert all(share > 0 for share in shares.values())
    assert round(sum(shares[m] for m in primary) * 100) == (70 if secondary else 100)


@pytest.mark.parametrize(
    ("name", "coarse", "category", "expected"),
    [
        ("Pullups", "body only", "strength", ["pull_up_bar"]),
        ("Chin To Chest Stretch", None, "stretching", []),
        ("Dips - Chest Version", "other", "strength", ["dip_station"]),
        ("Front Box Jump", "other", "plyometrics", ["plyo_box"]),
        ("Barbell Squat", "barbell", "strength", ["barbell", "squat_rack"]),
        ("Incline Dumbbell Press", "dumbbell", "strength", ["bench", "dumbbells"]),
        ("Incline Push-Up", "body only", "strength", []),
        ("Smith Machine Incline Bench Press", "machine", "strength", ["bench", "smith_machine"]),
        ("Running, Treadmill", "machine", "cardio", ["treadmill"]),
        ("Preacher Curl", "barbell", "strength", ["barbell", "preacher_bench"]),
        ("Cable Crossover", "cable", "strength", ["cable_machine"]),
        ("Lunge Sprint", "machine", "strength", None),
        ("Atlas Stones", "other", "strongman", None),
    ],
)
def test_equipment_is_refined_from_name_and_coarse_value(
    name: str, coarse: str | None, category: str, expected: list[str] | None
) -> None:
    """Coarse equipment plus name keywords give every implement needed; unknown machines give None."""
    assert build.derive_equipment({"name": name, "equipment": coarse, "category": category}) == expected


@pytest.mark.parametrize(
    ("name", "category", "expected"),
    [
        ("Plank", "strength", "hold"),
        ("Hamstring Stretch", "stretching", "hold"),
        ("Arm Circles", "stretching", "reps"),
        ("Jogging, Treadmill", "cardio", "duration"),
        ("Rope Jumping", "cardio", "intervals"),
        ("Farmer's Walk", "strongman", "duration"),
        ("Bodyweight Walking Lunge", "strength", "reps"),
        ("Barbell Squat", "strength", "reps"),
    ],
)
def test_exercise_type_is_derived_from_category_and_name(name: str, category: str, expected: str) -> None:
    """Static stretches and planks hold, cardio lasts, ropes and sprints are intervals, the rest count reps."""
    assert build.derive_exercise_type({"name": name, "category": category}) == expected
