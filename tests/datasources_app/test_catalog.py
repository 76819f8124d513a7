"""The exercise catalogue every database gets from the data migration, and its loader."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from datasources_app.catalog import (
    BODYWEIGHT,
    EQUIPMENT_SLUGS,
    EXERCISE_CATEGORIES,
    EXERCISE_TYPES,
    LEVELS,
    MUSCLES,
    SHARE_SUM_TOLERANCE,
    exercise_name_key,
)
from datasources_app.models import Equipment, Exercise
from datasources_app.services import DEFAULT_CATALOG_PATH, load_exercise_catalog, read_exercise_catalog

pytestmark = pytest.mark.django_db


def test_catalogue_is_loaded_by_migration_with_enough_exercises() -> None:
    """Every database holds the whole catalogue file, at least 150 exercises, without running a loader."""
    assert Exercise.objects.count() == len(read_exercise_catalog()) >= 150


def test_every_muscle_is_primary_in_several_exercises() -> None:
    """Each of the 16 muscles is the primary muscle of at least three exercises."""
    counts = Counter(
        muscle for muscles in Exercise.objects.values_list("primary_muscles", flat=True) for muscle in muscles
    )
    assert {muscle: counts[muscle] for muscle in MUSCLES if counts[muscle] < 3} == {}


def test_every_equipment_is_needed_by_some_exercise() -> None:
    """Each listed equipment exists and is required by an exercise; bodyweight exercises need none."""
    assert set(Equipment.objects.values_list("slug", flat=True)) == set(EQUIPMENT_SLUGS)
    used = set(Exercise.equipment.through.objects.values_list("equipment__slug", flat=True))
    assert set(EQUIPMENT_SLUGS) - used == {BODYWEIGHT}
    assert Exercise.objects.filter(equipment__isnull=True).count() >= 20


def test_muscles_and_shares_are_canonical_and_sum_to_one() -> None:
    """Muscles come from the 16, shares cover exactly the listed muscles and sum to 1.0."""
    for exercise in Exercise.objects.all():
        listed = [*exercise.primary_muscles, *exercise.secondary_muscles]
        assert set(listed) <= set(MUSCLES), exercise.name
        assert len(listed) == len(set(listed)), exercise.name
        # Compared as sets: PostgreSQL's jsonb does not keep key order.
        assert set(exercise.muscle_shares) == set(listed), exercise.name
        assert abs(sum(exercise.muscle_shares.values()) - 1.0) < SHARE_SUM_TOLERANCE / 10, exercise.name
        assert sum(round(share * 100) for share in exercise.muscle_shares.values()) == 100, exercise.name


def test_vocabularies_and_name_keys() -> None:
    """Type, category and level use the canonical values, and name keys are stored and unique."""
    rows = list(Exercise.objects.values_list("exercise_type", "category", "level", "name", "name_key"))
    assert {row[0] for row in rows} == set(EXERCISE_TYPES)
    assert {row[1] for row in rows} <= set(EXERCISE_CATEGORIES)
    assert {row[2] for row in rows} <= set(LEVELS)
    assert all(key == exercise_name_key(name) for *_, name, key in rows)
    assert len({row[4] for row in rows}) == len(rows)


def test_common_exercises_have_expected_equipment() -> None:
    """Equipment refinement: benches, racks and bars hidden behind the source's coarse values."""
    expected = {
        "barbell-bench-press": {"barbell", "bench", "squat_rack"},
        "dumbbell-bench-press": {"dumbbells", "bench"},
        "pull-up": {"pull_up_bar"},
        "triceps-dip": {"dip_station"},
        "box-jump": {"plyo_box"},
        "push-up": set(),
        "plank": set(),
        "leg-press": {"leg_press_machine"},
        "treadmill-run": {"treadmill"},
        "lat-pulldown": {"cable_machine"},
    }
    actual = {
        exercise.slug: {item.slug for item in exercise.equipment.all()}
        for exercise in Exercise.objects.filter(slug__in=expected).prefetch_related("equipment")
    }
    assert actual == expected


def test_exercise_types_follow_the_movement() -> None:
    """Planks hold, treadmill runs last a duration, jump rope is intervals, presses count reps."""
    types = dict(
        Exercise.objects.filter(
            slug__in=["plank", "treadmill-run", "jump-rope", "overhead-press", "hamstring-stretch"]
        ).values_list("slug", "exercise_type")
    )
    assert types == {
        "plank": "hold",
        "treadmill-run": "duration",
        "jump-rope": "intervals",
        "overhead-press": "reps",
        "hamstring-stretch": "hold",
    }


def test_loader_is_idempotent_and_repairs_drift(tmp_path: Path) -> None:
    """Loading again changes nothing; it restores edited fields and equipment links from the file."""
    before = Counter(Exercise.equipment.through.objects.values_list("exercise__slug", "equipment__slug"))
    push_up = Exercise.objects.get(slug="push-up")
    push_up.muscle_shares = {"Chest": 1.0}
    push_up.save()
    push_up.equipment.add(Equipment.objects.get(slug="barbell"))
    Exercise.objects.get(slug="pull-up").equipment.clear()

    assert load_exercise_catalog() == Exercise.objects.count()
    assert load_exercise_catalog() == Exercise.objects.count()

    assert (
        Counter(Exercise.equipment.through.objects.values_list("exercise__slug", "equipment__slug")) == before
    )
    rows = {row["slug"]: row for row in read_exercise_catalog()}
    assert Exercise.objects.get(slug="push-up").muscle_shares == rows["push-up"]["muscle_shares"]


def test_loader_adds_new_exercises_from_a_given_file(tmp_path: Path) -> None:
    """A catalogue file with a new exercise adds it with its equipment and leaves the others in place."""
    rows = read_exercise_catalog()
    rows.append(
        {**rows[0], "slug": "test-new-move", "name": "Test New Move", "aliases": [], "equipment": ["sled"]}
    )
    path = tmp_path / "exercises.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    count_before = Exercise.objects.count()

    assert load_exercise_catalog(path) == len(rows)

    added = Exercise.objects.get(slug="test-new-move")
    assert [item.slug for item in added.equipment.all()] == ["sled"]
    assert added.name_key == "testnewmove"
    assert Exercise.objects.count() == count_before + 1


def test_default_catalogue_path_is_inside_the_project() -> None:
    """The service reads its own fixture, never ../shared."""
    assert DEFAULT_CATALOG_PATH.parts[-2:] == ("fixtures", "exercises.json")
    assert "shared" not in DEFAULT_CATALOG_PATH.parts


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        ("push ups", "Push-Up"),
        ("PUSHUPS", "Push-Up"),
        ("dumbbell flyes", "Dumbbell Fly"),
        ("Triceps Push-downs", "Tricep Pushdown"),
        ("standing calf raises", "Standing Calf Raise"),
    ],
)
def test_name_key_ignores_case_hyphens_and_plurals(spelling: str, canonical: str) -> None:
    """Spellings of one exercise share a key."""
    assert exercise_name_key(spelling) == exercise_name_key(canonical)


def test_name_key_keeps_different_exercises_apart() -> None:
    """Keys still tell apart exercises that differ by a word."""
    assert exercise_name_key("Back Extension") != exercise_name_key("Back Squat")
    assert exercise_name_key("Lat Pulldown") != exercise_name_key("Lat Pullover")


@pytest.mark.django_db
def test_migrate_brings_a_deployed_catalogue_up_to_date() -> None:
    """A database migrated before the knee-friendly home quad work was added gets it from `migrate` (migration
    0009 writes the catalogue again), as deployments only run migrate."""
    import importlib

    from django.apps import apps

    migration = importlib.import_module("datasources_app.migrations.0009_sync_exercise_catalog")
    Exercise.objects.filter(name__in=["Dumbbell Box Squat", "Spanish Squat"]).delete()
    migration.sync_catalog(apps, None)
    assert set(
        Exercise.objects.filter(name__in=["Dumbbell Box Squat", "Spanish Squat"]).values_list(
            "name", flat=True
        )
    ) == {"Dumbbell Box Squat", "Spanish Squat"}


@pytest.mark.django_db
def test_migrate_gives_a_deployed_catalogue_home_cardio_and_a_dumbbell_goblet_squat() -> None:
    """A database migrated before the bodyweight cardio was added gets it from `migrate` (migration 0011), and its
    Goblet Squat, once a kettlebell lift, is done with the dumbbells a home has."""
    import importlib

    from django.apps import apps

    migration = importlib.import_module("datasources_app.migrations.0011_sync_exercise_catalog_home_cardio")
    added = ["Marching High Knees", "Step Jacks", "Shadow Boxing", "Skater", "Kettlebell Goblet Squat"]
    Exercise.objects.filter(name__in=added).delete()
    goblet = Exercise.objects.get(slug="goblet-squat")
    goblet.equipment.set(Equipment.objects.filter(slug="kettlebell"))
    migration.sync_catalog(apps, None)
    assert set(Exercise.objects.filter(name__in=added).values_list("name", flat=True)) == set(added)
    assert {item.slug for item in goblet.equipment.all()} == {"dumbbells"}
