"""factory-boy factories for every datasources_app model."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable
from typing import Any

import factory
from django.utils import timezone
from factory.django import DjangoModelFactory

from datasources_app.catalog import exercise_name_key, slugify_exercise_name
from datasources_app.models import (
    CategoryGoal,
    CurrentWorkout,
    Equipment,
    Exercise,
    Location,
    MilestoneGoal,
    MuscleGoal,
    Preference,
    ScheduledWorkout,
    UserProfile,
    UserSettings,
    WorkoutLog,
    WorkoutLogEntry,
    WorkoutPlan,
)


def _equipment(items: Iterable[Equipment | str]) -> list[Equipment]:
    """Equipment objects from objects or slugs (the catalogue's equipment exists in every test database)."""
    return [item if isinstance(item, Equipment) else Equipment.objects.get(slug=item) for item in items]


class UserProfileFactory(DjangoModelFactory[UserProfile]):
    class Meta:
        model = UserProfile

    user_id = factory.LazyFunction(uuid.uuid4)
    display_name = factory.Sequence(lambda n: f"User {n}")
    birth_year = 1990
    sex = "female"
    height_cm = 170.0
    weight_kg = 65.0
    experience_level = "beginner"


class UserSettingsFactory(DjangoModelFactory[UserSettings]):
    class Meta:
        model = UserSettings

    user_id = factory.LazyFunction(uuid.uuid4)
    weight_unit = "kg"
    distance_unit = "km"
    timezone = "UTC"


class EquipmentFactory(DjangoModelFactory[Equipment]):
    class Meta:
        model = Equipment
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"test_equipment_{n}")
    name = factory.LazyAttribute(lambda obj: obj.slug.replace("_", " ").title())
    category = "accessories"


class LocationFactory(DjangoModelFactory[Location]):
    """`LocationFactory(equipment=["dumbbells", "bench"])` attaches equipment by slug or object."""

    class Meta:
        model = Location
        skip_postgeneration_save = True

    user_id = factory.LazyFunction(uuid.uuid4)
    name = factory.Sequence(lambda n: f"Location {n}")
    description = ""
    is_current = False

    @factory.post_generation
    def equipment(self, create: bool, extracted: Iterable[Equipment | str] | None, **kwargs: Any) -> None:
        if create and extracted:
            self.equipment.set(_equipment(extracted))


class ExerciseFactory(DjangoModelFactory[Exercise]):
    """`ExerciseFactory(equipment=["barbell"])` attaches equipment by slug or object; none = bodyweight."""

    class Meta:
        model = Exercise
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"Test Exercise {n}")
    slug = factory.LazyAttribute(lambda obj: slugify_exercise_name(obj.name))
    name_key = factory.LazyAttribute(lambda obj: exercise_name_key(obj.name))
    exercise_type = "reps"
    category = "strength"
    level = "beginner"
    mechanic = "compound"
    force = "push"
    primary_muscles = factory.LazyFunction(lambda: ["Chest"])
    secondary_muscles = factory.LazyFunction(lambda: ["Triceps"])
    muscle_shares = factory.LazyFunction(lambda: {"Chest": 0.7, "Triceps": 0.3})

    @factory.post_generation
    def equipment(self, create: bool, extracted: Iterable[Equipment | str] | None, **kwargs: Any) -> None:
        if create and extracted:
            self.equipment.set(_equipment(extracted))


def sample_workout(title: str = "Push Day") -> dict[str, Any]:
    """A small valid workout dict as generate_workout stores it."""
    return {
        "title": title,
        "summary": "Chest and triceps",
        "exercises": [
            {
                "id": "ex_1",
                "exercise_name": "Push-Up",
                "exercise_type": "reps",
                "sets": 3,
                "reps": [10, 10, 10],
                "muscles_utilized": [{"muscle": "Chest", "share": 0.7}, {"muscle": "Triceps", "share": 0.3}],
                "goals_addressed": [{"goal": "strength", "share": 1.0}],
            }
        ],
    }


class CurrentWorkoutFactory(DjangoModelFactory[CurrentWorkout]):
    class Meta:
        model = CurrentWorkout

    user_id = factory.LazyFunction(uuid.uuid4)
    workout = factory.LazyFunction(sample_workout)
    artifact_id = factory.Sequence(lambda n: f"art_test{n:06d}")
    session_id = None


class PreferenceFactory(DjangoModelFactory[Preference]):
    class Meta:
        model = Preference

    user_id = factory.LazyFunction(uuid.uuid4)
    preference_type = "permanent"
    category = "general"
    description = factory.Sequence(lambda n: f"Preference {n}")
    guidance = ""
    exclude_exercises = factory.LazyFunction(list)
    exclude_equipment = factory.LazyFunction(list)
    expires_at = None
    delete_after_use = False


class WorkoutLogFactory(DjangoModelFactory[WorkoutLog]):
    class Meta:
        model = WorkoutLog

    user_id = factory.LazyFunction(uuid.uuid4)
    title = factory.Sequence(lambda n: f"Workout {n}")
    completed_at = factory.LazyFunction(timezone.now)
    started_at = factory.LazyAttribute(lambda obj: obj.completed_at - dt.timedelta(minutes=45))


class WorkoutLogEntryFactory(DjangoModelFactory[WorkoutLogEntry]):
    """A reps entry: 3×8 @ 20 kg on chest (0.7) and triceps (0.3), strength."""

    class Meta:
        model = WorkoutLogEntry

    log = factory.SubFactory(WorkoutLogFactory)
    order = factory.Sequence(lambda n: n)
    exercise_name = "Dumbbell Bench Press"
    exercise_slug = "dumbbell-bench-press"
    exercise_type = "reps"
    muscles = factory.LazyFunction(
        lambda: [{"muscle": "Chest", "share": 0.7}, {"muscle": "Triceps", "share": 0.3}]
    )
    goals = factory.LazyFunction(lambda: [{"goal": "strength", "share": 1.0}])
    target_sets = 3
    target_reps = factory.LazyFunction(lambda: [8, 8, 8])
    target_load_each = factory.LazyFunction(lambda: [20, 20, 20])
    actual_sets = 3
    actual_reps = factory.LazyFunction(lambda: [8, 8, 8])
    actual_load_each = factory.LazyFunction(lambda: [20, 20, 20])
    load_unit = "kg"
    completed_at = factory.LazyAttribute(lambda obj: obj.log.completed_at)


class CategoryGoalFactory(DjangoModelFactory[CategoryGoal]):
    class Meta:
        model = CategoryGoal

    user_id = factory.LazyFunction(uuid.uuid4)
    category = "strength"
    weight = 1.0


class MuscleGoalFactory(DjangoModelFactory[MuscleGoal]):
    class Meta:
        model = MuscleGoal

    user_id = factory.LazyFunction(uuid.uuid4)
    muscle = "Chest"
    weight = 1.0


class MilestoneGoalFactory(DjangoModelFactory[MilestoneGoal]):
    class Meta:
        model = MilestoneGoal

    user_id = factory.LazyFunction(uuid.uuid4)
    title = "Bench press 100 kg"
    metric = "bench press 1RM"
    target_value = 100.0
    current_value = 80.0
    unit = "kg"
    status = "active"


class WorkoutPlanFactory(DjangoModelFactory[WorkoutPlan]):
    class Meta:
        model = WorkoutPlan

    user_id = factory.LazyFunction(uuid.uuid4)
    name = factory.Sequence(lambda n: f"Plan {n}")
    goal = "strength"
    weeks = 4
    start_date = factory.LazyFunction(lambda: timezone.localdate())
    status = "active"
    plan = factory.LazyFunction(lambda: {"weeks": [{"week": 1, "days": [{"day": 1, "title": "Upper body"}]}]})


class ScheduledWorkoutFactory(DjangoModelFactory[ScheduledWorkout]):
    class Meta:
        model = ScheduledWorkout

    user_id = factory.LazyFunction(uuid.uuid4)
    scheduled_date = factory.LazyFunction(lambda: timezone.localdate() + dt.timedelta(days=1))
    scheduled_time = None
    title = factory.Sequence(lambda n: f"Session {n}")
    status = "scheduled"
