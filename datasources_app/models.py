"""The user's fitness data (profile, settings, locations) and the exercise catalogue.

Users live outside this service (Supabase): rows carry the caller's `user_id` UUID, never a foreign key
to Django's auth user, which is for staff only.
"""

from __future__ import annotations

import uuid
from typing import ClassVar

from django.db import models
from django.db.models.functions import Lower

from datasources_app.catalog import (
    EQUIPMENT_CATEGORIES,
    EXERCISE_CATEGORIES,
    EXERCISE_TYPES,
    FORCES,
    LEVELS,
    MECHANICS,
    MOVEMENT_PATTERNS,
    MUSCLES,
)

_LABELS = {"benches_racks": "Benches & racks"}


def _choices(values: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(value, _LABELS.get(value, value.replace("_", " ").capitalize())) for value in values]


class Sex(models.TextChoices):
    MALE = "male"
    FEMALE = "female"
    OTHER = "other"
    UNSPECIFIED = "unspecified"


class ExperienceLevel(models.TextChoices):
    BEGINNER = "beginner"
    INTERMEDIATE = "intermediate"
    ADVANCED = "advanced"


class WeightUnit(models.TextChoices):
    KG = "kg"
    LB = "lb"


class DistanceUnit(models.TextChoices):
    KM = "km"
    MI = "mi"


class WorkoutSection(models.TextChoices):
    """The part of a workout an exercise was done in (its group type `warmup` / `cooldown`, else main)."""

    MAIN = "main"
    WARMUP = "warmup"
    COOLDOWN = "cooldown"


class UserProfile(models.Model):
    """Body stats and training background (docs/contracts.md §8.2 (user data block) `<body_stats>`). Stored in metric units."""

    user_id = models.UUIDField(unique=True)
    display_name = models.CharField(max_length=100, blank=True)
    birth_year = models.PositiveSmallIntegerField(null=True, blank=True)
    sex = models.CharField(max_length=12, choices=Sex.choices, default=Sex.UNSPECIFIED)
    height_cm = models.FloatField(null=True, blank=True)
    weight_kg = models.FloatField(null=True, blank=True)
    body_fat_pct = models.FloatField(null=True, blank=True)
    experience_level = models.CharField(
        max_length=12, choices=ExperienceLevel.choices, default=ExperienceLevel.BEGINNER
    )
    injuries = models.TextField(blank=True, help_text="Injuries and limitations in the user's own words.")
    limitations = models.JSONField(
        default=list, blank=True, help_text='Short tags the tools can match, e.g. ["lower back", "knee"].'
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "user_profiles"

    def __str__(self) -> str:
        return self.display_name or str(self.user_id)


class UserSettings(models.Model):
    """Unit preferences and time zone (docs/contracts.md §8.2 (user data block) `<unit_preferences>`)."""

    user_id = models.UUIDField(unique=True)
    weight_unit = models.CharField(max_length=2, choices=WeightUnit.choices, default=WeightUnit.KG)
    distance_unit = models.CharField(max_length=2, choices=DistanceUnit.choices, default=DistanceUnit.KM)
    timezone = models.CharField(max_length=64, default="UTC")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "user_settings"
        verbose_name_plural = "user settings"

    def __str__(self) -> str:
        return f"{self.user_id} ({self.weight_unit}/{self.distance_unit})"


class Equipment(models.Model):
    slug = models.SlugField(max_length=40, unique=True)
    name = models.CharField(max_length=80)
    category = models.CharField(max_length=20, choices=_choices(EQUIPMENT_CATEGORIES))

    class Meta:
        db_table = "equipment"
        ordering = ("category", "name")
        verbose_name_plural = "equipment"

    def __str__(self) -> str:
        return self.name


class Location(models.Model):
    """A place the user trains, with the equipment available there. At most one is current."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user_id = models.UUIDField(db_index=True)
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    equipment = models.ManyToManyField(Equipment, blank=True, related_name="locations")
    available_weights_kg = models.JSONField(
        default=dict,
        blank=True,
        help_text='Loads on hand per equipment slug, in kg, e.g. {"dumbbells": [5, 10, 15, 20]}.',
    )
    is_current = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "user_locations"
        ordering = ("-is_current", "name")
        constraints: ClassVar = [
            models.UniqueConstraint(
                fields=["user_id"],
                condition=models.Q(is_current=True),
                name="location_one_current_per_user",
            ),
            # Case-insensitive, because the set_current_location tool looks locations up by name that way.
            models.UniqueConstraint(Lower("name"), "user_id", name="location_unique_name_per_user"),
        ]

    def __str__(self) -> str:
        return f"{self.name}{' (current)' if self.is_current else ''}"


class Exercise(models.Model):
    """One catalogue exercise. `equipment` lists everything it needs; an empty set means bodyweight."""

    name = models.CharField(max_length=120, unique=True)
    slug = models.SlugField(max_length=120, unique=True)
    # exercise_name_key(name): lets lookups ignore case, hyphens and plurals with one indexed query.
    name_key = models.CharField(max_length=120, db_index=True, editable=False)
    aliases = models.JSONField(default=list, blank=True, help_text="Other names people use for it.")
    exercise_type = models.CharField(max_length=10, choices=_choices(EXERCISE_TYPES))
    category = models.CharField(max_length=20, choices=_choices(EXERCISE_CATEGORIES))
    level = models.CharField(max_length=12, choices=_choices(LEVELS))
    mechanic = models.CharField(max_length=10, choices=_choices(MECHANICS), blank=True)
    force = models.CharField(max_length=10, choices=_choices(FORCES), blank=True)
    primary_muscles = models.JSONField(default=list)
    secondary_muscles = models.JSONField(default=list, blank=True)
    # Key order is not preserved by PostgreSQL's jsonb: list muscles in primary + secondary order instead.
    muscle_shares = models.JSONField(default=dict, help_text="{muscle: share}; shares sum to 1.0.")
    equipment = models.ManyToManyField(Equipment, blank=True, related_name="exercises")
    # What injuries are checked against (datasources_app.catalog.BODY_PARTS): the movement and loaded joints.
    movement_pattern = models.CharField(
        max_length=20,
        choices=_choices(MOVEMENT_PATTERNS),
        blank=True,
        help_text="squat, hinge, vertical_push, …",
    )
    loaded_joints = models.JSONField(
        default=list, blank=True, help_text='Joints the exercise loads, e.g. ["knee", "hip", "ankle"].'
    )
    instructions = models.TextField(blank=True)
    source_id = models.CharField(max_length=120, blank=True, help_text="Free Exercise DB id, if derived.")

    class Meta:
        db_table = "exercises"
        ordering = ("name",)

    def __str__(self) -> str:
        return self.name


# --- The current workout ------------------------------------------------------------------------------------
class CurrentWorkout(models.Model):
    """The workout the user is doing now, one per user, in the database so any worker sees it after a restart.

    `workout` is the validated workout dict of generate_workout ({title, exercises: [...], summary, ...}).
    """

    user_id = models.UUIDField(unique=True)
    workout = models.JSONField()
    artifact_id = models.CharField(max_length=64)
    session_id = models.UUIDField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "current_workouts"

    def __str__(self) -> str:
        return f"{self.workout.get('title') or 'Workout'} ({self.artifact_id})"


# --- Preferences --------------------------------------------------------------------------------------------
class PreferenceType(models.TextChoices):
    PERMANENT = "permanent"
    TEMPORARY = "temporary"


class Preference(models.Model):
    """Something the user wants the coach to respect (docs/contracts.md §11.5 (tool list)).

    `description` is what the user said, `guidance` how the coach should act on it. The exclusion lists let
    workouts be checked mechanically; free-text preferences leave them empty.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user_id = models.UUIDField(db_index=True)
    preference_type = models.CharField(max_length=10, choices=PreferenceType.choices)
    category = models.CharField(
        max_length=40, default="general", help_text="exercise, equipment, schedule, intensity, general, …"
    )
    description = models.TextField()
    guidance = models.TextField(blank=True)
    exclude_exercises = models.JSONField(
        default=list, blank=True, help_text="Exercise names or slugs the user does not want."
    )
    exclude_equipment = models.JSONField(default=list, blank=True, help_text="Equipment slugs not to use.")
    expires_at = models.DateTimeField(null=True, blank=True)
    delete_after_use = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "user_preferences"
        ordering = ("-created_at",)

    def __str__(self) -> str:
        return f"{self.preference_type}: {self.description[:60]}"


# --- Workout logs -------------------------------------------------------------------------------------------
class WorkoutLog(models.Model):
    """One logged training session; its entries keep what was planned apart from what was done."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user_id = models.UUIDField(db_index=True)
    session_id = models.UUIDField(null=True, blank=True)
    title = models.CharField(max_length=200, blank=True)
    notes = models.TextField(blank=True)
    artifact_id = models.CharField(max_length=64, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "workout_logs"
        ordering = ("-completed_at",)
        indexes: ClassVar = [
            models.Index(fields=["user_id", "-completed_at"], name="workout_log_user_recent")
        ]

    def __str__(self) -> str:
        return f"{self.title or 'Workout'} ({self.completed_at:%Y-%m-%d})"


# What a log entry holds twice, as `target_<field>` (the plan) and `actual_<field>` (what was done).
PERFORMANCE_FIELDS = (
    "sets",
    "reps",
    "load_each",
    "hold_sec",
    "duration_min",
    "distance",
    "rounds",
    "work_sec",
)


class WorkoutLogEntry(models.Model):
    """One exercise of a logged workout. Lists (reps, loads, holds) hold one value per set.

    Loads are stored in `load_unit` and distances in `distance_unit` as the user gave them; readers convert.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    log = models.ForeignKey(WorkoutLog, on_delete=models.CASCADE, related_name="entries")
    order = models.PositiveSmallIntegerField(default=0)
    exercise_name = models.CharField(max_length=120)
    exercise_slug = models.CharField(max_length=120, blank=True)
    exercise_type = models.CharField(max_length=10, choices=_choices(EXERCISE_TYPES), default="reps")
    # Warm-up and cool-down sets are not working volume (datasources_app.distribution.is_working_entry).
    section = models.CharField(max_length=8, choices=WorkoutSection.choices, default=WorkoutSection.MAIN)
    muscles = models.JSONField(default=list, blank=True, help_text='[{"muscle": "Chest", "share": 0.7}, …]')
    goals = models.JSONField(default=list, blank=True, help_text='[{"goal": "strength", "share": 1.0}, …]')
    # What the workout asked for.
    target_sets = models.PositiveSmallIntegerField(null=True, blank=True)
    target_reps = models.JSONField(default=list, blank=True)
    target_load_each = models.JSONField(default=list, blank=True)
    target_hold_sec = models.JSONField(default=list, blank=True)
    target_duration_min = models.FloatField(null=True, blank=True)
    target_distance = models.FloatField(null=True, blank=True)
    target_rounds = models.PositiveSmallIntegerField(null=True, blank=True)
    target_work_sec = models.PositiveIntegerField(null=True, blank=True)
    target_rest_sec = models.PositiveIntegerField(null=True, blank=True)
    # What the user did.
    actual_sets = models.PositiveSmallIntegerField(null=True, blank=True)
    actual_reps = models.JSONField(default=list, blank=True)
    actual_load_each = models.JSONField(default=list, blank=True)
    actual_hold_sec = models.JSONField(default=list, blank=True)
    actual_duration_min = models.FloatField(null=True, blank=True)
    actual_distance = models.FloatField(null=True, blank=True)
    actual_rounds = models.PositiveSmallIntegerField(null=True, blank=True)
    actual_work_sec = models.PositiveIntegerField(null=True, blank=True)
    load_unit = models.CharField(max_length=2, choices=WeightUnit.choices, default=WeightUnit.KG)
    distance_unit = models.CharField(max_length=2, choices=DistanceUnit.choices, default=DistanceUnit.KM)
    rpe = models.FloatField(null=True, blank=True, help_text="Rate of perceived exertion, 1-10.")
    notes = models.TextField(blank=True)
    skipped = models.BooleanField(default=False)
    completed_at = models.DateTimeField()

    class Meta:
        db_table = "workout_log_entries"
        ordering = ("order", "completed_at")
        constraints: ClassVar = [
            models.CheckConstraint(
                condition=models.Q(rpe__isnull=True) | models.Q(rpe__gte=1, rpe__lte=10),
                name="log_entry_rpe_1_to_10",
            ),
        ]

    def __str__(self) -> str:
        return self.exercise_name


# --- Goals --------------------------------------------------------------------------------------------------
class CategoryGoal(models.Model):
    """How much of the user's training should go to one goal category (weights of a user sum to 1)."""

    user_id = models.UUIDField(db_index=True)
    category = models.CharField(max_length=40)
    weight = models.FloatField()
    description = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "category_goals"
        ordering = ("-weight", "category")
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["user_id", "category"], name="category_goal_unique_per_user"),
            models.CheckConstraint(
                condition=models.Q(weight__gte=0, weight__lte=1), name="category_goal_weight_0_1"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.category} {self.weight:.0%}"


class MuscleGoal(models.Model):
    """How much of the user's training should go to one of the 16 canonical muscles."""

    user_id = models.UUIDField(db_index=True)
    muscle = models.CharField(max_length=20, choices=[(muscle, muscle) for muscle in MUSCLES])
    weight = models.FloatField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "muscle_goals"
        ordering = ("-weight", "muscle")
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["user_id", "muscle"], name="muscle_goal_unique_per_user"),
            models.CheckConstraint(
                condition=models.Q(weight__gte=0, weight__lte=1), name="muscle_goal_weight_0_1"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.muscle} {self.weight:.0%}"


class MilestoneStatus(models.TextChoices):
    ACTIVE = "active"
    ACHIEVED = "achieved"
    ABANDONED = "abandoned"


class MilestoneGoal(models.Model):
    """A measurable target ("bench 100 kg by June"): `metric` names what is measured, in `unit`."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user_id = models.UUIDField(db_index=True)
    title = models.CharField(max_length=200)
    metric = models.CharField(max_length=120, blank=True)
    target_value = models.FloatField()
    current_value = models.FloatField(default=0)
    unit = models.CharField(max_length=20, blank=True)
    deadline = models.DateField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=MilestoneStatus.choices, default=MilestoneStatus.ACTIVE)
    achieved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "milestone_goals"
        ordering = ("status", "deadline", "created_at")

    def __str__(self) -> str:
        return self.title


# --- Plans and schedule -------------------------------------------------------------------------------------
class PlanStatus(models.TextChoices):
    DRAFT = "draft"
    ACTIVE = "active"
    COMPLETED = "completed"
    ARCHIVED = "archived"


class WorkoutPlan(models.Model):
    """A multi-week programme. `plan` is {"weeks": [{"week": 1, "days": [{"day": 1, "title": …}, …]}, …]}."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user_id = models.UUIDField(db_index=True)
    name = models.CharField(max_length=200)
    goal = models.TextField(blank=True)
    weeks = models.PositiveSmallIntegerField(default=4)
    start_date = models.DateField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=PlanStatus.choices, default=PlanStatus.DRAFT)
    plan = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "workout_plans"
        ordering = ("-created_at",)

    def __str__(self) -> str:
        return f"{self.name} ({self.status})"


class ScheduleStatus(models.TextChoices):
    SCHEDULED = "scheduled"
    COMPLETED = "completed"
    SKIPPED = "skipped"
    CANCELLED = "cancelled"


class Preparation(models.TextChoices):
    """Where a plan day's workout and message stand (the week chain: microcycle → workout_structure →
    workout_message). Blank for workouts the user or the model scheduled themselves."""

    NONE = "", "Not prepared"
    PENDING = "pending", "Being prepared"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"


class ScheduledWorkout(models.Model):
    """A workout on the user's calendar, on its own or as one day of a plan."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user_id = models.UUIDField(db_index=True)
    scheduled_date = models.DateField()
    scheduled_time = models.TimeField(null=True, blank=True)
    title = models.CharField(max_length=200, help_text="What kind of workout, e.g. 'Upper Body Strength'.")
    duration_minutes = models.PositiveSmallIntegerField(null=True, blank=True)
    notes = models.TextField(blank=True)
    workout = models.JSONField(null=True, blank=True, help_text="Pre-planned workout dict, if any.")
    status = models.CharField(max_length=10, choices=ScheduleStatus.choices, default=ScheduleStatus.SCHEDULED)
    plan = models.ForeignKey(
        WorkoutPlan, null=True, blank=True, on_delete=models.SET_NULL, related_name="scheduled_workouts"
    )
    message = models.TextField(
        blank=True, help_text="The day's workout as one SMS-sized message (at most 1,600 characters)."
    )
    preparation = models.CharField(
        max_length=10, choices=Preparation.choices, default=Preparation.NONE, blank=True
    )
    preparation_error = models.TextField(blank=True, help_text="Why the week chain could not prepare it.")
    preparation_layout = models.JSONField(
        null=True,
        blank=True,
        help_text="The day as the week chain laid it out ({date, markdown, draft}): preparing the day again on "
        "its own starts from it instead of laying out the whole week again.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "scheduled_workouts"
        ordering = ("scheduled_date", "scheduled_time", "created_at")
        indexes: ClassVar = [models.Index(fields=["user_id", "scheduled_date"], name="scheduled_user_date")]

    def __str__(self) -> str:
        return f"{self.title} on {self.scheduled_date}"
