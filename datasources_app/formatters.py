"""Compact text renderings of the user's data for the model's context (docs/contracts.md §10 (data sources)).

One line per item, abbreviations ("3×8 @ 20kg", "Mon 14 Nov"), the user's units, emptiness stated in words.
Every function is pure and deterministic for the same data, so text in the cached prompt prefix stays
byte-identical between turns.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Any, Protocol

from pydantic import ValidationError

from datasources_app.catalog import ROUND_GROUP_TYPES
from datasources_app.distribution import Distribution, ShareRow
from datasources_app.loads import hands_loaded, per_hand, round_load
from datasources_app.models import (
    PERFORMANCE_FIELDS,
    CategoryGoal,
    CurrentWorkout,
    Location,
    MilestoneGoal,
    MuscleGoal,
    Preference,
    Preparation,
    ScheduledWorkout,
    UserProfile,
    UserSettings,
    WorkoutLog,
    WorkoutLogEntry,
    WorkoutPlan,
)
from datasources_app.stats import convert_distance, convert_weight
from datasources_app.workouts import StoredExercise


@dataclass(frozen=True)
class Units:
    """How to show numbers and dates to one user."""

    weight: str = "kg"
    distance: str = "km"
    tz: tzinfo = field(default=UTC)

    @classmethod
    def from_settings(cls, settings: UserSettings, tz: tzinfo) -> Units:
        return cls(weight=settings.weight_unit, distance=settings.distance_unit, tz=tz)


# --- Primitives -------------------------------------------------------------------------------------------
def number(value: float | int) -> str:
    """At most one decimal, no trailing ".0": 20 → "20", 16.53 → "16.5"."""
    rounded = round(float(value), 1)
    return str(int(rounded)) if rounded.is_integer() else f"{rounded:.1f}"


def percent(share: float) -> str:
    return f"{round(share * 100)}%"


def signed_percent(share: float) -> str:
    points = round(share * 100)
    return f"+{points}%" if points > 0 else f"{points}%"


def day(value: date | datetime, units: Units | None = None, *, with_year: bool = False) -> str:
    """ "Mon 14 Nov" (with the year when asked); datetimes are shown in the user's time zone."""
    if isinstance(value, datetime):
        value = value.astimezone(units.tz if units else UTC).date()
    text = f"{value:%a} {value.day} {value:%b}"
    return f"{text} {value.year}" if with_year else text


def _same_or_slashes(values: Sequence[str]) -> str:
    return values[0] if len(set(values)) == 1 else "/".join(values)


def weight(value: float, *, from_unit: str, units: Units) -> str:
    """A load in the user's unit; converted from the other unit, to the nearest step a gym has (0.5 kg, 1 lb)."""
    if from_unit == units.weight:
        return number(value)
    return number(round_load(convert_weight(value, from_unit=from_unit, to_unit=units.weight), units.weight))


def loads(values: Sequence[float], *, from_unit: str, units: Units, implements: int = 1) -> str:
    """ " @ 20kg", " @ 20/20/22.5kg" or, for a pair (`implements` 2), " @ 20kg each hand"; empty when unloaded.

    Every rendering of a prescribed or logged load goes through here, so "each hand" is said only of a pair."""
    shown = [weight(value, from_unit=from_unit, units=units) for value in values if value]
    if not shown:
        return ""
    return f" @ {_same_or_slashes(shown)}{units.weight}{per_hand(implements)}"


def sets_reps(sets: int | None, reps: Sequence[Any], suffix: str = "") -> str:
    """ "3×8", "3×8/8/6", "3×45s"; "3 sets" without reps; "" without either."""
    shown = [number(rep) for rep in reps if rep is not None]
    count = sets or len(shown)
    if not shown:
        return f"{count} sets" if count else ""
    return f"{count}×{_same_or_slashes(shown)}{suffix}"


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def prescription(
    *,
    exercise_type: str,
    units: Units,
    sets: int | None = None,
    reps: Any = None,
    load_each: Any = None,
    load_unit: str = "kg",
    hold_sec: Any = None,
    duration_min: float | None = None,
    distance: float | None = None,
    distance_unit: str = "km",
    rounds: int | None = None,
    work_sec: int | None = None,
    rest_sec: int | None = None,
    implements: int = 1,
) -> str:
    """What one exercise asks for or what was done, by type: "3×8 @ 20kg", "3×45s", "30min 5km", "8×20s/10s".

    `implements` 2: the load is the weight of each of a pair ("3×10 @ 20kg each hand").
    """
    if exercise_type == "hold":
        return sets_reps(sets, _as_list(hold_sec), "s")
    if exercise_type == "duration":
        parts = [f"{number(duration_min)}min"] if duration_min else []
        if distance:
            shown = convert_distance(distance, from_unit=distance_unit, to_unit=units.distance)
            parts.append(f"{number(shown)}{units.distance}")
        return " ".join(parts)
    if exercise_type == "intervals":
        if not rounds:
            return ""
        work = f"{work_sec}s" if work_sec else "?"
        return f"{rounds}×{work}/{rest_sec}s" if rest_sec is not None else f"{rounds}×{work}"
    return sets_reps(sets, _as_list(reps)) + loads(
        _as_list(load_each), from_unit=load_unit, units=units, implements=implements
    )


def message_line(number: int, exercise: Mapping[str, Any]) -> str:
    """One exercise of a workout as a line of the day's message, by the one rendering (`exercise_prescription`,
    `exercise_rest`): "1. Dumbbell Row: 3×10 @ 16kg each hand (rest 90s)"."""
    name = exercise.get("exercise_name") or exercise.get("name") or "Exercise"
    rest = exercise_rest(exercise)
    text = " ".join(
        part for part in (exercise_prescription(exercise), f"(rest {rest})" if rest else "") if part
    )
    return f"{number}. {name}" + (f": {text}" if text else "")


def message_lines(workout: Mapping[str, Any]) -> list[str]:
    """The workout's exercises in order, one `message_line` each."""
    exercises = sorted(workout.get("exercises") or [], key=lambda item: item.get("order") or 0)
    return [message_line(number, exercise) for number, exercise in enumerate(exercises, start=1)]


# --- Logs -----------------------------------------------------------------------------------------------------
def _entry_done(entry: WorkoutLogEntry, units: Units, *, implements: int = 1) -> str:
    return prescription(
        exercise_type=entry.exercise_type,
        units=units,
        sets=entry.actual_sets,
        reps=entry.actual_reps,
        load_each=entry.actual_load_each,
        load_unit=entry.load_unit,
        hold_sec=entry.actual_hold_sec,
        duration_min=entry.actual_duration_min,
        distance=entry.actual_distance,
        distance_unit=entry.distance_unit,
        rounds=entry.actual_rounds,
        work_sec=entry.actual_work_sec,
        rest_sec=entry.target_rest_sec,
        implements=implements,
    )


def _entry_target(entry: WorkoutLogEntry, units: Units) -> str:
    return prescription(
        exercise_type=entry.exercise_type,
        units=units,
        sets=entry.target_sets,
        reps=entry.target_reps,
        load_each=entry.target_load_each,
        load_unit=entry.load_unit,
        hold_sec=entry.target_hold_sec,
        duration_min=entry.target_duration_min,
        distance=entry.target_distance,
        distance_unit=entry.distance_unit,
        rounds=entry.target_rounds,
        work_sec=entry.target_work_sec,
        rest_sec=entry.target_rest_sec,
    )


def log_entry(entry: WorkoutLogEntry, units: Units) -> str:
    """ "Goblet Squat 3×10/9/8 @ 20kg (target 3×10 @ 20kg) RPE 8"; the target only when it differs.

    A dumbbell pair's load reads "@ 20kg each hand" (the target's is in the same terms)."""
    if entry.skipped:
        return f"{entry.exercise_name} skipped"
    hands = hands_loaded(name=entry.exercise_name, slug=entry.exercise_slug)
    pair = hands == 2
    done = _entry_done(entry, units, implements=hands)
    target = _entry_target(entry, units)
    text = f"{entry.exercise_name} {done}".rstrip() if done else entry.exercise_name
    if target and target != (_entry_done(entry, units) if pair else done):
        text += f" (target {target})"
    if entry.rpe is not None:
        text += f" RPE {number(entry.rpe)}"
    return text


# A log whose first and last sets were written minutes apart was written down at once, after the session: its
# span is no session length ("Push Day (0min)"), so none is shown.
TIMED_SESSION_MIN = 5


def workout_log(log: WorkoutLog, units: Units) -> str:
    """ "Mon 14 Nov Push Day (45min): Bench Press 3×8 @ 60kg RPE 8; Plank 3×45s"."""
    title = f" {log.title}" if log.title else ""
    minutes = ""
    took = round((log.completed_at - log.started_at).total_seconds() / 60) if log.started_at else 0
    if took >= TIMED_SESSION_MIN:
        minutes = f" ({took}min)"
    entries = "; ".join(log_entry(entry, units) for entry in log.entries.all())
    notes = f" | notes: {log.notes}" if log.notes else ""
    return f"{day(log.completed_at, units)}{title}{minutes}: {entries or 'no exercises'}{notes}"


def format_workout_history(
    logs: Sequence[WorkoutLog], units: Units, *, days_back: int | None, limit: int
) -> str:
    scope = f' days_back="{days_back}"' if days_back is not None else ""
    if not logs:
        empty = (
            f"No workouts logged in the last {days_back} days." if days_back else "No workouts logged yet."
        )
        return f"<workout_history{scope}>{empty}</workout_history>"
    more = f' limit="{limit}"' if len(logs) >= limit else ""
    lines = "\n".join(workout_log(log, units) for log in logs)
    return f'<workout_history{scope} count="{len(logs)}"{more}>\n{lines}\n</workout_history>'


# --- Profile, settings, locations -----------------------------------------------------------------------------
def _height(cm: float, units: Units) -> str:
    if units.distance == "mi":
        inches = round(cm / 2.54)
        return f"{inches // 12}'{inches % 12}\""
    return f"{number(cm)}cm"


def body_stats_lines(profile: UserProfile | None, units: Units, *, today: date) -> list[str]:
    """ "Sex: male", "Age: 31", … for what the profile knows (docs/contracts.md §8.2 (user data block) `<body_stats>`)."""
    if profile is None:
        return []
    lines = []
    if profile.sex and profile.sex != "unspecified":
        lines.append(f"Sex: {profile.sex}")
    if profile.birth_year:
        lines.append(f"Age: {today.year - profile.birth_year}")
    if profile.height_cm:
        lines.append(f"Height: {_height(profile.height_cm, units)}")
    if profile.weight_kg:
        lines.append(f"Weight: {weight(profile.weight_kg, from_unit='kg', units=units)}{units.weight}")
    if profile.body_fat_pct:
        lines.append(f"Body Fat: {number(profile.body_fat_pct)}%")
    lines.append(f"Experience: {profile.experience_level}")
    if profile.injuries:
        lines.append(f"Injuries: {' '.join(profile.injuries.split())}")
    if profile.limitations:
        lines.append(f"Limitations: {', '.join(profile.limitations)}")
    return lines


def format_user_profile(profile: UserProfile | None, units: Units, *, today: date) -> str:
    if profile is None:
        return "<user_profile>No profile saved yet.</user_profile>"
    name = f"Name: {profile.display_name}\n" if profile.display_name else ""
    return f"<user_profile>\n{name}{chr(10).join(body_stats_lines(profile, units, today=today))}\n</user_profile>"


def format_user_settings(settings: UserSettings, units: Units) -> str:
    saved = "" if settings.pk else " (defaults, never saved)"
    return (
        f"<user_settings>Weight: {settings.weight_unit} · Distance: {settings.distance_unit} · "
        f"Time zone: {settings.timezone}{saved}</user_settings>"
    )


def _weights_for(location: Location, slug: str, units: Units) -> str:
    values = (location.available_weights_kg or {}).get(slug) or []
    if not values:
        return ""
    shown = {weight(float(value), from_unit="kg", units=units): float(value) for value in values}
    return f"{', '.join(sorted(shown, key=shown.__getitem__))}{units.weight}"


class EquipmentLike(Protocol):
    """What the location formatters read of a piece of equipment (an `Equipment` or a selector's plain item)."""

    @property
    def slug(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def category(self) -> str: ...


def location_equipment(location: Location) -> Iterable[EquipmentLike]:
    """The location's equipment, ordered by category and name (prefetched by `selectors.list_locations`)."""
    return location.equipment.all()


def equipment_lines(location: Location, units: Units) -> list[str]:
    """ "  - Dumbbells (free_weights): 5, 10, 15kg" / "  - Pull-up Bar" (docs/contracts.md §8.2 (user data block))."""
    lines = []
    for item in location_equipment(location):
        available = _weights_for(location, item.slug, units)
        lines.append(f"  - {item.name} ({item.category}): {available}" if available else f"  - {item.name}")
    return lines


def location_block(location: Location | None, units: Units) -> str:
    """The `<current_location>` block of the user data XML."""
    if location is None:
        return "<current_location>\nNo current location set: assume bodyweight only.\n</current_location>"
    equipment = equipment_lines(location, units)
    listing = "Equipment:\n" + "\n".join(equipment) if equipment else "Equipment: none (bodyweight only)"
    return f"<current_location>\nLocation: {location.name}\n{listing}\n</current_location>"


def location_line(location: Location, units: Units) -> str:
    """ "Gym (current): Barbell, Dumbbells 2.5–50kg, …" on one line."""
    names = []
    for item in location_equipment(location):
        available = _weights_for(location, item.slug, units)
        names.append(f"{item.name} [{available}]" if available else item.name)
    current = " (current)" if location.is_current else ""
    return f"- {location.name}{current}: {', '.join(names) if names else 'bodyweight only'}"


def format_all_locations(locations: Sequence[Location], units: Units) -> str:
    if not locations:
        return "<locations>No locations saved: assume bodyweight only.</locations>"
    return (
        "<locations>\n"
        + "\n".join(location_line(location, units) for location in locations)
        + "\n</locations>"
    )


def format_current_location(location: Location | None, units: Units) -> str:
    return location_block(location, units)


def zone_name(tz: tzinfo) -> str:
    """ "Europe/Berlin" for a zoneinfo zone, "UTC" for UTC."""
    return str(getattr(tz, "key", None) or tz.tzname(None) or "UTC")


def today_block(today: date, timezone_name: str) -> str:
    """The `<today>` section of the user data: the user's date, weekday, time zone and the week it is in.

    Only the date, never the time of day, so the block changes once a day and the prompt cache holds within it.
    """
    monday = today - timedelta(days=today.weekday())
    return (
        f"<today>\nDate: {today:%A} {today.day} {today:%B %Y} ({today.isoformat()})\n"
        f"Time zone: {timezone_name}\n"
        f"This week: {day(monday)} – {day(monday + timedelta(days=6))}\n</today>"
    )


def user_data_xml(
    *,
    profile: UserProfile | None,
    settings: UserSettings,
    locations: Sequence[Location],
    units: Units,
    today: date,
) -> str:
    """The `<user_data>` block of docs/contracts.md §8.2 (user data block): today, units, body stats, current and
    other locations."""
    current = next((location for location in locations if location.is_current), None)
    others = [location for location in locations if not location.is_current]
    stats = body_stats_lines(profile, units, today=today) or ["Unknown: no profile saved yet."]
    if profile is not None and profile.display_name:
        stats.insert(0, f"Name: {profile.display_name}")  # what the coach calls them
    parts = [
        "<user_data>",
        today_block(today, zone_name(units.tz)),
        "",
        f"<unit_preferences>\nWeight: {settings.weight_unit}\nDistance: {settings.distance_unit}\n</unit_preferences>",
        "",
        "<body_stats>\n" + "\n".join(stats) + "\n</body_stats>",
        "",
        location_block(current, units),
    ]
    if others:
        lines = "\n".join(location_line(location, units) for location in others)
        parts += ["", f"<other_locations>\n{lines}\n</other_locations>"]
    parts.append("</user_data>")
    return "\n".join(parts)


# --- Goals and distribution -----------------------------------------------------------------------------------
def _goal_row(row: ShareRow, descriptions: Mapping[str, str]) -> str:
    target = f"target {percent(row.target)}" if row.target else "no target"
    described = f" — {descriptions[row.name]}" if descriptions.get(row.name) else ""
    return f"{row.name}: {target}, actual {percent(row.actual)}, debt {signed_percent(row.debt)}{described}"


def _goals_text(
    tag: str,
    goals: Sequence[CategoryGoal] | Sequence[MuscleGoal],
    distribution: Distribution,
    descriptions: Mapping[str, str],
) -> str:
    """Goals with the window's actual share and debt, most under-trained first."""
    open_tag = f'<{tag} window_days="{distribution.window_days}">'
    if not goals:
        lines = [f"No {tag.replace('_', ' ')} set."]
        if distribution.entry_count:
            lines.append("Trained in the window (share of volume):")
            lines += [f"{row.name}: {percent(row.actual)}" for row in distribution.rows if row.actual]
    elif not distribution.entry_count:
        lines = [
            f"No training logged in the last {distribution.window_days} days: every debt equals its target."
        ]
        lines += [
            f"{row.name}: target {percent(row.target)}"
            + (f" — {descriptions[row.name]}" if descriptions.get(row.name) else "")
            for row in distribution.rows
        ]
    else:
        lines = [_goal_row(row, descriptions) for row in distribution.rows]
    return open_tag + "\n" + "\n".join(lines) + f"\n</{tag}>"


def format_category_goals(goals: Sequence[CategoryGoal], distribution: Distribution) -> str:
    """ "strength: target 40%, actual 55%, debt -15% — Compound lifts" per category, most under-trained first."""
    descriptions = {goal.category: goal.description for goal in goals if goal.description}
    return _goals_text("category_goals", goals, distribution, descriptions)


def format_muscle_goals(goals: Sequence[MuscleGoal], distribution: Distribution) -> str:
    return _goals_text("muscle_goals", goals, distribution, {})


def format_exercise_distribution(muscles: Distribution, categories: Distribution) -> str:
    """Where the window's volume went, per muscle and per goal category (with debt where goals exist)."""
    tag = f'<exercise_distribution window_days="{muscles.window_days}" entries="{muscles.entry_count}">'
    if not muscles.entry_count:
        return f"{tag}No training logged in the last {muscles.window_days} days.</exercise_distribution>"

    def line(rows: Iterable[Any]) -> str:
        shown = sorted(
            (row for row in rows if row.actual or row.target), key=lambda row: (-row.actual, row.name)
        )
        return ", ".join(
            f"{row.name} {percent(row.actual)}" + (f" (target {percent(row.target)})" if row.target else "")
            for row in shown
        )

    return (
        f"{tag}\nMuscles: {line(muscles.rows)}\nCategories: {line(categories.rows)}\n</exercise_distribution>"
    )


# --- Preferences ------------------------------------------------------------------------------------------
def preference_line(preference: Preference, units: Units) -> str:
    """ "- [id] exercise: No burpees → Never program burpees (excludes: burpee; until Mon 14 Nov 18:00)"."""
    text = f"- [{preference.id}] {preference.category}: {preference.description}"
    if preference.guidance:
        text += f" → {preference.guidance}"
    extras = []
    if preference.exclude_exercises:
        extras.append(f"excludes exercises: {', '.join(preference.exclude_exercises)}")
    if preference.exclude_equipment:
        extras.append(f"excludes equipment: {', '.join(preference.exclude_equipment)}")
    if preference.expires_at:
        local = preference.expires_at.astimezone(units.tz)
        extras.append(f"until {day(local, units)} {local:%H:%M}")
    if preference.delete_after_use:
        extras.append("next workout only")
    return f"{text} ({'; '.join(extras)})" if extras else text


def format_active_preferences(preferences: Sequence[Preference], units: Units) -> str:
    if not preferences:
        return "<preferences>No active preferences.</preferences>"
    temporary = [
        p for p in preferences if p.preference_type == "temporary" or p.expires_at or p.delete_after_use
    ]
    permanent = [p for p in preferences if p not in temporary]
    lines = []
    if temporary:
        lines += ["Temporary:", *(preference_line(p, units) for p in temporary)]
    if permanent:
        lines += ["Permanent:", *(preference_line(p, units) for p in permanent)]
    return "<preferences>\n" + "\n".join(lines) + "\n</preferences>"


# --- Current workout --------------------------------------------------------------------------------------
# The fields a prescription reads, and the spellings a stored or planned workout dict may carry them in.
_PRESCRIPTION_KEYS = frozenset(
    {"exercise_name", "name", "exercise_type", "type", "sets", "reps", "load", "load_each", "load_unit"}
    | {"implements", "load_per_hand", "hold_sec", "duration_min", "distance", "distance_unit", "target_pace"}
    | {"rounds", "work_sec", "rest_sec", "group", "completed", "order", "id", "equipment"}
)


def workout_exercise(exercise: StoredExercise | Mapping[str, Any]) -> StoredExercise | None:
    """The typed exercise of a workout dict (seed 000 or 001 spellings: `name`, `type`, a scalar `load` or
    `load_kg`, `lbs`), as far as a prescription reads it; None when it is no exercise."""
    if isinstance(exercise, StoredExercise):
        return exercise
    data = {key: value for key, value in exercise.items() if key in _PRESCRIPTION_KEYS}
    if not isinstance(data.get("equipment"), list):
        data.pop("equipment", None)  # read for "band" only; a stray shape must not cost the prescription
    if "load_kg" in exercise and data.get("load") is None and data.get("load_each") is None:
        data["load"] = exercise["load_kg"]
    data["exercise_name"] = str(data.pop("exercise_name", None) or data.pop("name", None) or "?")
    data["exercise_type"] = str(data.pop("exercise_type", None) or data.pop("type", None) or "reps")
    try:
        return StoredExercise.model_validate(data)
    except ValidationError:
        return None


def in_round_group(exercise: Mapping[str, Any]) -> bool:
    """Whether the exercise is a member of a circuit, superset or giant set (done once per group round)."""
    group = exercise.get("group")
    return isinstance(group, Mapping) and group.get("type") in ROUND_GROUP_TYPES


def exercise_prescription(exercise: StoredExercise | Mapping[str, Any], units: Units | None = None) -> str:
    """What one exercise of a workout asks for: "3×10 @ 20kg each hand" (a pair), "3×10 @ 25kg" (one),
    "3×45s", "30min 5km @ 5:30/km", "8×20s/10s"; a circuit/superset member, done once per round, without its
    "1×" ("10 @ 20kg"), intervals with the rest before the next move ("40s work, 20s rest").

    The one rendering of a prescription (docs/architecture.md "One rendering"): the model's context
    and tool results, the session admin and, mirrored rule for rule, the demo page's `chat.js`. Without `units`
    the exercise's own units."""
    typed = workout_exercise(exercise)
    if typed is None:
        return ""
    load_unit = typed.load_unit if typed.load_unit in ("kg", "lb") else None
    distance_unit = typed.distance_unit if typed.distance_unit in ("km", "mi") else None
    if units is None:
        units = Units(weight=load_unit or "kg", distance=distance_unit or "km")
    kind = typed.exercise_type
    once = typed.once_per_round
    details = prescription(
        exercise_type=kind,
        units=units,
        sets=typed.sets,
        reps=typed.reps,
        load_each=typed.load_each,
        load_unit=load_unit or units.weight,
        hold_sec=typed.hold_sec,
        duration_min=typed.duration_min,
        distance=typed.distance,
        distance_unit=distance_unit or units.distance,
        rounds=typed.rounds,
        work_sec=typed.work_sec,
        rest_sec=typed.rest_sec if kind == "intervals" and not once else None,
        implements=typed.load_implements,
    )
    if kind == "duration" and typed.target_pace:
        details = f"{details} @ {typed.target_pace}".strip()
    if once and (typed.sets == 1 if kind in ("reps", "hold") else typed.rounds == 1):
        details = details.removeprefix("1×")
    if once and kind == "intervals" and details and typed.rest_sec:
        details += f" work, {typed.rest_sec}s rest"  # the pause before the next move: the user times both
    return details


def exercise_rest(exercise: StoredExercise | Mapping[str, Any]) -> str:
    """ "90s": the rest after each set of a reps or hold exercise; "" for other types and for a circuit or
    superset member, whose rest is the pause before the next member (intervals say theirs in the prescription)."""
    typed = workout_exercise(exercise)
    if typed is None or typed.rest_sec is None or typed.once_per_round:
        return ""
    return f"{typed.rest_sec}s" if typed.exercise_type in ("reps", "hold") else ""


def exercise_card_text(exercise: StoredExercise | Mapping[str, Any]) -> str:
    """The whole prescription on one line: "3×10 @ 20kg each hand · rest 90s", "3×10 · bodyweight · rest 60s",
    "3×15 · band · rest 45s" (no load, a band's tension), "12 @ 25kg" (a circuit member): the workout tools'
    exercise lines and the demo page's cards (`chat.js` mirrors this rule; a test runs both on the same
    exercises)."""
    typed = workout_exercise(exercise)
    if typed is None:
        return ""
    parts = [exercise_prescription(typed)]
    if typed.exercise_type == "reps" and not any(typed.load_each or ()):
        parts.append("band" if any("band" in slug for slug in typed.equipment or ()) else "bodyweight")
    rest = exercise_rest(typed)
    if rest:
        parts.append(f"rest {rest}")
    return " · ".join(part for part in parts if part)


def group_header(group: Mapping[str, Any]) -> str:
    """ "circuit c1, 3 rounds, rest 60s between rounds": a group as its first exercise introduces it."""
    text = f"{group.get('type')} {group.get('id')}"
    if group.get("rounds"):
        text += f", {group['rounds']} {'round' if group['rounds'] == 1 else 'rounds'}"
    if group.get("rest_between_rounds_sec"):
        text += f", rest {group['rest_between_rounds_sec']}s between rounds"
    return text


def _shares(items: Any, key: str) -> str:
    listed = items if isinstance(items, list) else []
    return ", ".join(
        f"{item.get(key, '?')} {item['share'] * 100:.0f}%"
        for item in listed
        if isinstance(item, Mapping) and isinstance(item.get("share"), int | float)
    )


def _admin_group(group: Any) -> str:
    if not isinstance(group, Mapping):
        return ""
    text = (
        f"{group.get('type', '')} · {group.get('name') or group.get('id', '')} #{group.get('position', '?')}"
    )
    if group.get("rounds"):
        text += f", {group['rounds']} rounds"
    if group.get("rest_between_rounds_sec"):
        text += f", rest {group['rest_between_rounds_sec']}s between rounds"
    return text


def exercise_cells(exercise: Mapping[str, Any], position: int) -> dict[str, str]:
    """One exercise of a workout artifact as the session admin's table shows it (`sessions_app.admin_registry`
    asks through `register_exercise_format`): order, name, kind, prescription, rest, muscles, group, equipment."""
    rest = exercise_rest(exercise)
    return {
        "order": str(exercise.get("order", position)),
        "name": str(exercise.get("exercise_name", "?")),
        "kind": str(exercise.get("exercise_type", "")),
        "prescription": exercise_prescription(exercise) or "—",
        "rest": rest,
        "muscles": _shares(exercise.get("muscles_utilized"), "muscle"),
        "group": _admin_group(exercise.get("group")),
        "equipment": ", ".join(str(item) for item in exercise.get("equipment") or [] if item),
    }


def _logged_prescription(exercise: Mapping[str, Any], entry: WorkoutLogEntry, units: Units) -> str:
    """What was done of a workout exercise, read as its prescription is (its log entry's actuals in its place)."""
    if entry.skipped:
        return "skipped"
    done = {field: getattr(entry, f"actual_{field}") for field in PERFORMANCE_FIELDS}
    units_of_entry = {"load_unit": entry.load_unit, "distance_unit": entry.distance_unit}
    return exercise_prescription({**exercise, **done, **units_of_entry, "target_pace": None}, units)


def workout_exercise_line(
    exercise: Mapping[str, Any], position: int, units: Units, logged: WorkoutLogEntry | None = None
) -> str:
    """ "✓ 1. Push-Up (reps) 3×10 @ 20kg" from a workout dict's exercise (seed 000 or 001 spellings); a done
    exercise with its log entry (`logged`) reads what was done, and the plan beside it when that differs:
    "✓ 1. Dumbbell Bench Press (reps) 3×8 @ 27.5kg each hand (planned 3×10 @ 25kg each hand) RPE 8"."""
    kind = str(exercise.get("exercise_type") or exercise.get("type") or "reps")
    name = exercise.get("exercise_name") or exercise.get("name") or "?"
    details = exercise_prescription(exercise, units)
    if logged is not None:
        done = _logged_prescription(exercise, logged, units)
        details = done if done == details else f"{done} (planned {details})".lstrip()
        details += f" RPE {number(logged.rpe)}" if logged.rpe is not None else ""
    status = "✓" if exercise.get("completed") else "○"
    group = exercise.get("group") or {}
    in_group = f" [{group_header(group)}]" if isinstance(group, Mapping) and group.get("id") else ""
    return f"{status} {position}. {name} ({kind}) {details}".rstrip() + in_group


def format_current_workout(
    current: CurrentWorkout | None, units: Units, *, logged: Mapping[str, WorkoutLogEntry] | None = None
) -> str:
    """The `<current_workout>` block: progress, then one line per exercise; an exercise ticked off with its
    log entry in `logged` (by its `log_entry_id`) reads what was logged (`workout_exercise_line`)."""
    exercises = list((current.workout or {}).get("exercises") or []) if current else []
    if current is None or not exercises:
        return "<current_workout>No active workout.</current_workout>"
    title = current.workout.get("title") or "Workout"
    done = sum(1 for exercise in exercises if exercise.get("completed"))
    entries = logged or {}
    lines = [
        workout_exercise_line(
            exercise,
            int(exercise.get("order") or index),
            units,
            entries.get(str(exercise.get("log_entry_id"))) if exercise.get("completed") else None,
        )
        for index, exercise in enumerate(exercises, start=1)
    ]
    return (
        f'<current_workout title="{title}" artifact_id="{current.artifact_id}">\n'
        f"Progress: {done}/{len(exercises)}\n" + "\n".join(lines) + "\n</current_workout>"
    )


# --- Calendar, plans, milestones --------------------------------------------------------------------------
# A day's message is the whole workout as the user receives it; its exercises are listed above it, so the
# schedule shows the message on one line, cut at this many characters (a week stays a few thousand characters).
MESSAGE_PREVIEW_CHARS = 300
# A plan's day-by-day layout is shown for this many weeks from the current one.
PLAN_WEEKS_SHOWN = 2


def scheduled_line(item: ScheduledWorkout, units: Units, *, today: date | None = None) -> str:
    """What one calendar day holds: "Thu 13 Nov (today) 18:00 Upper Body (45min) [scheduled, workout ready]
    plan: Base id=…", then one indented line per planned exercise ("  - Goblet Squat 3×10 @ 16kg") and the
    day's message on one line."""
    when = day(item.scheduled_date) + _relative_day(item.scheduled_date, today)
    when += f" {item.scheduled_time:%H:%M}" if item.scheduled_time else ""
    minutes = f" ({item.duration_minutes}min)" if item.duration_minutes else ""
    plan = f" plan: {item.plan.name}" if item.plan_id and item.plan else ""
    notes = f" — {' '.join(item.notes.split())}" if item.notes else ""
    lines = [f"{when} {item.title}{minutes} [{day_status(item)}]{plan}{notes} id={item.id}"]
    exercises = (item.workout or {}).get("exercises") if isinstance(item.workout, dict) else None
    for exercise in exercises if isinstance(exercises, list) else []:
        if isinstance(exercise, Mapping):
            lines.append(f"  - {planned_exercise(exercise, units)}")
    if item.message.strip():
        lines.append(f"  message: {_one_line(item.message, MESSAGE_PREVIEW_CHARS)}")
    if item.status == "scheduled" and item.preparation == Preparation.FAILED:
        lines.append(f"  {REDO_FAILED_DAY}")
    return "\n".join(lines)


# Under a day the week chain could not prepare: the coach is the only way the user hears of it.
# prepare_week for the day's week redoes every day not ready in one run, each drafted again as things are now;
# with a workout_id it redoes that day alone.
REDO_FAILED_DAY = (
    "not prepared: tell the user which day and why, and offer to prepare it again (prepare_week for its week "
    "redoes only the days not ready; the others are kept)"
)


def day_status(item: ScheduledWorkout) -> str:
    """ "completed", "skipped", "cancelled"; for a day still to come "scheduled", with where the week chain
    stands when it prepares it: "workout being prepared", "workout ready", "preparation failed: <reason>"."""
    if item.status != "scheduled":
        return str(item.status)
    if item.preparation == Preparation.PENDING:
        return "scheduled, workout being prepared"
    if item.preparation == Preparation.READY:
        return "scheduled, workout ready"
    if item.preparation == Preparation.FAILED:
        reason = " ".join((item.preparation_error or "unknown reason").split())
        return f"scheduled, preparation failed: {reason}"
    return "scheduled"


def planned_exercise(exercise: Mapping[str, Any], units: Units) -> str:
    """ "Goblet Squat 3×10 @ 16kg" for an exercise of a stored workout dict, in the user's units."""
    name = str(exercise.get("exercise_name") or exercise.get("name") or "?")
    return f"{name} {exercise_prescription(exercise, units)}".rstrip()


def _relative_day(value: date, today: date | None) -> str:
    if today is None:
        return ""
    return {0: " (today)", 1: " (tomorrow)"}.get((value - today).days, "")


def _one_line(text: str, limit: int) -> str:
    """The text's lines joined by " / " (whitespace collapsed), cut at `limit` characters with "…"."""
    joined = " / ".join(" ".join(line.split()) for line in text.splitlines() if line.strip())
    return joined if len(joined) <= limit else joined[: limit - 1].rstrip() + "…"


def format_scheduled_workouts(
    items: Sequence[ScheduledWorkout], units: Units, *, days_ahead: int, today: date | None = None
) -> str:
    tag = f'<schedule days_ahead="{days_ahead}">'
    if not items:
        return f"{tag}No workouts scheduled in the next {days_ahead} days.</schedule>"
    return (
        f"{tag}\n" + "\n".join(scheduled_line(item, units, today=today) for item in items) + "\n</schedule>"
    )


def plan_line(plan: WorkoutPlan, *, scheduled: int, completed: int, today: date | None = None) -> str:
    """ "4-Week Strength [active] 4 weeks from Mon 14 Nov 2025, goal: …, sessions 3/12 done id=…", then for an
    active or draft plan its days, one line per week from the current one ("  Week 2 (build, RPE 7): Mon 17 Nov
    Push, Wed 19 Nov Pull")."""
    start = f" from {day(plan.start_date, with_year=True)}" if plan.start_date else ""
    goal = f", goal: {plan.goal}" if plan.goal else ""
    weeks = [week for week in (plan.plan or {}).get("weeks") or [] if isinstance(week, Mapping)]
    days = sum(len(week.get("days") or []) for week in weeks)
    layout = f", {days} planned day{'s' if days != 1 else ''}" if days else ""
    sessions = f", sessions {completed}/{scheduled} done" if scheduled else ""
    location = ((plan.plan or {}).get("location") or {}).get("name")
    where = f", for {location}" if location else ""
    line = (
        f"- {plan.name} [{plan.status}] {plan.weeks} weeks{start}{goal}{where}{layout}{sessions} id={plan.id}"
    )
    line += "".join(_week_preparation(week) for week in weeks)
    if plan.status not in ("active", "draft") or not days:
        return line
    return "\n".join([line, *_plan_week_lines(weeks, today)])


def _week_preparation(week: Mapping[str, Any]) -> str:
    """A plan week the week chain could not (fully) prepare, with the reason (set by record_week_preparation)."""
    preparation = week.get("preparation") or {}
    if preparation.get("status") not in ("failed", "partly_failed"):
        return ""
    state = "failed" if preparation["status"] == "failed" else "partly failed"
    return f"\n  week {week.get('week')} preparation {state}: {preparation.get('reason') or 'unknown reason'}"


def _plan_week_lines(weeks: Sequence[Mapping[str, Any]], today: date | None) -> list[str]:
    """The plan's days from the week `today` falls in (the first week before the plan starts), for
    PLAN_WEEKS_SHOWN weeks, and how many weeks follow."""
    first = 0
    if today is not None:
        for index, week in enumerate(weeks):
            dates = [_plan_date(d) for d in week.get("days") or [] if isinstance(d, Mapping)]
            if any(found is not None and found >= today for found in dates):
                first = index
                break
        else:
            first = max(len(weeks) - 1, 0)
    shown = weeks[first : first + PLAN_WEEKS_SHOWN]
    lines = []
    for position, week in enumerate(shown, start=first + 1):
        number = week.get("week") or position
        phase = ", ".join(
            part
            for part in (
                "deload" if week.get("deload") else str(week.get("phase") or ""),
                f"RPE {week['target_rpe']}" if week.get("target_rpe") else "",
            )
            if part
        )
        entries = [_plan_day(d) for d in week.get("days") or [] if isinstance(d, Mapping)]
        label = f"Week {number}" + (f" ({phase})" if phase else "")
        lines.append(f"  {label}: {', '.join(entries) if entries else 'no sessions'}")
    rest = len(weeks) - first - len(shown)
    if rest > 0:
        lines.append(f"  … {rest} more week{'s' if rest != 1 else ''}")
    return lines


def _plan_date(entry: Mapping[str, Any]) -> date | None:
    try:
        return date.fromisoformat(str(entry.get("date")))
    except ValueError:
        return None


def _plan_day(entry: Mapping[str, Any]) -> str:
    """ "Mon 17 Nov Push (60min)", or "day 2 Push" for an undated day."""
    found = _plan_date(entry)
    when = day(found) if found is not None else f"day {entry.get('day') or '?'}"
    minutes = f" ({entry['duration_minutes']}min)" if entry.get("duration_minutes") else ""
    return f"{when} {entry.get('title') or entry.get('session') or 'session'}{minutes}"


def format_workout_plans(
    plans: Sequence[WorkoutPlan],
    counts: Mapping[Any, tuple[int, int]],
    *,
    status: str | None,
    today: date | None = None,
) -> str:
    if not plans:
        which = f"{status} " if status else ""
        return f"<workout_plans>No {which}workout plans.</workout_plans>"
    lines = [
        plan_line(
            plan,
            scheduled=counts.get(plan.id, (0, 0))[0],
            completed=counts.get(plan.id, (0, 0))[1],
            today=today,
        )
        for plan in plans
    ]
    return "<workout_plans>\n" + "\n".join(lines) + "\n</workout_plans>"


def milestone_line(milestone: MilestoneGoal) -> str:
    """ "- Bench press 100 kg: 80/100kg (80%) by Mon 1 Jun 2026 [active] id=…"."""
    unit = milestone.unit or ""
    progress = (
        f" ({percent(milestone.current_value / milestone.target_value)})"
        if milestone.target_value and not math.isclose(milestone.target_value, 0)
        else ""
    )
    deadline = f" by {day(milestone.deadline, with_year=True)}" if milestone.deadline else ""
    metric = f" {milestone.metric}" if milestone.metric else ""
    return (
        f"- {milestone.title}:{metric} {number(milestone.current_value)}/{number(milestone.target_value)}{unit}"
        f"{progress}{deadline} [{milestone.status}] id={milestone.id}"
    )


def format_milestone_goals(milestones: Sequence[MilestoneGoal], *, status: str | None) -> str:
    if not milestones:
        which = f"{status} " if status else ""
        return f"<milestone_goals>No {which}milestone goals.</milestone_goals>"
    return (
        "<milestone_goals>\n"
        + "\n".join(milestone_line(item) for item in milestones)
        + "\n</milestone_goals>"
    )
