"""The preference tools (docs/contracts.md §11.5 (tool list)): set_preference, delete_preference and set_units.

Units change one way only: set_units writes the user's settings (the service behind PUT /user-settings);
set_preference refuses a preference that is really a unit change ("use pounds from now on") and says to use
set_units, so no free-text preference can contradict the settings.

The model reads preferences with fetch_data (`active_preferences`, which lists their ids). Seed 001's `type`
names a category ("injury", "exercise", ...) while this service's `preference_type` is permanent or
temporary: a `type` of "permanent"/"temporary" fills preference_type, any other value fills category.
Without preference_type, a preference with expires_at or delete_after_use is temporary, else permanent.
"""

from __future__ import annotations

import re
import uuid
from datetime import date, datetime, time, timedelta
from typing import Annotated, Any, Literal

from django.utils import timezone
from pydantic import BaseModel, Field, StringConstraints, model_validator
from pydantic.json_schema import SkipJsonSchema

from datasources_app import selectors, services
from datasources_app.catalog import EQUIPMENT_SLUGS
from datasources_app.formatters import day
from datasources_app.models import Preference, PreferenceType, Preparation, ScheduledWorkout, ScheduleStatus
from datasources_app.sources import units_for
from datasources_app.workouts import Workout, canonical_equipment
from tools_app.avoid_words import parse_preference
from tools_app.formatting import confirmation, shorten
from tools_app.registry import register
from tools_app.types import Tool, ToolContext, ToolOutcome
from tools_app.workout_tools import load_current_workout
from tools_app.workout_validation import (
    INJURY_CATEGORIES,
    effective_equipment,
    excluded_by,
    find_catalog_match,
    validate_workout,
)

NonEmptyText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]

# Seed 001's preference `type` values: categories, not temporal behaviour.
SEED_001_CATEGORIES = (
    "workout",
    "injury",
    "time",
    "equipment",
    "intensity",
    "muscle_group",
    "exercise",
    "goal",
    "recovery",
    "other",
)


class SetPreferenceInput(BaseModel):
    description: NonEmptyText = Field(description="In the user's words.")
    guidance: NonEmptyText = Field(description="How it changes the workouts you create.")
    # Follows from expires_at and delete_after_use, so not advertised; still accepted (seed 000).
    preference_type: SkipJsonSchema[Literal["permanent", "temporary"] | None] = None
    category: str | None = Field(
        default=None, description="e.g. injury, equipment, time, exercise (default general)."
    )
    exclude_exercises: list[str] | None = Field(default=None, description="Exercise names, e.g. ['Burpee'].")
    exclude_equipment: list[str] | None = Field(
        default=None,
        description="Equipment slugs, e.g. ['barbell'].",
    )
    expires_at: str | None = Field(
        default=None,
        description="A future ISO date (through that day) or date-time, in the user's time zone.",
    )
    delete_after_use: bool = False

    @model_validator(mode="before")
    @classmethod
    def _accept_seed_001_type(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "type" not in data:
            return data
        data = dict(data)
        value = data.pop("type")
        key = "preference_type" if value in PreferenceType.values else "category"
        data.setdefault(key, value)
        return data


# A unit word not right after a number ("5 km" is a distance, not a unit) plus a word that asks for a unit.
_UNIT_WORD = re.compile(
    r"(?<![\d.])(?<![\d.]\s)\b(?:pounds?|lbs?|kilos?|kilograms?|kgs?|miles?|kilomet(?:er|re)s?|km|mi|metric|"
    r"imperial)\b"
)
_UNIT_CUE = re.compile(
    r"\b(?:use|using|in|switch\w*|chang\w*|prefer\w*|measur\w*|show\w*|display\w*|units?|instead|"
    r"rather|from now on)\b"
)


def is_unit_change(text: str) -> bool:
    """Whether a preference's words ask for other units ("use pounds", "weights in lb"), not a distance or load
    ("no running over 5 km", "20 kg dumbbells")."""
    lowered = text.lower()
    return bool(_UNIT_WORD.search(lowered)) and bool(_UNIT_CUE.search(lowered))


class SetUnitsInput(BaseModel):
    weight: Literal["kg", "lb"] | None = Field(default=None, description="kg or lb.")
    distance: Literal["km", "mi"] | None = Field(default=None, description="km or mi.")

    @model_validator(mode="before")
    @classmethod
    def _accept_spellings(cls, data: Any) -> Any:
        """'pounds', 'kilos', 'miles', ... are the units they name."""
        if not isinstance(data, dict):
            return data
        return {key: _UNIT_SPELLINGS.get(str(value).strip().lower(), value) for key, value in data.items()}


_UNIT_SPELLINGS = {
    **dict.fromkeys(("kgs", "kilo", "kilos", "kilogram", "kilograms"), "kg"),
    **dict.fromkeys(("lbs", "pound", "pounds"), "lb"),
    **dict.fromkeys(("kms", "kilometer", "kilometers", "kilometre", "kilometres"), "km"),
    **dict.fromkeys(("mile", "miles"), "mi"),
}


class DeletePreferenceInput(BaseModel):
    preference_id: NonEmptyText = Field(description="From the active_preferences data.")


def _failure(message: str) -> ToolOutcome:
    return ToolOutcome(success=False, data={"error": message}, text=message)


def parse_expiry(value: str, *, user_id: uuid.UUID) -> datetime:
    """An aware datetime from an ISO date-time (naive = user's zone) or date (= end of that day, local).

    Raises ValueError for anything else.
    """
    text = value.strip()
    tz = selectors.user_timezone(user_id=user_id)
    try:
        only_date = date.fromisoformat(text)
    except ValueError:
        moment = datetime.fromisoformat(text)
        return moment if timezone.is_aware(moment) else moment.replace(tzinfo=tz)
    return datetime.combine(only_date + timedelta(days=1), time.min, tzinfo=tz)


def catalogue_name(name: str) -> str:
    """The catalogue's name for an exercise the user named ("push-ups" → "Push-Up"), else the name as given:
    a stored exclusion then reads like the workouts it is checked against."""
    found = selectors.find_exercise_by_name(name=name)
    return found.name if found is not None else name.strip()


def _preference_data(preference: Preference) -> dict[str, Any]:
    return {
        "id": str(preference.id),
        "preference_type": preference.preference_type,
        "category": preference.category,
        "description": preference.description,
        "guidance": preference.guidance,
        "exclude_exercises": preference.exclude_exercises,
        "exclude_equipment": preference.exclude_equipment,
        "expires_at": preference.expires_at.isoformat() if preference.expires_at else None,
        "delete_after_use": preference.delete_after_use,
    }


def read_from_words(args: SetPreferenceInput, *, user_id: uuid.UUID) -> SetPreferenceInput:
    """With no exclusion lists, what the description says to leave out ("no push-ups this week") fills them, and
    for how long it says when nothing else sets that: the same reading the drafting gives a stored description."""
    if args.exclude_exercises is not None or args.exclude_equipment is not None:
        return args
    said = parse_preference(args.description.lower())
    update: dict[str, Any] = {
        "exclude_exercises": list(said.phrases),
        "exclude_equipment": list(said.equipment),
    }
    if args.category is None and (said.phrases or said.equipment):
        update["category"] = "exercise" if said.phrases else "equipment"
    if not (args.expires_at or args.delete_after_use or args.preference_type):
        days = said.expires_in_days
        end = selectors.local_today(user_id=user_id) + timedelta(days=days) if days else None
        update |= {"delete_after_use": said.today_only, "expires_at": end.isoformat() if end else None}
    return args.model_copy(update=update)


def ruled_out_now(preference: Preference, ctx: ToolContext) -> str:
    """The current workout's exercises a new preference rules out, for the model to swap (or "")."""
    current = load_current_workout(ctx)
    hit = []
    for exercise in current.exercises if current is not None else []:
        match = find_catalog_match(exercise.exercise_name)
        names = (exercise.exercise_name, *(match.names if match is not None else ()))
        banned = set(effective_equipment(exercise, match)) & set(preference.exclude_equipment or ())
        if excluded_by(preference, names) or banned:
            hit.append(f"{exercise.id} ({exercise.exercise_name})")
    return f" It rules out of the current workout: {', '.join(hit)}." if hit else ""


SCHEDULE_DAYS_CHECKED = 14  # the prepared days ahead a new preference is checked against
_NAMED_EXERCISE = re.compile(r"^exercise \d+ '(?P<name>[^']+)'")


def prepared_day_conflicts(ctx: ToolContext) -> dict[uuid.UUID, tuple[ScheduledWorkout, list[str]]]:
    """The prepared days on the calendar (the next two weeks) and the exercises of each that the checks of a new
    workout refuse now (the user's injuries, preferences and equipment)."""
    found: dict[uuid.UUID, tuple[ScheduledWorkout, list[str]]] = {}
    for item in selectors.scheduled_workouts(
        user_id=ctx.user_id, days_ahead=SCHEDULE_DAYS_CHECKED, statuses=[ScheduleStatus.SCHEDULED]
    ):
        if item.preparation == Preparation.READY and item.workout:
            found[item.pk] = (item, _ruled_out_of(item, ctx))
    return found


def ruled_out_on_schedule(
    preference: Preference,
    before: dict[uuid.UUID, tuple[ScheduledWorkout, list[str]]],
    ctx: ToolContext,
) -> str:
    """The prepared days (while the preference lasts) it newly rules exercises out of, for the model to offer to
    prepare again (or ""): ' It also rules exercises out of these prepared days (…): Mon 30 Nov Push (week 1),
    id …: Overhead Press.'"""
    if preference.delete_after_use or not before:
        return ""  # the next workout only: the current one, said above
    until = selectors.local_today(user_id=ctx.user_id) + timedelta(days=SCHEDULE_DAYS_CHECKED)
    if preference.expires_at is not None:
        until = min(until, preference.expires_at.astimezone(units_for(user_id=ctx.user_id).tz).date())
    hits = []
    for key, (item, names) in prepared_day_conflicts(ctx).items():
        new = [name for name in names if name not in before.get(key, (item, []))[1]]
        if new and item.scheduled_date <= until:
            hits.append(f"{day(item.scheduled_date)} {item.title}, id {item.id}: {', '.join(new)}")
    if not hits:
        return ""
    return (
        " It also rules exercises out of these prepared days (offer to prepare them again with "
        f"prepare_week(workout_id)): {'; '.join(hits)}."
    )


def _ruled_out_of(item: ScheduledWorkout, ctx: ToolContext) -> list[str]:
    """The exercises of a prepared day the checks of a new workout now refuse, at the plan's location."""
    try:
        workout = Workout.model_validate(item.workout)
    except ValueError:
        return []
    location = ((item.plan.plan or {}).get("location") or {}) if item.plan is not None else {}
    try:
        location_id = uuid.UUID(str(location.get("id")))
    except ValueError:
        location_id = None
    if (
        location_id is not None
        and selectors.get_location(user_id=ctx.user_id, location_id=location_id) is None
    ):
        location_id = None
    problems = validate_workout(workout, user_id=ctx.user_id, location_id=location_id)
    named = (found["name"] for problem in problems if (found := _NAMED_EXERCISE.match(problem)))
    return list(dict.fromkeys(named))


def set_preference(args: SetPreferenceInput, ctx: ToolContext) -> ToolOutcome:
    """Store a preference the workout tools then respect."""
    args = read_from_words(args, user_id=ctx.user_id)
    if is_unit_change(f"{args.description} {args.guidance}"):
        return _failure(
            "Not saved: this is a unit change. Use set_units (weight kg|lb, distance km|mi) so the user's "
            "settings change; then workouts, logs and stats use the new units."
        )
    expires_at: datetime | None = None
    if args.expires_at:
        try:
            expires_at = parse_expiry(args.expires_at, user_id=ctx.user_id)
        except ValueError:
            return _failure(
                f"expires_at {args.expires_at!r} is not an ISO 8601 date or date-time "
                "(e.g. '2026-01-27' or '2026-01-27T18:00:00Z')."
            )
        if expires_at <= timezone.now():
            return _failure(f"expires_at {args.expires_at} is in the past; give a future date or date-time.")
    temporal = expires_at is not None or args.delete_after_use
    preference_type = args.preference_type or ("temporary" if temporal else "permanent")
    if preference_type == "permanent" and temporal:
        return _failure(
            "A permanent preference cannot have expires_at or delete_after_use; "
            "use preference_type 'temporary' or drop those fields."
        )
    if preference_type == "temporary" and not temporal:
        return _failure(
            "A temporary preference needs expires_at (when it ends) or delete_after_use=true "
            "(next workout only); otherwise use preference_type 'permanent'."
        )
    equipment = [canonical_equipment(item) for item in args.exclude_equipment or () if item.strip()]
    unknown = [item for item in equipment if item not in EQUIPMENT_SLUGS]
    if unknown:
        return _failure(
            f"Unknown equipment in exclude_equipment: {', '.join(unknown)}. "
            f"Valid slugs: {', '.join(EQUIPMENT_SLUGS)}."
        )
    before = prepared_day_conflicts(ctx)
    preference = services.create_preference(
        user_id=ctx.user_id,
        preference_type=preference_type,
        description=args.description,
        guidance=args.guidance,
        category=args.category or "general",
        exclude_exercises=[catalogue_name(name) for name in args.exclude_exercises or ()],
        exclude_equipment=equipment,
        expires_at=expires_at,
        delete_after_use=args.delete_after_use,
    )
    when = until = lasting = ""
    if preference.expires_at is not None:
        local = preference.expires_at.astimezone(units_for(user_id=ctx.user_id).tz)
        until = f"{day(local, with_year=True)} {local:%H:%M}"
        when = f" until {until}"
        # An end at midnight is the end of the day before: "through Fri 11 Dec", as a person says it.
        midnight = (local.hour, local.minute) == (0, 0)
        lasting = (
            f"through {day(local - timedelta(days=1))}" if midnight else f"until {day(local)} {local:%H:%M}"
        )
    elif preference.delete_after_use:
        when = " next workout only"
    temporary = f" (temporary{when})" if preference_type == "temporary" else ""
    text = (
        (
            f"saved: {preference.category} - {shorten(preference.description, 50)}{temporary} id={preference.id}"
        )
        + ruled_out_now(preference, ctx)
        + ruled_out_on_schedule(preference, before, ctx)
    )
    lasting = lasting or ("in your next workout" if preference.delete_after_use else "from now on")
    excludes = preference.exclude_exercises or preference.exclude_equipment
    # An injury is planned around (its rules keep what is safe); a dislike is left out.
    injury = preference.category in INJURY_CATEGORIES
    heeded = "plan around that in" if injury else "leave that out of" if excludes else "keep that in mind for"
    return ToolOutcome(
        success=True,
        data={"preference": _preference_data(preference)},
        text=text,
        tell_user=f"Got it: I'll {heeded} your workouts {lasting}.",
    )


def delete_preference(args: DeletePreferenceInput, ctx: ToolContext) -> ToolOutcome:
    """Delete one of the user's preferences."""
    try:
        preference_id: uuid.UUID | None = uuid.UUID(args.preference_id)
    except ValueError:
        preference_id = None
    preference = (
        Preference.objects.filter(id=preference_id, user_id=ctx.user_id).first() if preference_id else None
    )
    if preference is None or preference_id is None:
        active = selectors.active_preferences(user_id=ctx.user_id)
        listing = "; ".join(f"{item.id} ({shorten(item.description, 40)})" for item in active) or "none"
        return _failure(f"Preference {args.preference_id} not found. Active preferences: {listing}.")
    services.delete_preference(user_id=ctx.user_id, preference_id=preference_id)
    data = {"deleted": True, "preference_id": str(preference_id), "description": preference.description}
    # Named, so the model tells the user which one went ("deleted" alone left it to guess).
    return ToolOutcome(
        success=True, data=data, text=confirmation("deleted", note=shorten(preference.description, 60))
    )


_UNIT_NAMES = {"lb": "pounds", "kg": "kilograms", "mi": "miles", "km": "kilometres"}


def set_units(args: SetUnitsInput, ctx: ToolContext) -> ToolOutcome:
    """Change the user's weight and/or distance unit (their settings, as PUT /user-settings does)."""
    wanted = {
        key: value
        for key, value in (("weight_unit", args.weight), ("distance_unit", args.distance))
        if value is not None
    }
    if not wanted:
        return _failure("Give weight (kg or lb) and/or distance (km or mi).")
    before = selectors.get_settings(user_id=ctx.user_id)
    saved = services.upsert_settings(user_id=ctx.user_id, **wanted)
    parts, said = [], []
    for field, label in (("weight_unit", "weight"), ("distance_unit", "distance")):
        if field in wanted:
            said.append(f"{_UNIT_NAMES[wanted[field]]} for {label}s")
        old, new = getattr(before, field), getattr(saved, field)
        if field not in wanted:
            parts.append(f"{label} stays {new}")
        elif old == new:
            parts.append(f"{label} was already {new}")
        else:
            parts.append(f"{label} {old} → {new}")
    data = {"weight_unit": saved.weight_unit, "distance_unit": saved.distance_unit}
    return ToolOutcome(
        success=True,
        data=data,
        text="Units: " + "; ".join(parts) + ".",
        tell_user=f"Done: I'll use {' and '.join(said)} from now on, in your workouts and your logs.",
    )


SET_PREFERENCE = register(
    Tool(
        name="set_preference",
        description=(
            "Save what the user wants respected in workouts (dislikes, injuries, time or intensity). From "
            "their words: permanent, until a date (expires_at), or next workout only (delete_after_use). List"
            " what to avoid in exclude_exercises / exclude_equipment so workouts are checked."
        ),
        input_model=SetPreferenceInput,
        handler=set_preference,
        category="preferences",
        priority=450,
        observation="summary",
        status_start="Saving your preference...",
        status_done="Preference saved",
    )
)

DELETE_PREFERENCE = register(
    Tool(
        name="delete_preference",
        description=("Delete one of the user's preferences."),
        input_model=DeletePreferenceInput,
        handler=delete_preference,
        category="preferences",
        priority=451,
        observation="confirmation",
        status_start="Removing preference...",
        status_done="Preference removed",
    )
)

SET_UNITS = register(
    Tool(
        name="set_units",
        description="Change the user's units (their settings): weight kg|lb, distance km|mi; either or both.",
        input_model=SetUnitsInput,
        handler=set_units,
        category="preferences",
        priority=452,
        observation="summary",
        status_start="Updating your units...",
        status_done="Units updated",
    )
)
