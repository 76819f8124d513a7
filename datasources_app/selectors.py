"""Reads of the user's fitness data and the exercise catalogue."""

from __future__ import annotations

import uuid
import zoneinfo
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Any
from weakref import WeakKeyDictionary

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import F, Field, Model, Prefetch, Q, QuerySet
from django.utils import timezone

from config.db import PlannedRead, RowReader, Rows, quoted_column, quoted_table, read_together
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
    ScheduledWorkout,
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


# --- The user data XML's sources, in plain SQL ---------------------------------------------------------------
# `build_user_data_xml` runs on every iteration of the agent loop, and the ORM's query building and prefetch
# machinery cost several times the statements themselves. `user_data_sources` reads the same rows through the
# connection's cursor in two statements that both vendors accept, sent together (one round trip) on
# PostgreSQL: names from the models' `_meta` (quoted for the vendor), the parameter adapted with the field's
# `get_db_prep_value` and every value passed through the converters the ORM applies, so what it returns
# equals the ORM's (tests/datasources_app/test_user_data_sql.py).


@dataclass(frozen=True, slots=True)
class EquipmentItem:
    """A piece of equipment at a location, with what the user data XML shows of it."""

    slug: str
    name: str
    category: str


@dataclass(frozen=True)
class UserDataSources:
    """What the `<user_data>` block is made of, as `get_profile`, `get_settings` and `list_locations` give it.

    The locations carry only the fields the block shows (id, name, available_weights_kg, is_current; the others
    are deferred, as with `.only()`), and their equipment as a plain list of `EquipmentItem`s in
    `location.equipment_list`, ordered by category and name: read it through `formatters.location_equipment`.
    """

    profile: UserProfile | None
    settings: UserSettings
    locations: list[Location]
    # The rows these were made of (`plan_user_data_sources` hands this object back when it reads the same rows),
    # and what has been made of it since (`sources.user_data_xml_of` keeps its XML here): not part of equality.
    rows: tuple[Any, ...] = field(default=(), compare=False, repr=False)
    derived: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)


_LOCATION_FIELDS = ("id", "name", "available_weights_kg", "is_current")
_EQUIPMENT_FIELDS = ("slug", "name", "category")


@dataclass
class _UserDataReads:
    settings_and_profile_sql: str
    locations_sql: str
    settings: RowReader[UserSettings]
    profile: RowReader[UserProfile]
    location: RowReader[Location]
    equipment: RowReader[Equipment]


# Per connection object (converters are bound to its backend), made on first use.
_USER_DATA_READS: WeakKeyDictionary[BaseDatabaseWrapper, _UserDataReads] = WeakKeyDictionary()


def _all_fields(model: type[Model]) -> list[str]:
    return [field.name for field in model._meta.concrete_fields]


def _user_data_reads(conn: BaseDatabaseWrapper) -> _UserDataReads:
    def table(model: type[Model]) -> str:
        return quoted_table(conn, model)

    def column(model: type[Model], name: str) -> str:
        return quoted_column(conn, model, name)

    def columns(model: type[Model], alias: str, names: Sequence[str]) -> list[str]:
        return [f"{alias}.{column(model, name)}" for name in names]

    settings, profile = _all_fields(UserSettings), _all_fields(UserProfile)
    # One row: the settings and the profile side by side (NULLs for what the user has not saved).
    settings_and_profile_sql = (
        f"SELECT {', '.join(columns(UserSettings, 's', settings) + columns(UserProfile, 'p', profile))} "
        "FROM (SELECT 1 AS one) u "
        f"LEFT JOIN {table(UserSettings)} s ON s.{column(UserSettings, 'user_id')} = %s "
        f"LEFT JOIN {table(UserProfile)} p ON p.{column(UserProfile, 'user_id')} = %s"
    )
    through = Location.equipment.through
    # One row per (location, equipment), a location without equipment once; list_locations' order.
    locations_sql = (
        f"SELECT {', '.join(columns(Location, 'l', _LOCATION_FIELDS) + columns(Equipment, 'e', _EQUIPMENT_FIELDS))} "
        f"FROM {table(Location)} l "
        f"LEFT JOIN {table(through)} le ON le.{column(through, 'location')} = l.{column(Location, 'id')} "
        f"LEFT JOIN {table(Equipment)} e ON e.{column(Equipment, 'id')} = le.{column(through, 'equipment')} "
        f"WHERE l.{column(Location, 'user_id')} = %s "
        f"ORDER BY l.{column(Location, 'is_current')} DESC, l.{column(Location, 'name')}, "
        f"l.{column(Location, 'id')}, e.{column(Equipment, 'category')}, e.{column(Equipment, 'name')}, "
        f"e.{column(Equipment, 'id')}"
    )
    return _UserDataReads(
        settings_and_profile_sql=settings_and_profile_sql,
        locations_sql=locations_sql,
        settings=RowReader(conn, UserSettings, settings),
        profile=RowReader(conn, UserProfile, profile),
        location=RowReader(conn, Location, _LOCATION_FIELDS),
        equipment=RowReader(conn, Equipment, _EQUIPMENT_FIELDS),
    )


_PROFILE_USER_ID = UserProfile._meta.get_field("user_id")
assert isinstance(_PROFILE_USER_ID, Field)


def user_data_sources(*, user_id: uuid.UUID) -> UserDataSources:
    """The user's profile, settings (unsaved defaults when none) and all locations with their equipment, read
    fresh from the database in two queries (one round trip on PostgreSQL); equal to `get_profile`,
    `get_settings` and `list_locations`."""
    return read_together(plan_user_data_sources(user_id=user_id))[0]


def plan_user_data_sources(
    *, user_id: uuid.UUID, previous: UserDataSources | None = None
) -> PlannedRead[UserDataSources]:
    """`user_data_sources` as a read to send with others (`config.db.read_together`).

    `previous` (an earlier result for the same user): when the rows read are the same as its rows, that object
    is the result, as read now, without making the instances again (nor, through `derived`, what was made of
    them). The data is still read fresh every time.
    """
    conn = connections[DEFAULT_DB_ALIAS]
    reads = _USER_DATA_READS.get(conn)
    if reads is None:
        reads = _USER_DATA_READS[conn] = _user_data_reads(conn)
    user = _PROFILE_USER_ID.get_db_prep_value(user_id, conn)

    def finish(rowsets: list[Rows]) -> UserDataSources:
        read = (tuple(rowsets[0]), tuple(rowsets[1]))
        if previous is not None and previous.rows == read:
            return previous
        (first,), rows = rowsets  # the first query always has its one row
        width = reads.settings.width
        settings = reads.settings.instance(first[:width]) or UserSettings(user_id=user_id)
        profile = reads.profile.instance(first[width:])
        width = reads.location.width
        locations: list[Location] = []
        equipment: list[EquipmentItem] = []
        previous_key = None
        for row in rows:
            if row[0] != previous_key:
                location = reads.location.instance(row[:width])
                assert location is not None  # the locations are the query's driving table
                location.equipment_list = equipment = []  # type: ignore[attr-defined]
                locations.append(location)
                previous_key = row[0]
            if row[width] is not None:  # a slug: the location has equipment
                equipment.append(EquipmentItem(*reads.equipment.convert(row[width:])))
        return UserDataSources(profile=profile, settings=settings, locations=locations, rows=read)

    return PlannedRead(
        statements=((reads.settings_and_profile_sql, [user, user]), (reads.locations_sql, [user])),
        finish=finish,
    )


def current_location(*, user_id: uuid.UUID) -> Location | None:
    return _locations(user_id).filter(is_current=True).first()


def available_equipment_slugs(*, user_id: uuid.UUID) -> set[str]:
    """Equipment at the user's current location; always includes "bodyweight"."""
    slugs = set(
        Equipment.objects.filter(locations__user_id=user_id, locations__is_current=True).values_list(
            "slug", flat=True
        )
    )
    return slugs | {BODYWEIGHT}


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


def list_workout_plans(*, user_id: uuid.UUID, status: str | None = None) -> list[WorkoutPlan]:
    """The user's workout plans (optionally of one status), newest first."""
    queryset = WorkoutPlan.objects.filter(user_id=user_id)
    if status is not None:
        queryset = queryset.filter(status=status)
    return list(queryset.order_by("-created_at", "-id"))
