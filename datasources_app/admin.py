from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from datasources_app.catalog import exercise_name_key
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


@admin.register(UserProfile)
class UserProfileAdmin(admin.ModelAdmin[UserProfile]):
    list_display = (
        "display_name",
        "user_id",
        "sex",
        "birth_year",
        "height_cm",
        "weight_kg",
        "experience_level",
    )
    list_filter = ("experience_level", "sex")
    search_fields = ("display_name", "user_id", "injuries")
    readonly_fields = ("created_at", "updated_at")


@admin.register(UserSettings)
class UserSettingsAdmin(admin.ModelAdmin[UserSettings]):
    list_display = ("user_id", "weight_unit", "distance_unit", "timezone", "updated_at")
    list_filter = ("weight_unit", "distance_unit")
    search_fields = ("user_id", "timezone")
    readonly_fields = ("created_at", "updated_at")


@admin.register(Equipment)
class EquipmentAdmin(admin.ModelAdmin[Equipment]):
    list_display = ("name", "slug", "category", "exercise_count")
    list_filter = ("category",)
    search_fields = ("name", "slug")
    ordering = ("category", "name")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Equipment]:
        return super().get_queryset(request).annotate(exercise_count=Count("exercises"))

    @admin.display(description="exercises", ordering="exercise_count")
    def exercise_count(self, obj: Equipment) -> int:
        return int(getattr(obj, "exercise_count", 0))


@admin.register(Location)
class LocationAdmin(admin.ModelAdmin[Location]):
    list_display = ("name", "user_id", "is_current", "equipment_count", "updated_at")
    list_filter = ("is_current",)
    search_fields = ("name", "user_id", "description")
    filter_horizontal = ("equipment",)
    readonly_fields = ("id", "created_at", "updated_at")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Location]:
        return super().get_queryset(request).annotate(equipment_count=Count("equipment"))

    @admin.display(description="equipment", ordering="equipment_count")
    def equipment_count(self, obj: Location) -> int:
        return int(getattr(obj, "equipment_count", 0))


@admin.register(Exercise)
class ExerciseAdmin(admin.ModelAdmin[Exercise]):
    list_display = ("name", "exercise_type", "category", "level", "primary", "equipment_list")
    list_filter = ("exercise_type", "category", "level", "mechanic", "equipment")
    search_fields = ("name", "slug", "aliases", "source_id")
    filter_horizontal = ("equipment",)
    readonly_fields = ("name_key",)
    prepopulated_fields = {"slug": ("name",)}

    def get_queryset(self, request: HttpRequest) -> QuerySet[Exercise]:
        return super().get_queryset(request).prefetch_related("equipment")

    def save_model(self, request: HttpRequest, obj: Exercise, form: Any, change: bool) -> None:
        obj.name_key = exercise_name_key(obj.name)  # find_exercise_by_name looks exercises up by this key
        super().save_model(request, obj, form, change)

    @admin.display(description="primary muscles")
    def primary(self, obj: Exercise) -> str:
        return ", ".join(obj.primary_muscles)

    @admin.display(description="equipment")
    def equipment_list(self, obj: Exercise) -> str:
        return ", ".join(item.slug for item in obj.equipment.all()) or "bodyweight"


@admin.register(CurrentWorkout)
class CurrentWorkoutAdmin(admin.ModelAdmin[CurrentWorkout]):
    list_display = ("user_id", "title", "artifact_id", "session_id", "updated_at")
    search_fields = ("user_id", "artifact_id")
    readonly_fields = ("created_at", "updated_at")

    @admin.display(description="title")
    def title(self, obj: CurrentWorkout) -> str:
        return str((obj.workout or {}).get("title") or "")


@admin.register(Preference)
class PreferenceAdmin(admin.ModelAdmin[Preference]):
    list_display = ("description", "user_id", "preference_type", "category", "expires_at", "delete_after_use")
    list_filter = ("preference_type", "category", "delete_after_use")
    search_fields = ("description", "guidance", "user_id")
    readonly_fields = ("id", "created_at")


class WorkoutLogEntryInline(admin.TabularInline[WorkoutLogEntry, WorkoutLog]):
    model = WorkoutLogEntry
    extra = 0
    fields = (
        "order",
        "exercise_name",
        "exercise_type",
        "target_sets",
        "target_reps",
        "target_load_each",
        "actual_sets",
        "actual_reps",
        "actual_load_each",
        "load_unit",
        "rpe",
        "skipped",
    )


@admin.register(WorkoutLog)
class WorkoutLogAdmin(admin.ModelAdmin[WorkoutLog]):
    list_display = ("title", "user_id", "completed_at", "entry_count", "session_id")
    search_fields = ("title", "user_id", "notes")
    date_hierarchy = "completed_at"
    readonly_fields = ("id", "created_at")
    inlines = (WorkoutLogEntryInline,)

    def get_queryset(self, request: HttpRequest) -> QuerySet[WorkoutLog]:
        return super().get_queryset(request).annotate(entry_count=Count("entries"))

    @admin.display(description="exercises", ordering="entry_count")
    def entry_count(self, obj: WorkoutLog) -> int:
        return int(getattr(obj, "entry_count", 0))


@admin.register(CategoryGoal)
class CategoryGoalAdmin(admin.ModelAdmin[CategoryGoal]):
    list_display = ("category", "user_id", "weight", "description")
    search_fields = ("category", "user_id")


@admin.register(MuscleGoal)
class MuscleGoalAdmin(admin.ModelAdmin[MuscleGoal]):
    list_display = ("muscle", "user_id", "weight")
    list_filter = ("muscle",)
    search_fields = ("muscle", "user_id")


@admin.register(MilestoneGoal)
class MilestoneGoalAdmin(admin.ModelAdmin[MilestoneGoal]):
    list_display = ("title", "user_id", "current_value", "target_value", "unit", "deadline", "status")
    list_filter = ("status",)
    search_fields = ("title", "metric", "user_id")
    readonly_fields = ("id", "created_at", "updated_at", "achieved_at")


@admin.register(WorkoutPlan)
class WorkoutPlanAdmin(admin.ModelAdmin[WorkoutPlan]):
    list_display = ("name", "user_id", "weeks", "start_date", "status", "created_at")
    list_filter = ("status",)
    search_fields = ("name", "goal", "user_id")
    readonly_fields = ("id", "created_at", "updated_at")


@admin.register(ScheduledWorkout)
class ScheduledWorkoutAdmin(admin.ModelAdmin[ScheduledWorkout]):
    list_display = ("title", "user_id", "scheduled_date", "scheduled_time", "status", "preparation", "plan")
    list_filter = ("status", "preparation")
    search_fields = ("title", "notes", "message", "user_id")
    date_hierarchy = "scheduled_date"
    readonly_fields = ("id", "created_at", "updated_at", "message_preview")

    @admin.display(description="Message as the user receives it")
    def message_preview(self, obj: ScheduledWorkout) -> str:
        return format_html(
            '<pre style="white-space: pre-wrap; max-width: 40em">{}</pre><p>{} of 1,600 characters</p>',
            obj.message or "—",
            len(obj.message),
        )
