"""Reads of the user's fitness data and the exercise catalogue."""

from __future__ import annotations

import uuid
import zoneinfo
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Any

from django.db.models import Count, F, Max, Prefetch, Q, QuerySet, Subquery
from django.db.models.expressions import BaseExpression
from django.utils import timezone

from datasources_app.catalog import BODYWEIGHT, exercise_name_key
from datasources_app.models import (
    CategoryGoal,
    CurrentWorkout,
    Equipment,
    Exercise,
    Location,
    MilestoneGoal,
    MuscleGoal,
    Preference,
    Preparation,
    ScheduledWorkout,
    ScheduleStatus,
    UserProfile,
    UserSettings,
    WorkoutLog,
    WorkoutLogEntry,
    WorkoutPlan,
)

DEFAULT_SEARCH_LIMIT = 20


def get_profile(*, user_id: uuid.UUID) -> UserProfile | None:
    return UserProfile.objects.filter(user_id=user_id).first()


def display_names(*, user_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, str]:
    """The profile's display name of each of these users who has a non-empty one, in one query."""
    rows = UserProfile.objects.filter(user_id__in=list(user_ids)).exclude(display_name="")
    return dict(rows.values_list("user_id", "display_name"))


def get_settings(*, user_id: uuid.UUID) -> UserSettings:
    """The user's settings, or unsaved defaults (kg, km, UTC) when they have none."""
    return UserSettings.objects.filter(user_id=user_id).first() or UserSettings(user_id=user_id)


def _locations(user_id: uuid.UUID) -> QuerySet[Location]:
    equipment = Prefetch("equipment", queryset=Equipment.objects.order_by("category", "name"))
    return (
        Location.objects.filter(user_id=user_id).prefetch_related(equipment).order_by("-is_current", "name")
    )


def list_locations(*, user_id: uuid.UUID) -> list[Location]:
    """All the user's locations with their equipment prefetched, the current one first."""
    return list(_locations(user_id))


@dataclass(frozen=True)
class UserDataSources:
    """What the `<user_data>` block is made of: `get_profile`, `get_settings` and `list_locations`."""

    profile: UserProfile | None
    settings: UserSettings
    locations: list[Location]


def user_data_sources(*, user_id: uuid.UUID) -> UserDataSources:
    """The user's profile, settings (unsaved defaults when none) and all locations with their equipment, read
    fresh from the database (four queries)."""
    return UserDataSources(
        profile=get_profile(user_id=user_id),
        settings=get_settings(user_id=user_id),
        locations=list_locations(user_id=user_id),
    )


def user_data_version(*, user_id: Any) -> dict[str, BaseExpression]:
    """Expressions whose values change whenever what `user_data_sources` reads changes, for one query to
    evaluate by `user_id` (a value, or `OuterRef("user_id")` from a row that has it): the profile's and the
    settings' `updated_at`, the number of locations and their latest `updated_at`, and the number and the
    highest id of the location-equipment links (a link replaced gets a new id).

    A reader that keeps the sources (the context builder, for the turn) reads them again only when these
    values differ: the user data stays as fresh as reading it every time, for one round trip that can ride
    on a query made anyway. It relies on every change of these rows going through `save()` (auto_now) or a
    write that sets `updated_at`, as `datasources_app.services` does; the catalogue's equipment names are system
    data and not covered."""
    locations = Location.objects.filter(user_id=user_id).order_by().values("user_id")
    through: Any = Location.equipment.through  # the auto-created link model
    links = through.objects.filter(location__user_id=user_id).order_by().values("location__user_id")
    return {
        "profile_updated": Subquery(UserProfile.objects.filter(user_id=user_id).values("updated_at")[:1]),
        "settings_updated": Subquery(UserSettings.objects.filter(user_id=user_id).values("updated_at")[:1]),
        "locations": Subquery(locations.annotate(count=Count("pk")).values("count")),
        "locations_updated": Subquery(locations.annotate(latest=Max("updated_at")).values("latest")),
        "equipment_links": Subquery(links.annotate(count=Count("pk")).values("count")),
        "equipment_latest_link": Subquery(links.annotate(latest=Max("pk")).values("latest")),
    }


def current_location(*, user_id: uuid.UUID) -> Location | None:
    return _locations(user_id).filter(is_current=True).first()


def available_equipment_slugs(*, user_id: uuid.UUID, location_id: uuid.UUID | None = None) -> set[str]:
    """Equipment at the user's current location (or at their location `location_id`); always includes
    "bodyweight"."""
    where = Q(locations__id=location_id) if location_id is not None else Q(locations__is_current=True)
    slugs = set(Equipment.objects.filter(where, locations__user_id=user_id).values_list("slug", flat=True))
    return slugs | {BODYWEIGHT}


def get_location(*, user_id: uuid.UUID, location_id: uuid.UUID) -> Location | None:
    """One of the user's locations with its equipment; None when it is not theirs."""
    return _locations(user_id).filter(id=location_id).first()


def _mentions_muscle(field: str, muscle: str) -> Q:
    # JSON-containment lookups do not exist on SQLite; a quoted substring match on the stored list works on
    # both backends and cannot confuse "Back" with "Lower Back".
    return Q(**{f"{field}__icontains": f'"{muscle}"'})


def search_exercises(
    *,
    muscles: Iterable[str] | None = None,
    equipment: Iterable[str] | None = None,
    exclude_slugs: Iterable[str] | None = None,
    exercise_type: str | None = None,
    category: str | None = None,
    include_secondary: bool = False,
    limit: int = DEFAULT_SEARCH_LIMIT,
) -> list[Exercise]:
    """Catalogue exercises matching every given filter, by name, with equipment prefetched.

    muscles:   any of them is a primary muscle (or a secondary one too, with include_secondary).
    equipment: the slugs available; keeps only exercises doable with them (bodyweight ones always are).
    """
    queryset = Exercise.objects.prefetch_related("equipment").order_by("name")
    if muscles is not None:
        fields = ["primary_muscles", "secondary_muscles"] if include_secondary else ["primary_muscles"]
        condition = Q()
        for muscle in muscles:
            for field in fields:
                condition |= _mentions_muscle(field, muscle)
        queryset = queryset.filter(condition) if condition else queryset.none()
    if equipment is not None:
        unavailable = Equipment.objects.exclude(slug__in=set(equipment))
        queryset = queryset.exclude(equipment__in=unavailable)
    if exclude_slugs:
        queryset = queryset.exclude(slug__in=set(exclude_slugs))
    if exercise_type is not None:
        queryset = queryset.filter(exercise_type=exercise_type)
    if category is not None:
        queryset = queryset.filter(category=category)
    return list(queryset[:limit])


def find_exercise_by_name(*, name: str) -> Exercise | None:
    """The catalogue exercise called `name` or known by it as an alias.

    Case, spacing, hyphens, punctuation and plurals do not matter ("push ups" finds "Push-Up").
    """
    key = exercise_name_key(name)
    if not key:
        return None
    exercises = Exercise.objects.prefetch_related("equipment")
    found = exercises.filter(name_key=key).first()
    if found is not None:
        return found
    for pk, aliases in Exercise.objects.exclude(aliases=[]).values_list("pk", "aliases"):
        if any(exercise_name_key(alias) == key for alias in aliases):
            return exercises.get(pk=pk)
    return None


def find_exercises_by_name(*, names: Iterable[str]) -> dict[str, Exercise | None]:
    """`find_exercise_by_name` of each name, with one query (and one for equipment) for every name that is
    a catalogue name; only a name known just as an alias (or not at all) is looked up on its own."""
    keys = {name: exercise_name_key(name) for name in names}
    by_key: dict[str, Exercise] = {}
    wanted = {key for key in keys.values() if key}
    if wanted:
        # Ordered as find_exercise_by_name's first() is: the first by name of those sharing a key.
        for exercise in Exercise.objects.prefetch_related("equipment").filter(name_key__in=wanted):
            by_key.setdefault(exercise.name_key, exercise)
    return {
        name: by_key[key] if key in by_key else find_exercise_by_name(name=name) for name, key in keys.items()
    }


def get_exercise(*, slug: str) -> Exercise | None:
    return Exercise.objects.prefetch_related("equipment").filter(slug=slug).first()


def list_equipment() -> list[Equipment]:
    return list(Equipment.objects.order_by("category", "name"))


# --- Current workout and preferences ------------------------------------------------------------------------
def get_current_workout(*, user_id: uuid.UUID) -> CurrentWorkout | None:
    return CurrentWorkout.objects.filter(user_id=user_id).first()


def active_preferences(*, user_id: uuid.UUID, now: datetime | None = None) -> list[Preference]:
    """The user's preferences that have not expired at `now` (default: the current time), newest first."""
    moment = now or timezone.now()
    return list(
        Preference.objects.filter(user_id=user_id)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=moment))
        .order_by("-created_at", "-id")
    )


# --- Workout logs -------------------------------------------------------------------------------------------
def workout_history(
    *, user_id: uuid.UUID, limit: int = 10, days_back: int | None = None, now: datetime | None = None
) -> list[WorkoutLog]:
    """The user's most recent logged workouts with their entries prefetched (in order), newest first.

    `days_back` keeps only workouts completed in that many days before `now`.
    """
    queryset = WorkoutLog.objects.filter(user_id=user_id)
    if days_back is not None:
        queryset = queryset.filter(completed_at__gte=(now or timezone.now()) - timedelta(days=days_back))
    entries = Prefetch("entries", queryset=WorkoutLogEntry.objects.order_by("order", "completed_at"))
    return list(queryset.prefetch_related(entries).order_by("-completed_at", "-id")[:limit])


def workout_log_of(*, user_id: uuid.UUID, workout: Mapping[str, Any]) -> WorkoutLog | None:
    """The log of a current-workout record: sets logged during that workout go to it, and "done" completes it.

    Named by the record's `log_id` (set when the first set of the workout was logged) or, after the record
    was re-versioned by a swap or an adjustment, found through the log entries its completed exercises
    point at. None when nothing of this workout is logged yet (or its log was undone away).
    """
    logs = WorkoutLog.objects.filter(user_id=user_id)
    named = _uuid_or_none(str(workout.get("log_id") or ""))
    found = logs.filter(pk=named).first() if named is not None else None
    if found is not None:
        return found
    payload = workout["payload"] if isinstance(workout.get("payload"), Mapping) else workout
    entry_ids = [
        _uuid_or_none(str(exercise.get("log_entry_id") or ""))
        for exercise in payload.get("exercises") or ()
        if isinstance(exercise, Mapping)
    ]
    valid = [entry_id for entry_id in entry_ids if entry_id is not None]
    if not valid:
        return None
    return logs.filter(entries__id__in=valid).order_by("-completed_at").first()


def log_of_made_workout(*, user_id: uuid.UUID, artifact_ids: Iterable[str]) -> WorkoutLog | None:
    """The user's latest log of a workout made earlier, by the artifact ids of its versions (a log keeps the id of
    the version it was started or completed on), or None."""
    ids = [artifact_id for artifact_id in artifact_ids if artifact_id]
    if not ids:
        return None
    return WorkoutLog.objects.filter(user_id=user_id, artifact_id__in=ids).order_by("-completed_at").first()


def scheduled_day_of(*, user_id: uuid.UUID, artifact_id: str) -> date | None:
    """The nearest day, today or later, that the workout made as `artifact_id` is on the user's calendar still to
    do (`schedule_workout` by artifact_id keeps the id on the day's workout); None when on none."""
    if not artifact_id:
        return None
    found = (
        ScheduledWorkout.objects.filter(
            user_id=user_id,
            status=ScheduleStatus.SCHEDULED,
            scheduled_date__gte=local_today(user_id=user_id),
            workout__artifact_id=artifact_id,
        )
        .order_by("scheduled_date")
        .values_list("scheduled_date", flat=True)
        .first()
    )
    return found


def logged_entries_of(*, user_id: uuid.UUID, workout: Mapping[str, Any]) -> dict[str, WorkoutLogEntry]:
    """The user's log entries the workout's ticked-off exercises point at (their `log_entry_id`), by that id:
    what was done of them. An id of an entry undone since, or of no entry of this user's, is left out."""
    exercises = workout.get("exercises")
    entry_ids = [
        _uuid_or_none(str(exercise.get("log_entry_id") or ""))
        for exercise in (exercises if isinstance(exercises, list) else ())
        if isinstance(exercise, Mapping)
    ]
    valid = [entry_id for entry_id in entry_ids if entry_id is not None]
    if not valid:
        return {}
    return {
        str(entry.id): entry for entry in WorkoutLogEntry.objects.filter(log__user_id=user_id, id__in=valid)
    }


def _uuid_or_none(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


def log_entries_between(
    *,
    user_id: uuid.UUID,
    start: datetime | None = None,
    end: datetime | None = None,
    include_skipped: bool = False,
) -> list[WorkoutLogEntry]:
    """The user's log entries completed in [start, end] (open-ended when None), oldest first, log selected."""
    queryset = WorkoutLogEntry.objects.filter(log__user_id=user_id).select_related("log")
    if start is not None:
        queryset = queryset.filter(completed_at__gte=start)
    if end is not None:
        queryset = queryset.filter(completed_at__lte=end)
    if not include_skipped:
        queryset = queryset.filter(skipped=False)
    return list(queryset.order_by("completed_at", "order"))


# What a volume, a muscle or goal share and a recency read of a log entry (`datasources_app.distribution`).
_VOLUME_FIELDS = (
    "exercise_type",
    "section",
    "muscles",
    "goals",
    "target_sets",
    "target_reps",
    "target_duration_min",
    "target_rounds",
    "actual_sets",
    "actual_reps",
    "actual_hold_sec",
    "actual_duration_min",
    "actual_rounds",
    "skipped",
    "completed_at",
)


def volume_entries_between(*, user_id: uuid.UUID, start: datetime, end: datetime) -> list[WorkoutLogEntry]:
    """`log_entries_between` (not skipped, oldest first) with only the fields `datasources_app.distribution`
    reads: its shares and recency are read for every workout drafted and every initializer that loads the goals,
    and whole entries (nine JSON fields each, and their log) were most of that read's time."""
    return list(
        WorkoutLogEntry.objects.filter(
            log__user_id=user_id, completed_at__gte=start, completed_at__lte=end, skipped=False
        )
        .order_by("completed_at", "order")
        .only(*_VOLUME_FIELDS)
    )


def logged_load_rows(*, user_id: uuid.UUID, start: datetime) -> list[Mapping[str, Any]]:
    """The entries of `log_entries_between(user_id=..., start=start)` (not skipped, oldest first) that hold a
    load, as rows of just what a load progression reads: exercise_slug, exercise_name, actual/target load_each
    and reps, load_unit, rpe. A draft reads months of history; whole entries (eight JSON fields each, and
    their log) were most of its time."""
    return list(
        WorkoutLogEntry.objects.filter(log__user_id=user_id, completed_at__gte=start, skipped=False)
        .exclude(actual_load_each=[], target_load_each=[])  # bodyweight, cardio: no load to progress
        .order_by("completed_at", "order")
        .values(
            "exercise_slug",
            "exercise_name",
            "actual_load_each",
            "target_load_each",
            "actual_reps",
            "target_reps",
            "load_unit",
            "rpe",
        )
    )


# --- Time zone ------------------------------------------------------------------------------------------------
def user_timezone(*, user_id: uuid.UUID) -> tzinfo:
    """The user's time zone from their settings; UTC when unset or unknown."""
    return timezone_named(
        UserSettings.objects.filter(user_id=user_id).values_list("timezone", flat=True).first()
    )


def timezone_named(name: str | None) -> tzinfo:
    """The time zone of that IANA name; UTC when it is empty or unknown."""
    try:
        return zoneinfo.ZoneInfo(name or "UTC")
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return UTC


def local_today(*, user_id: uuid.UUID, now: datetime | None = None) -> date:
    """Today's date where the user is."""
    return today_in(user_timezone(user_id=user_id), now=now)


def today_in(tz: tzinfo, *, now: datetime | None = None) -> date:
    """Today's date in that time zone."""
    return (now or timezone.now()).astimezone(tz).date()


# --- Goals ------------------------------------------------------------------------------------------------------
def list_category_goals(*, user_id: uuid.UUID) -> list[CategoryGoal]:
    """The user's category goals, heaviest first."""
    return list(CategoryGoal.objects.filter(user_id=user_id).order_by("-weight", "category"))


def list_muscle_goals(*, user_id: uuid.UUID) -> list[MuscleGoal]:
    """The user's muscle goals, heaviest first."""
    return list(MuscleGoal.objects.filter(user_id=user_id).order_by("-weight", "muscle"))


def list_milestone_goals(*, user_id: uuid.UUID, status: str | None = None) -> list[MilestoneGoal]:
    """The user's milestone goals (optionally of one status): soonest deadline first, undated last."""
    queryset = MilestoneGoal.objects.filter(user_id=user_id)
    if status is not None:
        queryset = queryset.filter(status=status)
    return list(queryset.order_by(F("deadline").asc(nulls_last=True), "created_at"))


def goal_text(*, user_id: uuid.UUID) -> str:
    """The user's goals in words: active milestones first, then category goals by weight."""
    milestones = [goal.title for goal in list_milestone_goals(user_id=user_id, status="active")]
    categories = [goal.category for goal in list_category_goals(user_id=user_id)]
    return "; ".join([*milestones, *categories]) or "general fitness"


# --- Schedule and plans ---------------------------------------------------------------------------------------
def scheduled_workouts(
    *,
    user_id: uuid.UUID,
    days_ahead: int = 14,
    start: date | None = None,
    statuses: Iterable[str] | None = None,
) -> list[ScheduledWorkout]:
    """The user's calendar from `start` (default: their today) for `days_ahead` days, in date order."""
    first = start or local_today(user_id=user_id)
    queryset = ScheduledWorkout.objects.filter(
        user_id=user_id, scheduled_date__gte=first, scheduled_date__lte=first + timedelta(days=days_ahead)
    )
    if statuses is not None:
        queryset = queryset.filter(status__in=list(statuses))
    return list(
        queryset.select_related("plan").order_by("scheduled_date", F("scheduled_time").asc(nulls_last=True))
    )


def plan_week_workouts(
    *, user_id: uuid.UUID, plan_id: uuid.UUID, first: date, last: date
) -> list[ScheduledWorkout]:
    """The plan's calendar days from `first` to `last` (any status), in date order."""
    return list(
        ScheduledWorkout.objects.filter(
            user_id=user_id, plan_id=plan_id, scheduled_date__gte=first, scheduled_date__lte=last
        ).order_by("scheduled_date", "created_at")
    )


def week_being_prepared(
    *, user_id: uuid.UUID, plan_id: uuid.UUID, first: date, last: date, within: timedelta
) -> datetime | None:
    """When the plan's days from `first` to `last` were last asked to be prepared, if one is still pending
    and was asked within `within`; else None."""
    latest: datetime | None = (
        ScheduledWorkout.objects.filter(
            user_id=user_id,
            plan_id=plan_id,
            scheduled_date__gte=first,
            scheduled_date__lte=last,
            preparation=Preparation.PENDING,
            updated_at__gte=timezone.now() - within,
        )
        .order_by("-updated_at")
        .values_list("updated_at", flat=True)
        .first()
    )
    return latest


def preparation_failed_since(*, user_id: uuid.UUID, since: datetime | None, today: date) -> bool:
    """Whether a day still to come (from `today`) failed its preparation by the week chain after `since` (at any
    time when None): what the user has not been told yet when the schedule was last read before it."""
    failed = ScheduledWorkout.objects.filter(
        user_id=user_id,
        status=ScheduleStatus.SCHEDULED,
        preparation=Preparation.FAILED,
        scheduled_date__gte=today,
    )
    if since is not None:
        failed = failed.filter(updated_at__gt=since)
    return failed.exists()


def get_workout_plan(*, user_id: uuid.UUID, plan_id: uuid.UUID) -> WorkoutPlan | None:
    """One of the user's plans; None when it is not theirs."""
    return WorkoutPlan.objects.filter(id=plan_id, user_id=user_id).first()


def list_workout_plans(*, user_id: uuid.UUID, status: str | None = None) -> list[WorkoutPlan]:
    """The user's workout plans (optionally of one status), newest first."""
    queryset = WorkoutPlan.objects.filter(user_id=user_id)
    if status is not None:
        queryset = queryset.filter(status=status)
    return list(queryset.order_by("-created_at", "-id"))
