"""Writes for the user's fitness data and the exercise catalogue."""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.utils import timezone

from datasources_app import selectors
from datasources_app.catalog import (
    BODYWEIGHT,
    EQUIPMENT,
    EQUIPMENT_SLUGS,
    EXERCISE_TYPES,
    MUSCLES,
    canonical_muscle,
    exercise_name_key,
)
from datasources_app.demo import (
    DEMO_CATEGORY_DESCRIPTIONS,
    DEMO_CATEGORY_GOALS,
    DEMO_CURRENT_LOCATION,
    DEMO_LOCATIONS,
    DEMO_MUSCLE_GOALS,
    DEMO_PREFERENCE,
    DEMO_PROFILE,
    DEMO_SETTINGS,
    DEMO_USER_ID,
)
from datasources_app.demo_history import HISTORY_MARKER, demo_workouts
from datasources_app.models import (
    CategoryGoal,
    CurrentWorkout,
    DistanceUnit,
    Equipment,
    Exercise,
    Location,
    MilestoneGoal,
    MilestoneStatus,
    MuscleGoal,
    PlanStatus,
    Preference,
    PreferenceType,
    Preparation,
    ScheduledWorkout,
    ScheduleStatus,
    UserProfile,
    UserSettings,
    WeightUnit,
    WorkoutLog,
    WorkoutLogEntry,
    WorkoutPlan,
    WorkoutSection,
)

DEFAULT_CATALOG_PATH = Path(settings.BASE_DIR) / "fixtures" / "exercises.json"

# Exercise fields copied from the catalogue file as they are (`equipment` is the M2M, handled apart).
_EXERCISE_FIELDS = (
    "name",
    "aliases",
    "exercise_type",
    "category",
    "level",
    "mechanic",
    "force",
    "primary_muscles",
    "secondary_muscles",
    "muscle_shares",
    "movement_pattern",
    "loaded_joints",
    "instructions",
    "source_id",
)


class UnknownEquipmentError(ValueError):
    """Raised when a slug names no known equipment."""


def read_exercise_catalog(path: Path | None = None) -> list[dict[str, Any]]:
    """The exercise dicts of the catalogue file (fixtures/exercises.json by default)."""
    rows: list[dict[str, Any]] = json.loads((path or DEFAULT_CATALOG_PATH).read_text(encoding="utf-8"))
    return rows


def sync_exercise_catalog(
    *,
    equipment_model: type[models.Model],
    exercise_model: type[models.Model],
    rows: Sequence[Mapping[str, Any]],
) -> int:
    """Upsert the equipment list and `rows` with a handful of bulk queries; returns len(rows).

    Takes the model classes so the data migration can pass its historical models. Only fields the given
    models have are written, so an old migration keeps working when the catalogue file gains fields.
    Exercises missing from `rows` are left alone: workouts and logs may still name them.
    """
    equipment_fields = {field.name for field in equipment_model._meta.get_fields()}
    exercise_fields = {field.name for field in exercise_model._meta.get_fields()}
    manager: Any = equipment_model._default_manager
    manager.bulk_create(
        [equipment_model(slug=slug, name=name, category=category) for slug, name, category in EQUIPMENT],
        update_conflicts=True,
        unique_fields=["slug"],
        update_fields=[name for name in ("name", "category") if name in equipment_fields],
    )
    equipment_ids: dict[str, int] = dict(manager.values_list("slug", "pk"))

    copied = [name for name in _EXERCISE_FIELDS if name in exercise_fields]
    with_key = "name_key" in exercise_fields
    objects = []
    for row in rows:
        values = {name: row[name] for name in copied if name in row}
        if with_key:
            values["name_key"] = exercise_name_key(row["name"])
        objects.append(exercise_model(slug=row["slug"], **values))
    exercises: Any = exercise_model._default_manager
    exercises.bulk_create(
        objects,
        update_conflicts=True,
        unique_fields=["slug"],
        update_fields=[*copied, *(["name_key"] if with_key else [])],
    )
    exercise_ids: dict[str, int] = dict(
        exercises.filter(slug__in=[row["slug"] for row in rows]).values_list("slug", "pk")
    )

    through: Any = exercise_model._meta.get_field("equipment").remote_field.through  # type: ignore[union-attr]
    wanted: set[tuple[int, int]] = set()
    for row in rows:
        for slug in row.get("equipment", ()):
            if slug not in equipment_ids:
                raise UnknownEquipmentError(f"exercise {row['slug']!r} needs unknown equipment {slug!r}")
            wanted.add((exercise_ids[row["slug"]], equipment_ids[slug]))
    links = through._default_manager.filter(exercise_id__in=exercise_ids.values())
    existing: dict[tuple[int, int], int] = {
        (exercise_id, equipment_id): pk
        for pk, exercise_id, equipment_id in links.values_list("pk", "exercise_id", "equipment_id")
    }
    stale = [pk for pair, pk in existing.items() if pair not in wanted]
    if stale:
        through._default_manager.filter(pk__in=stale).delete()
    through._default_manager.bulk_create(
        [through(exercise_id=e, equipment_id=q) for e, q in sorted(wanted - existing.keys())]
    )
    return len(rows)


def load_exercise_catalog(path: Path | None = None) -> int:
    """Idempotently upsert the equipment list and the exercise catalogue; returns the number of exercises."""
    rows = read_exercise_catalog(path)
    with transaction.atomic():
        return sync_exercise_catalog(equipment_model=Equipment, exercise_model=Exercise, rows=rows)


# --- Profile and settings -----------------------------------------------------------------------------------
def upsert_profile(*, user_id: uuid.UUID, **fields: Any) -> UserProfile:
    """Create the user's profile or update the given fields of it."""
    profile, _ = UserProfile.objects.update_or_create(user_id=user_id, defaults=fields)
    return profile


def upsert_settings(*, user_id: uuid.UUID, **fields: Any) -> UserSettings:
    """Create the user's settings or update the given fields of them."""
    user_settings, _ = UserSettings.objects.update_or_create(user_id=user_id, defaults=fields)
    return user_settings


# --- Locations ------------------------------------------------------------------------------------------------
def _equipment_for(slugs: Iterable[str]) -> list[Equipment]:
    wanted = set(slugs)
    found = list(Equipment.objects.filter(slug__in=wanted))
    missing = wanted - {item.slug for item in found}
    if missing:
        raise UnknownEquipmentError(f"unknown equipment: {', '.join(sorted(missing))}")
    return found


def create_location(
    *,
    user_id: uuid.UUID,
    name: str,
    equipment_slugs: Iterable[str] = (),
    description: str = "",
    available_weights_kg: Mapping[str, list[float]] | None = None,
    make_current: bool = False,
) -> Location:
    """Create a location with its equipment; `make_current` also makes it the user's only current one."""
    equipment = _equipment_for(equipment_slugs)
    with transaction.atomic():
        location = Location.objects.create(
            user_id=user_id,
            name=name,
            description=description,
            available_weights_kg=dict(available_weights_kg or {}),
        )
        location.equipment.set(equipment)
        if make_current:
            location = set_current_location(user_id=user_id, location_id=location.id)
    return location


def set_location_equipment(*, location: Location, equipment_slugs: Iterable[str]) -> Location:
    """Replace the equipment available at `location`."""
    location.equipment.set(_equipment_for(equipment_slugs))
    return location


def set_current_location(*, user_id: uuid.UUID, location_id: uuid.UUID) -> Location:
    """Make one of the user's locations current and clear the flag on the others (docs/contracts.md §11.4 (data and location tools)).

    Raises Location.DoesNotExist when the location is not the user's.
    """
    with transaction.atomic():
        location = Location.objects.select_for_update().get(id=location_id, user_id=user_id)
        # Clear first: the partial unique constraint allows only one current row per user at any moment.
        Location.objects.filter(user_id=user_id, is_current=True).exclude(id=location.id).update(
            is_current=False, updated_at=timezone.now()
        )
        if not location.is_current:
            location.is_current = True
            location.save(update_fields=["is_current", "updated_at"])
    return location


# --- Demo user --------------------------------------------------------------------------------------------------
def seed_demo_user(
    *, reset: bool = False, history_days: int = 0, user_id: uuid.UUID = DEMO_USER_ID
) -> list[str]:
    """Give the demo user a profile, settings, two locations (Home current, Gym), goals, a preference and,
    with `history_days`, logged workouts for that many past days; returns what it did.

    Idempotent: what exists is left as it is (the user may have changed it through the agent), unless
    `reset` puts the demo data back. Generated history is only added for days that do not have it yet.
    Another `user_id` gets the same data (the eval command's throw-away users).
    """
    done: list[str] = []
    with transaction.atomic():
        if not UserProfile.objects.filter(user_id=user_id).exists() or reset:
            upsert_profile(user_id=user_id, **DEMO_PROFILE)
            done.append("profile: reset" if reset else "profile: created")
        else:
            done.append("profile: exists, unchanged")
        if not UserSettings.objects.filter(user_id=user_id).exists() or reset:
            upsert_settings(user_id=user_id, **DEMO_SETTINGS)
            done.append("settings: reset" if reset else "settings: created")
        else:
            done.append("settings: exists, unchanged")
        for demo in DEMO_LOCATIONS:
            wanted = demo.equipment_slugs if demo.equipment_slugs is not None else EQUIPMENT_SLUGS
            slugs = [slug for slug in wanted if slug != BODYWEIGHT]
            location = Location.objects.filter(user_id=user_id, name__iexact=demo.name).first()
            if location is None:
                create_location(
                    user_id=user_id,
                    name=demo.name,
                    description=demo.description,
                    equipment_slugs=slugs,
                    available_weights_kg=demo.available_weights_kg,
                )
                done.append(f"location {demo.name}: created with {len(slugs)} pieces of equipment")
            elif reset:
                location.description = demo.description
                location.available_weights_kg = demo.available_weights_kg
                location.save(update_fields=["description", "available_weights_kg", "updated_at"])
                set_location_equipment(location=location, equipment_slugs=slugs)
                done.append(f"location {demo.name}: reset")
            else:
                done.append(f"location {demo.name}: exists, unchanged")
        has_current = Location.objects.filter(user_id=user_id, is_current=True).exists()
        if reset or not has_current:
            home = Location.objects.get(user_id=user_id, name__iexact=DEMO_CURRENT_LOCATION)
            if not home.is_current:
                set_current_location(user_id=user_id, location_id=home.id)
                done.append(f"current location: {home.name}")
        done += _seed_demo_goals_and_preferences(user_id=user_id, reset=reset)
        if history_days or reset:
            done.append(_seed_demo_history(user_id=user_id, days=history_days, reset=reset))
    return done


def delete_user_data(*, user_id: uuid.UUID) -> int:
    """Delete every row of the user's fitness data (profile to plans); returns how many rows went.

    For throw-away users (the eval command); the catalogue and other users are untouched."""
    deleted = 0
    with transaction.atomic():
        for model in (
            ScheduledWorkout,
            WorkoutPlan,
            WorkoutLog,
            CurrentWorkout,
            Preference,
            CategoryGoal,
            MuscleGoal,
            MilestoneGoal,
            Location,
            UserSettings,
            UserProfile,
        ):
            deleted += model.objects.filter(user_id=user_id).delete()[0]
    return deleted


def _seed_demo_goals_and_preferences(*, user_id: uuid.UUID, reset: bool) -> list[str]:
    done = []
    if reset or not CategoryGoal.objects.filter(user_id=user_id).exists():
        set_category_goals(
            user_id=user_id, goals=DEMO_CATEGORY_GOALS, descriptions=DEMO_CATEGORY_DESCRIPTIONS
        )
        done.append(f"category goals: {'reset' if reset else 'created'}")
    else:
        done.append("category goals: exist, unchanged")
    if reset or not MuscleGoal.objects.filter(user_id=user_id).exists():
        set_muscle_goals(user_id=user_id, goals=DEMO_MUSCLE_GOALS)
        done.append(f"muscle goals: {'reset' if reset else 'created'}")
    else:
        done.append("muscle goals: exist, unchanged")
    existing = Preference.objects.filter(user_id=user_id, description=DEMO_PREFERENCE["description"])
    if reset:
        existing.delete()
    if reset or not existing.exists():
        create_preference(user_id=user_id, **DEMO_PREFERENCE)
        done.append(f"preference {DEMO_PREFERENCE['description']!r}: {'reset' if reset else 'created'}")
    else:
        done.append(f"preference {DEMO_PREFERENCE['description']!r}: exists, unchanged")
    return done


def _seed_demo_history(*, user_id: uuid.UUID, days: int, reset: bool) -> str:
    """Logged workouts for the `days` days before today, skipping days that already have generated ones."""
    generated = WorkoutLog.objects.filter(user_id=user_id, artifact_id=HISTORY_MARKER)
    removed = generated.delete()[0] if reset else 0
    tz = selectors.user_timezone(user_id=user_id)
    seeded_days = {
        moment.astimezone(tz).date() for moment in generated.values_list("completed_at", flat=True)
    }
    workouts = [
        workout
        for workout in demo_workouts(days=days, today=selectors.local_today(user_id=user_id), tz=tz)
        if workout.day not in seeded_days
    ]
    for workout in workouts:
        record_workout_log(
            user_id=user_id,
            entries=workout.entries,
            title=workout.title,
            artifact_id=HISTORY_MARKER,
            started_at=workout.started_at,
            completed_at=workout.completed_at,
        )
    removed_text = f", {removed} old rows removed" if removed else ""
    return f"history: {len(workouts)} workouts added over {days} days{removed_text}"


# --- Current workout --------------------------------------------------------------------------------------------
def save_current_workout(
    *,
    user_id: uuid.UUID,
    workout: dict[str, Any],
    artifact_id: str,
    session_id: uuid.UUID | None = None,
) -> CurrentWorkout:
    """Make `workout` (already validated) the user's current workout, replacing any previous one."""
    current, _ = CurrentWorkout.objects.update_or_create(
        user_id=user_id,
        defaults={"workout": workout, "artifact_id": artifact_id, "session_id": session_id},
    )
    return current


def update_current_workout(*, user_id: uuid.UUID, workout: dict[str, Any]) -> CurrentWorkout:
    """Replace the exercises etc. of the user's current workout, keeping its artifact id.

    Raises CurrentWorkout.DoesNotExist when the user has no current workout.
    """
    current = CurrentWorkout.objects.get(user_id=user_id)
    current.workout = workout
    current.save(update_fields=["workout", "updated_at"])
    return current


def clear_current_workout(*, user_id: uuid.UUID) -> bool:
    """Forget the user's current workout; False when there was none."""
    deleted, _ = CurrentWorkout.objects.filter(user_id=user_id).delete()
    return deleted > 0


# --- Preferences ------------------------------------------------------------------------------------------------
def create_preference(
    *,
    user_id: uuid.UUID,
    preference_type: str,
    description: str,
    guidance: str = "",
    category: str = "general",
    exclude_exercises: Iterable[str] = (),
    exclude_equipment: Iterable[str] = (),
    expires_at: datetime | None = None,
    delete_after_use: bool = False,
) -> Preference:
    """Store a preference. Raises ValueError for an unknown type or an empty description."""
    if preference_type not in PreferenceType.values:
        raise ValueError(
            f"preference_type must be one of {', '.join(PreferenceType.values)}, not {preference_type!r}"
        )
    if not description.strip():
        raise ValueError("description must not be empty")
    return Preference.objects.create(
        user_id=user_id,
        preference_type=preference_type,
        category=(category or "general").strip().lower(),
        description=description.strip(),
        guidance=guidance.strip(),
        exclude_exercises=[name.strip() for name in exclude_exercises if name.strip()],
        exclude_equipment=[slug.strip() for slug in exclude_equipment if slug.strip()],
        expires_at=expires_at,
        delete_after_use=delete_after_use,
    )


def delete_preference(*, user_id: uuid.UUID, preference_id: uuid.UUID) -> bool:
    """Delete one of the user's preferences; False when it is not theirs or does not exist."""
    deleted, _ = Preference.objects.filter(user_id=user_id, id=preference_id).delete()
    return deleted > 0


def consume_preferences_after_use(*, user_id: uuid.UUID) -> int:
    """Delete the user's one-shot preferences once a workout has used them; returns how many."""
    deleted, _ = Preference.objects.filter(user_id=user_id, delete_after_use=True).delete()
    return deleted


# --- Workout logs -------------------------------------------------------------------------------------------
# Keys a log entry dict may carry: the WorkoutLogEntry fields, plus seed 000's / 001's spellings as aliases.
_LOG_ENTRY_FIELDS: frozenset[str] = frozenset(
    {
        "order",
        "exercise_name",
        "exercise_slug",
        "exercise_type",
        "section",
        "muscles",
        "goals",
        "target_sets",
        "target_reps",
        "target_load_each",
        "target_hold_sec",
        "target_duration_min",
        "target_distance",
        "target_rounds",
        "target_work_sec",
        "target_rest_sec",
        "actual_sets",
        "actual_reps",
        "actual_load_each",
        "actual_hold_sec",
        "actual_duration_min",
        "actual_distance",
        "actual_rounds",
        "actual_work_sec",
        "load_unit",
        "distance_unit",
        "rpe",
        "notes",
        "skipped",
        "completed_at",
    }
)
_LOG_ENTRY_ALIASES: dict[str, str] = {
    "name": "exercise_name",
    "type": "exercise_type",
    "muscles_utilized": "muscles",
    "goals_addressed": "goals",
}
_LIST_FIELDS = (
    "target_reps",
    "target_load_each",
    "target_hold_sec",
    "actual_reps",
    "actual_load_each",
    "actual_hold_sec",
)


class InvalidLogEntryError(ValueError):
    """A log entry dict the model cannot store; the message names every problem."""


def _share_list(value: Any, key: str) -> list[dict[str, Any]]:
    """[{key: name, share: x}] from that list form or from a {name: share} dict."""
    if isinstance(value, Mapping):
        return [{key: name, "share": float(share)} for name, share in value.items()]
    return [{key: item[key], "share": float(item.get("share", 0))} for item in value or ()]


def _log_entry_values(entry: Mapping[str, Any], *, index: int, now: datetime) -> dict[str, Any]:
    """Model field values from one entry dict, or InvalidLogEntryError naming every bad key/value."""
    values: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in entry.items():
        field = _LOG_ENTRY_ALIASES.get(key, key)
        if field not in _LOG_ENTRY_FIELDS:
            problems.append(f"unknown field {key!r}")
            continue
        values[field] = value
    if not str(values.get("exercise_name") or "").strip():
        problems.append("exercise_name is required")
    exercise_type = values.setdefault("exercise_type", "reps")
    if exercise_type not in EXERCISE_TYPES:
        problems.append(f"exercise_type must be one of {', '.join(EXERCISE_TYPES)}, not {exercise_type!r}")
    if values.setdefault("section", WorkoutSection.MAIN) not in WorkoutSection.values:
        problems.append(
            f"section must be one of {', '.join(WorkoutSection.values)}, not {values['section']!r}"
        )
    if values.setdefault("load_unit", WeightUnit.KG) not in WeightUnit.values:
        problems.append(f"load_unit must be kg or lb, not {values['load_unit']!r}")
    if values.setdefault("distance_unit", DistanceUnit.KM) not in DistanceUnit.values:
        problems.append(f"distance_unit must be km or mi, not {values['distance_unit']!r}")
    rpe = values.get("rpe")
    if rpe is not None and not (isinstance(rpe, int | float) and 1 <= rpe <= 10):
        problems.append(f"rpe must be a number from 1 to 10, not {rpe!r}")
    try:
        values["muscles"] = _share_list(values.get("muscles"), "muscle")
        values["goals"] = _share_list(values.get("goals"), "goal")
    except (KeyError, TypeError, ValueError):
        problems.append('muscles/goals must be [{"muscle"|"goal": name, "share": number}, ...]')
    for field in _LIST_FIELDS:
        value = values.get(field)
        if value is None:
            values[field] = []
        elif isinstance(value, int | float):
            values[field] = [value]  # one number = the same for every set, kept as given
        elif not isinstance(value, list):
            problems.append(f"{field} must be a list of numbers")
    if problems:
        raise InvalidLogEntryError(f"entry {index + 1}: " + "; ".join(problems))
    values.setdefault("order", index)
    values["completed_at"] = values.get("completed_at") or now
    values["exercise_name"] = str(values["exercise_name"]).strip()
    return values


def record_workout_log(
    *,
    user_id: uuid.UUID,
    entries: list[dict[str, Any]],
    title: str = "",
    notes: str = "",
    session_id: uuid.UUID | None = None,
    artifact_id: str = "",
    completed_at: datetime | None = None,
    started_at: datetime | None = None,
    into_log: WorkoutLog | None = None,
) -> WorkoutLog:
    """Store a whole workout with its entries in one transaction.

    `into_log` is the workout's log when sets were already logged during it (`log_single_exercise`): the
    entries are added to it and it takes the title, notes and completion time, so one session workout is one
    history entry. Raises InvalidLogEntryError (a ValueError) naming every bad entry before anything is written.
    """
    finished = completed_at or timezone.now()
    problems: list[str] = []
    rows: list[dict[str, Any]] = []
    if not entries and into_log is None:
        problems.append("a workout log needs at least one entry")
    first = into_log.entries.count() if into_log is not None else 0
    for index, entry in enumerate(entries):
        try:
            rows.append(_log_entry_values(entry, index=first + index, now=finished))
        except InvalidLogEntryError as error:
            problems.append(str(error))
    if problems:
        raise InvalidLogEntryError("; ".join(problems))
    with transaction.atomic():
        if into_log is None:
            log = WorkoutLog.objects.create(
                user_id=user_id,
                session_id=session_id,
                title=title,
                notes=notes,
                artifact_id=artifact_id,
                started_at=started_at,
                completed_at=finished,
            )
        else:
            log = WorkoutLog.objects.select_for_update().get(pk=into_log.pk, user_id=user_id)
            log.title = title or log.title
            log.notes = "\n".join(part for part in (log.notes, notes) if part)
            log.artifact_id = artifact_id or log.artifact_id
            log.started_at = log.started_at or started_at
            log.completed_at = max(log.completed_at, finished)
            log.save(update_fields=["title", "notes", "artifact_id", "started_at", "completed_at"])
        WorkoutLogEntry.objects.bulk_create([WorkoutLogEntry(log=log, **row) for row in rows])
    return log


def _local_day_bounds(*, user_id: uuid.UUID, now: datetime) -> tuple[datetime, datetime]:
    """Midnight to midnight of `now`'s date in the user's time zone (UTC when unknown)."""
    tz = selectors.user_timezone(user_id=user_id)
    local = now.astimezone(tz)
    start = datetime.combine(local.date(), time.min, tzinfo=tz)
    return start, start + timedelta(days=1)


def log_single_exercise(
    *,
    user_id: uuid.UUID,
    entry: dict[str, Any],
    session_id: uuid.UUID | None = None,
    now: datetime | None = None,
    workout_title: str | None = None,
    workout_log: WorkoutLog | None = None,
    artifact_id: str = "",
) -> WorkoutLogEntry:
    """Log one exercise as done.

    During a workout (`workout_title` given) the entry goes to that workout's log, `workout_log`, or to a new
    log titled after the workout: never to another workout's log. Otherwise it is appended to today's log of
    that session (the user's local day), or to a new one. Raises InvalidLogEntryError for a bad entry.
    """
    moment = now or timezone.now()
    start, end = _local_day_bounds(user_id=user_id, now=moment)
    with transaction.atomic():
        logs = WorkoutLog.objects.select_for_update().filter(user_id=user_id)
        if workout_title is not None:
            log = logs.filter(pk=workout_log.pk).first() if workout_log is not None else None
        else:
            log = (
                logs.filter(session_id=session_id, completed_at__gte=start, completed_at__lt=end)
                .order_by("-completed_at")
                .first()
            )
        if log is None:
            log = WorkoutLog.objects.create(
                user_id=user_id,
                session_id=session_id,
                title=workout_title or "",
                artifact_id=artifact_id,
                started_at=moment,
                completed_at=moment,
            )
        next_order = log.entries.count()
        values = _log_entry_values({"order": next_order, **entry}, index=next_order, now=moment)
        created = WorkoutLogEntry.objects.create(log=log, **values)
        if created.completed_at > log.completed_at:
            log.completed_at = created.completed_at
            log.save(update_fields=["completed_at"])
    return created


def undo_log_entry(*, user_id: uuid.UUID, entry_id: uuid.UUID) -> bool:
    """Delete one of the user's log entries, and its log if that leaves it empty; False when not theirs."""
    with transaction.atomic():
        entry = (
            WorkoutLogEntry.objects.select_related("log").filter(id=entry_id, log__user_id=user_id).first()
        )
        if entry is None:
            return False
        log = entry.log
        entry.delete()
        if not log.entries.exists():
            log.delete()
    return True


# Reads of the logs live in selectors; re-exported because callers treat the log API as one unit.
workout_history = selectors.workout_history


# --- Goals ------------------------------------------------------------------------------------------------------
def _normalised_weights(goals: Mapping[str, float], *, what: str) -> dict[str, float]:
    """Weights scaled to sum 1.0 (so 50/30/20 and 0.5/0.3/0.2 mean the same); zero weights dropped."""
    problems = [
        f"{name}: {weight!r}"
        for name, weight in goals.items()
        if isinstance(weight, bool) or not isinstance(weight, int | float) or weight < 0 or weight != weight
    ]
    if problems:
        raise ValueError(f"{what} weights must be numbers >= 0; bad: {', '.join(problems)}")
    total = float(sum(goals.values()))
    if goals and total <= 0:
        raise ValueError(f"{what} weights must not all be zero")
    return {name: float(weight) / total for name, weight in goals.items() if weight > 0}


def set_category_goals(
    *,
    user_id: uuid.UUID,
    goals: Mapping[str, float],
    descriptions: Mapping[str, str] | None = None,
) -> list[CategoryGoal]:
    """Replace the user's category goals; weights are normalised to sum 1.0. `{}` clears them.

    Category names are free text ("Strength", "Zone 2 Cardio"); two names differing only in case are one
    category and raise ValueError.
    """
    cleaned = {name.strip(): weight for name, weight in goals.items()}
    if any(not name for name in cleaned):
        raise ValueError("category names must not be empty")
    folded = [name.casefold() for name in cleaned]
    duplicates = sorted({name for name in folded if folded.count(name) > 1})
    if duplicates:
        raise ValueError(f"categories given twice (names ignore case): {', '.join(duplicates)}")
    weights = _normalised_weights(cleaned, what="category goal")
    notes = {name.strip(): text for name, text in (descriptions or {}).items()}
    with transaction.atomic():
        CategoryGoal.objects.filter(user_id=user_id).delete()
        CategoryGoal.objects.bulk_create(
            [
                CategoryGoal(
                    user_id=user_id, category=name, weight=weight, description=notes.get(name, "").strip()
                )
                for name, weight in weights.items()
            ]
        )
    return selectors.list_category_goals(user_id=user_id)


def set_muscle_goals(*, user_id: uuid.UUID, goals: Mapping[str, float]) -> list[MuscleGoal]:
    """Replace the user's muscle goals; names must be among the 16 muscles (any case). `{}` clears them."""
    named = [(name, canonical_muscle(name), weight) for name, weight in goals.items()]
    unknown = sorted(name for name, muscle, _ in named if muscle is None)
    if unknown:
        raise ValueError(f"unknown muscles: {', '.join(unknown)}. Valid muscles: {', '.join(MUSCLES)}")
    canonical: dict[str, float] = {}
    for _, muscle, weight in named:
        if muscle is None:
            continue
        if muscle in canonical:
            raise ValueError(f"muscle given twice: {muscle}")
        canonical[muscle] = weight
    weights = _normalised_weights(canonical, what="muscle goal")
    with transaction.atomic():
        MuscleGoal.objects.filter(user_id=user_id).delete()
        MuscleGoal.objects.bulk_create(
            [MuscleGoal(user_id=user_id, muscle=muscle, weight=weight) for muscle, weight in weights.items()]
        )
    return selectors.list_muscle_goals(user_id=user_id)


def create_milestone_goal(
    *,
    user_id: uuid.UUID,
    title: str,
    target_value: float,
    metric: str = "",
    unit: str = "",
    current_value: float = 0.0,
    deadline: date | None = None,
) -> MilestoneGoal:
    """Start tracking a measurable goal ("Run 5 km", target 5, unit km)."""
    if not title.strip():
        raise ValueError("title must not be empty")
    return MilestoneGoal.objects.create(
        user_id=user_id,
        title=title.strip(),
        metric=metric.strip(),
        unit=unit.strip(),
        target_value=target_value,
        current_value=current_value,
        deadline=deadline,
    )


def update_milestone_goal(
    *,
    user_id: uuid.UUID,
    milestone_id: uuid.UUID,
    current_value: float | None = None,
    status: str | None = None,
    target_value: float | None = None,
    deadline: date | None = None,
    title: str | None = None,
) -> MilestoneGoal:
    """Record progress on, or close, one of the user's milestones; `achieved` stamps achieved_at.

    Raises MilestoneGoal.DoesNotExist when it is not the user's, ValueError for an unknown status.
    """
    milestone = MilestoneGoal.objects.get(id=milestone_id, user_id=user_id)
    if status is not None:
        if status not in MilestoneStatus.values:
            raise ValueError(f"status must be one of {', '.join(MilestoneStatus.values)}, not {status!r}")
        milestone.status = status
        milestone.achieved_at = timezone.now() if status == MilestoneStatus.ACHIEVED else None
    for field, value in (
        ("current_value", current_value),
        ("target_value", target_value),
        ("deadline", deadline),
        ("title", title),
    ):
        if value is not None:
            setattr(milestone, field, value)
    milestone.save()
    return milestone


def delete_milestone_goal(*, user_id: uuid.UUID, milestone_id: uuid.UUID) -> bool:
    """Delete one of the user's milestones; False when it is not theirs."""
    deleted, _ = MilestoneGoal.objects.filter(id=milestone_id, user_id=user_id).delete()
    return deleted > 0


# --- Schedule ---------------------------------------------------------------------------------------------------
def schedule_workout(
    *,
    user_id: uuid.UUID,
    scheduled_date: date,
    title: str,
    scheduled_time: time | None = None,
    duration_minutes: int | None = None,
    notes: str = "",
    workout: dict[str, Any] | None = None,
    plan_id: uuid.UUID | None = None,
) -> ScheduledWorkout:
    """Put a workout on the user's calendar. A plan, if given, must be theirs (else WorkoutPlan.DoesNotExist)."""
    if not title.strip():
        raise ValueError("title must not be empty")
    plan = WorkoutPlan.objects.get(id=plan_id, user_id=user_id) if plan_id is not None else None
    return ScheduledWorkout.objects.create(
        user_id=user_id,
        scheduled_date=scheduled_date,
        scheduled_time=scheduled_time,
        title=title.strip(),
        duration_minutes=duration_minutes,
        notes=notes,
        workout=workout,
        plan=plan,
    )


_UNSET: Any = object()


def update_scheduled_workout(
    *,
    user_id: uuid.UUID,
    scheduled_workout_id: uuid.UUID,
    scheduled_date: date | None = None,
    scheduled_time: time | None = _UNSET,
    title: str | None = None,
    duration_minutes: int | None = _UNSET,
    notes: str | None = None,
    workout: dict[str, Any] | None = _UNSET,
    status: str | None = None,
) -> ScheduledWorkout:
    """Change the given fields of one of the user's scheduled workouts (nullable ones may be set to None). A new
    workout clears the day's message (it told the old one) and ends a preparation pending or failed.

    Raises ScheduledWorkout.DoesNotExist when it is not the user's, ValueError for an unknown status.
    """
    scheduled = ScheduledWorkout.objects.get(id=scheduled_workout_id, user_id=user_id)
    if status is not None and status not in ScheduleStatus.values:
        raise ValueError(f"status must be one of {', '.join(ScheduleStatus.values)}, not {status!r}")
    if title is not None and not title.strip():
        raise ValueError("title must not be empty")
    changes: dict[str, Any] = {
        "scheduled_date": scheduled_date,
        "title": title.strip() if title is not None else None,
        "notes": notes,
        "status": status,
    }
    for field, value in changes.items():
        if value is not None:
            setattr(scheduled, field, value)
    for field, value in (
        ("scheduled_time", scheduled_time),
        ("duration_minutes", duration_minutes),
        ("workout", workout),
    ):
        if value is not _UNSET:
            setattr(scheduled, field, value)
    if workout is not _UNSET:
        # The day's message is its old workout as the user received it, and a plan day's notes are the plan's
        # session (unless new notes are given): both describe what this replaces.
        scheduled.message = ""
        if scheduled.plan_id is not None and notes is None:
            scheduled.notes = ""
        # The week chain, still preparing the day or having failed it, must not replace the workout the user chose.
        if workout and scheduled.preparation in (Preparation.PENDING, Preparation.FAILED):
            scheduled.preparation, scheduled.preparation_error = Preparation.READY, ""
    scheduled.save()
    return scheduled


def delete_scheduled_workout(*, user_id: uuid.UUID, scheduled_workout_id: uuid.UUID) -> bool:
    """Remove one of the user's scheduled workouts; False when it is not theirs."""
    deleted, _ = ScheduledWorkout.objects.filter(id=scheduled_workout_id, user_id=user_id).delete()
    return deleted > 0


# --- A plan week's preparation (the week chain) ------------------------------------------------------------------
def start_week_preparation(
    *,
    user_id: uuid.UUID,
    plan_id: uuid.UUID,
    first: date,
    last: date,
    only: Collection[uuid.UUID] | None = None,
) -> list[ScheduledWorkout]:
    """Mark the plan's still-scheduled workouts from `first` to `last` (of them, only the ids `only` when given)
    as being prepared (their earlier error cleared). Returns them in date order; WorkoutPlan.DoesNotExist if the
    plan is not theirs."""
    plan = WorkoutPlan.objects.get(id=plan_id, user_id=user_id)
    days = plan.scheduled_workouts.filter(
        status=ScheduleStatus.SCHEDULED, scheduled_date__gte=first, scheduled_date__lte=last
    )
    if only is not None:
        days = days.filter(id__in=list(only))
    days.update(preparation=Preparation.PENDING, preparation_error="", updated_at=timezone.now())
    return list(days.order_by("scheduled_date", "created_at"))


def store_day_layout(*, user_id: uuid.UUID, scheduled_workout_id: uuid.UUID, layout: dict[str, Any]) -> bool:
    """The day as the week chain laid it out (`{date, markdown, draft}`), kept so that the day can be prepared
    again on its own. Only while the day is pending (False otherwise, as for `store_prepared_workout`)."""
    return bool(
        _pending_day(user_id=user_id, scheduled_workout_id=scheduled_workout_id).update(
            preparation_layout=layout, updated_at=timezone.now()
        )
    )


def store_prepared_workout(
    *,
    user_id: uuid.UUID,
    scheduled_workout_id: uuid.UUID,
    workout: dict[str, Any],
    message: str,
    duration_minutes: int | None = None,
) -> bool:
    """A prepared day: its validated workout and its message, ready, and with `duration_minutes` the workout's
    length in place of the plan's. Only while the day is still the user's, on the calendar and pending: a day the
    user edited, moved to done or cancelled, or deleted while the chain ran is left as it is (False)."""
    length = {"duration_minutes": duration_minutes} if duration_minutes else {}
    return bool(
        _pending_day(user_id=user_id, scheduled_workout_id=scheduled_workout_id).update(
            **length,
            workout=workout,
            message=message,
            preparation=Preparation.READY,
            preparation_error="",
            updated_at=timezone.now(),
        )
    )


def fail_workout_preparation(*, user_id: uuid.UUID, scheduled_workout_id: uuid.UUID, error: str) -> bool:
    """A day the week chain could not prepare, with the reason (its earlier workout, if any, is kept). Only
    while it is still pending (False otherwise, as for `store_prepared_workout`)."""
    return bool(
        _pending_day(user_id=user_id, scheduled_workout_id=scheduled_workout_id).update(
            preparation=Preparation.FAILED, preparation_error=error[:2000], updated_at=timezone.now()
        )
    )


WEEK_PREPARATION_STATES = ("pending", "ready", "partly_failed", "failed")


def record_week_preparation(
    *, user_id: uuid.UUID, plan_id: uuid.UUID, week: int, status: str, reason: str = ""
) -> bool:
    """Where the plan's week stands in the week chain, kept on the plan as its week's `preparation`
    ({"status", "reason", "at"}): what the trainer and the user read. False when the plan or week is gone."""
    if status not in WEEK_PREPARATION_STATES:
        raise ValueError(f"status must be one of {', '.join(WEEK_PREPARATION_STATES)}, not {status!r}")
    with transaction.atomic():
        plan = WorkoutPlan.objects.select_for_update().filter(id=plan_id, user_id=user_id).first()
        if plan is None:
            return False
        found = next(
            (item for item in (plan.plan or {}).get("weeks") or [] if item.get("week") == week), None
        )
        if found is None:
            return False
        found["preparation"] = {"status": status, "reason": reason[:2000], "at": timezone.now().isoformat()}
        plan.save(update_fields=["plan", "updated_at"])
    return True


def _pending_day(*, user_id: uuid.UUID, scheduled_workout_id: uuid.UUID) -> models.QuerySet[ScheduledWorkout]:
    return ScheduledWorkout.objects.filter(
        id=scheduled_workout_id,
        user_id=user_id,
        preparation=Preparation.PENDING,
        status=ScheduleStatus.SCHEDULED,
    )


# --- Plans ------------------------------------------------------------------------------------------------------
def create_workout_plan(
    *,
    user_id: uuid.UUID,
    name: str,
    goal: str = "",
    weeks: int = 4,
    start_date: date | None = None,
    plan: dict[str, Any] | None = None,
    status: str = PlanStatus.ACTIVE,
    schedule_days: bool = False,
) -> WorkoutPlan:
    """Create a multi-week plan. `plan` is {"weeks": [{"week": 1, "days": [{"date": "YYYY-MM-DD",
    "title": ..., "notes": ..., "duration_minutes": ...}]}]}; `schedule_days` puts every dated day on the
    calendar as a scheduled workout linked to the plan.
    """
    if not name.strip():
        raise ValueError("name must not be empty")
    if weeks < 1:
        raise ValueError("weeks must be at least 1")
    if status not in PlanStatus.values:
        raise ValueError(f"status must be one of {', '.join(PlanStatus.values)}, not {status!r}")
    with transaction.atomic():
        created = WorkoutPlan.objects.create(
            user_id=user_id,
            name=name.strip(),
            goal=goal.strip(),
            weeks=weeks,
            start_date=start_date,
            status=status,
            plan=plan or {"weeks": []},
        )
        if schedule_days:
            ScheduledWorkout.objects.bulk_create(
                [
                    ScheduledWorkout(
                        user_id=user_id,
                        plan=created,
                        scheduled_date=date.fromisoformat(str(day["date"])),
                        title=str(day.get("title") or created.name),
                        notes=str(day.get("notes") or ""),
                        duration_minutes=day.get("duration_minutes"),
                        workout=day.get("workout"),
                    )
                    for week in created.plan.get("weeks", [])
                    for day in week.get("days", [])
                    if day.get("date")
                ]
            )
    return created


def update_workout_plan_status(*, user_id: uuid.UUID, plan_id: uuid.UUID, status: str) -> WorkoutPlan:
    """Move one of the user's plans to `status`. Archiving or completing it cancels its future sessions.

    Raises WorkoutPlan.DoesNotExist when it is not the user's, ValueError for an unknown status.
    """
    if status not in PlanStatus.values:
        raise ValueError(f"status must be one of {', '.join(PlanStatus.values)}, not {status!r}")
    with transaction.atomic():
        plan = WorkoutPlan.objects.select_for_update().get(id=plan_id, user_id=user_id)
        plan.status = status
        plan.save(update_fields=["status", "updated_at"])
        if status in (PlanStatus.ARCHIVED, PlanStatus.COMPLETED):
            plan.scheduled_workouts.filter(
                status=ScheduleStatus.SCHEDULED,
                scheduled_date__gte=selectors.local_today(user_id=user_id),
            ).update(status=ScheduleStatus.CANCELLED)
    return plan


def delete_workout_plan(*, user_id: uuid.UUID, plan_id: uuid.UUID) -> bool:
    """Delete one of the user's plans and its not-yet-done scheduled sessions; False when not theirs."""
    with transaction.atomic():
        plan = WorkoutPlan.objects.filter(id=plan_id, user_id=user_id).first()
        if plan is None:
            return False
        plan.scheduled_workouts.filter(status=ScheduleStatus.SCHEDULED).delete()
        plan.delete()
    return True
