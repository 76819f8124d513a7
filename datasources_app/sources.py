"""The data-source registry (docs/contracts.md §10 (data sources)): what the initializer and `fetch_data` can load.

A source fetches raw data for one user with typed, validated parameters and formats it as compact text
in the user's units (datasources_app.formatters). `fetch_many` runs several fetches concurrently.
"""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

from django.db import connection, connections, transaction
from django.db.models import Count, Q
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from datasources_app import distribution, formatters, selectors
from datasources_app.distribution import Distribution
from datasources_app.formatters import Units
from datasources_app.models import (
    CategoryGoal,
    CurrentWorkout,
    MilestoneGoal,
    MuscleGoal,
    ScheduledWorkout,
    ScheduleStatus,
    UserProfile,
    UserSettings,
    WorkoutLog,
    WorkoutLogEntry,
    WorkoutPlan,
)

logger = logging.getLogger(__name__)

MAX_WORKERS = 8


class UnknownSourceError(KeyError):
    """A source name that is not registered; the message lists the valid ones."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown data source"


class InvalidSourceParamsError(ValueError):
    """Parameters a source does not accept; the message names every bad field."""


# --- Parameters ---------------------------------------------------------------------------------------------
class SourceParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class NoParams(SourceParams):
    pass


class WorkoutHistoryParams(SourceParams):
    limit: int = Field(10, ge=1, le=100, description="How many workouts, newest first.")
    days_back: int | None = Field(None, ge=1, le=3650, description="Only workouts of the last N days.")


class WindowParams(SourceParams):
    days: int = Field(
        distribution.DEFAULT_WINDOW_DAYS, ge=1, le=365, description="Days of logs the distribution covers."
    )


class ScheduleParams(SourceParams):
    days_ahead: int = Field(14, ge=0, le=366, description="How many days ahead of today to show.")


class PlanParams(SourceParams):
    status: Literal["draft", "active", "completed", "archived"] | None = Field(
        None, description="Only plans with this status (default: all)."
    )


class MilestoneParams(SourceParams):
    status: Literal["active", "achieved", "abandoned"] | None = Field(
        None, description="Only milestones with this status (default: all)."
    )


# --- The registry ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DataSource:
    """`fetch(user_id, params)` returns raw data carrying whatever `format(raw, units)` needs to render it."""

    name: str
    display_name: str  # shown to the user in the SSE `knowledge` event
    description: str  # written for the initializer model
    params: type[SourceParams]
    fetch: Callable[[uuid.UUID, Any], Any]
    format: Callable[[Any, Units], str]

    def parse_params(self, params: Mapping[str, Any] | None) -> SourceParams:
        """Validated parameters, or InvalidSourceParamsError naming every bad field and what it expects."""
        try:
            return self.params.model_validate(dict(params or {}))
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in item['loc']) or 'params'}: {item['msg']}"
                for item in error.errors()
            )
            accepted = ", ".join(self.params.model_fields) or "none"
            raise InvalidSourceParamsError(
                f"invalid params for {self.name}: {problems} (accepted: {accepted})"
            ) from None


@dataclass(frozen=True)
class FormattedSource:
    source: str
    params: dict[str, Any]
    text: str
    chars: int

    @property
    def tokens(self) -> int:
        """A rough token count (chars / 4), for sizing context."""
        return math.ceil(self.chars / 4)

    @property
    def display_name(self) -> str:
        return get_source(self.source).display_name


@dataclass(frozen=True)
class SourceError:
    """A fetch in `fetch_many` that failed; the others still return."""

    source: str
    params: dict[str, Any]
    error: str


# Raw data of the sources whose formatter needs more than the rows.
@dataclass(frozen=True)
class History:
    logs: list[WorkoutLog]
    days_back: int | None
    limit: int


@dataclass(frozen=True)
class Goals:
    goals: list[CategoryGoal] | list[MuscleGoal]
    distribution: Distribution


@dataclass(frozen=True)
class Schedule:
    items: list[ScheduledWorkout]
    days_ahead: int
    today: date


@dataclass(frozen=True)
class Plans:
    plans: list[WorkoutPlan]
    counts: dict[uuid.UUID, tuple[int, int]]  # plan id → (scheduled sessions, completed sessions)
    status: str | None
    today: date


@dataclass(frozen=True)
class CurrentSession:
    """The current workout and the log entries of its ticked-off exercises (by `log_entry_id`)."""

    current: CurrentWorkout | None
    logged: dict[str, WorkoutLogEntry]


@dataclass(frozen=True)
class Milestones:
    milestones: list[MilestoneGoal]
    status: str | None


def _fetch_profile(user_id: uuid.UUID, params: NoParams) -> tuple[UserProfile | None, date]:
    return selectors.get_profile(user_id=user_id), selectors.local_today(user_id=user_id)


def _fetch_history(user_id: uuid.UUID, params: WorkoutHistoryParams) -> History:
    logs = selectors.workout_history(user_id=user_id, limit=params.limit, days_back=params.days_back)
    return History(logs=logs, days_back=params.days_back, limit=params.limit)


def _fetch_category_goals(user_id: uuid.UUID, params: WindowParams) -> Goals:
    goals = selectors.list_category_goals(user_id=user_id)
    return Goals(
        goals=goals,
        distribution=distribution.category_distribution(user_id=user_id, days=params.days, goals=goals),
    )


def _fetch_muscle_goals(user_id: uuid.UUID, params: WindowParams) -> Goals:
    goals = selectors.list_muscle_goals(user_id=user_id)
    return Goals(
        goals=goals,
        distribution=distribution.muscle_distribution(user_id=user_id, days=params.days, goals=goals),
    )


def _fetch_distribution(user_id: uuid.UUID, params: WindowParams) -> tuple[Distribution, Distribution]:
    window = distribution.training_window(user_id=user_id, days=params.days)
    return (
        distribution.muscle_distribution(user_id=user_id, window=window),
        distribution.category_distribution(user_id=user_id, window=window),
    )


def _fetch_schedule(user_id: uuid.UUID, params: ScheduleParams) -> Schedule:
    today = selectors.local_today(user_id=user_id)
    return Schedule(
        items=selectors.scheduled_workouts(user_id=user_id, days_ahead=params.days_ahead, start=today),
        days_ahead=params.days_ahead,
        today=today,
    )


def _fetch_plans(user_id: uuid.UUID, params: PlanParams) -> Plans:
    plans = selectors.list_workout_plans(user_id=user_id, status=params.status)
    rows = (
        WorkoutPlan.objects.filter(id__in=[plan.id for plan in plans])
        .annotate(
            scheduled=Count("scheduled_workouts"),
            completed=Count(
                "scheduled_workouts", filter=Q(scheduled_workouts__status=ScheduleStatus.COMPLETED)
            ),
        )
        .values_list("id", "scheduled", "completed")
    )
    return Plans(
        plans=plans,
        counts={pk: (scheduled, done) for pk, scheduled, done in rows},
        status=params.status,
        today=selectors.local_today(user_id=user_id),
    )


def _fetch_current_workout(user_id: uuid.UUID, params: NoParams) -> CurrentSession:
    current = selectors.get_current_workout(user_id=user_id)
    workout = current.workout if current is not None and isinstance(current.workout, dict) else {}
    return CurrentSession(
        current=current, logged=selectors.logged_entries_of(user_id=user_id, workout=workout)
    )


def _fetch_milestones(user_id: uuid.UUID, params: MilestoneParams) -> Milestones:
    return Milestones(
        milestones=selectors.list_milestone_goals(user_id=user_id, status=params.status), status=params.status
    )


_SOURCES: tuple[DataSource, ...] = (
    DataSource(
        name="user_profile",
        display_name="Profile",
        description="Body stats (sex, age, height, weight, body fat), experience level, injuries and limitations.",
        params=NoParams,
        fetch=_fetch_profile,
        format=lambda raw, units: formatters.format_user_profile(raw[0], units, today=raw[1]),
    ),
    DataSource(
        name="user_settings",
        display_name="Settings",
        description="Unit preferences (kg/lb, km/mi) and time zone.",
        params=NoParams,
        fetch=lambda user_id, params: selectors.get_settings(user_id=user_id),
        format=formatters.format_user_settings,
    ),
    DataSource(
        name="all_locations",
        display_name="Locations",
        description="Every place the user trains with its equipment and available weights; marks the current one.",
        params=NoParams,
        fetch=lambda user_id, params: selectors.list_locations(user_id=user_id),
        format=formatters.format_all_locations,
    ),
    DataSource(
        name="current_location",
        display_name="Current location",
        description="The location the user is training at now, with its equipment and weights.",
        params=NoParams,
        fetch=lambda user_id, params: selectors.current_location(user_id=user_id),
        format=formatters.format_current_location,
    ),
    DataSource(
        name="workout_history",
        display_name="Workout history",
        description=(
            "Recent logged workouts, newest first, with sets, reps, loads and RPE per exercise "
            "(targets shown where they differ). Params: limit (default 10), days_back."
        ),
        params=WorkoutHistoryParams,
        fetch=_fetch_history,
        format=lambda raw, units: formatters.format_workout_history(
            raw.logs, units, days_back=raw.days_back, limit=raw.limit
        ),
    ),
    DataSource(
        name="category_goals",
        display_name="Goals",
        description=(
            "The user's goal categories (strength, hypertrophy, …) with target weights, the share each got "
            "in recent training and the debt (positive = under-trained). Params: days (default 14)."
        ),
        params=WindowParams,
        fetch=_fetch_category_goals,
        format=lambda raw, units: formatters.format_category_goals(raw.goals, raw.distribution),
    ),
    DataSource(
        name="muscle_goals",
        display_name="Muscle goals",
        description=(
            "Target weight per muscle, each muscle's share of recent training and its debt "
            "(positive = under-trained). Params: days (default 14)."
        ),
        params=WindowParams,
        fetch=_fetch_muscle_goals,
        format=lambda raw, units: formatters.format_muscle_goals(raw.goals, raw.distribution),
    ),
    DataSource(
        name="exercise_distribution",
        display_name="Training balance",
        description="How recent training volume split over muscles and goal categories. Params: days (default 14).",
        params=WindowParams,
        fetch=_fetch_distribution,
        format=lambda raw, units: formatters.format_exercise_distribution(*raw),
    ),
    DataSource(
        name="active_preferences",
        display_name="Preferences",
        description=(
            "The user's standing and temporary preferences (dislikes, injuries to work around, exclusions) "
            "with their ids for delete_preference. Expired ones are left out."
        ),
        params=NoParams,
        fetch=lambda user_id, params: selectors.active_preferences(user_id=user_id),
        format=formatters.format_active_preferences,
    ),
    DataSource(
        name="current_workout_session",
        display_name="Current workout",
        description="The workout the user is doing now: its exercises in order and which are done.",
        params=NoParams,
        fetch=_fetch_current_workout,
        format=lambda raw, units: formatters.format_current_workout(raw.current, units, logged=raw.logged),
    ),
    DataSource(
        name="scheduled_workouts",
        display_name="Schedule",
        description=(
            "What each day on the user's calendar holds from today: date, title, status (and why a plan day "
            "could not be prepared), the planned exercises with sets, reps and loads, the day's message, ids. "
            "Params: days_ahead (default 14)."
        ),
        params=ScheduleParams,
        fetch=_fetch_schedule,
        format=lambda raw, units: formatters.format_scheduled_workouts(
            raw.items, units, days_ahead=raw.days_ahead, today=raw.today
        ),
    ),
    DataSource(
        name="workout_plans",
        display_name="Workout plans",
        description=(
            "The user's multi-week plans with status, goal, progress and ids; for active and draft plans the "
            "sessions of this week and the next. Params: status."
        ),
        params=PlanParams,
        fetch=_fetch_plans,
        format=lambda raw, units: formatters.format_workout_plans(
            raw.plans, raw.counts, status=raw.status, today=raw.today
        ),
    ),
    DataSource(
        name="milestone_goals",
        display_name="Milestones",
        description="Measurable targets (e.g. run 5 km, bench 100 kg) with progress and deadlines. Params: status.",
        params=MilestoneParams,
        fetch=_fetch_milestones,
        format=lambda raw, units: formatters.format_milestone_goals(raw.milestones, status=raw.status),
    ),
)
_REGISTRY: dict[str, DataSource] = {source.name: source for source in _SOURCES}

# Fetched on every context build into the `<user_data>` block rather than chosen by the initializer.
STABLE_PREFIX_SOURCES: tuple[str, ...] = ("user_profile", "user_settings", "all_locations")


def get_source(name: str) -> DataSource:
    """The registered source called `name`; UnknownSourceError listing the valid names otherwise."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownSourceError(
            f"unknown data source {name!r}; valid sources: {', '.join(_REGISTRY)}"
        ) from None


def all_sources() -> list[DataSource]:
    return list(_REGISTRY.values())


def source_names() -> list[str]:
    return list(_REGISTRY)


def units_for(*, user_id: uuid.UUID) -> Units:
    """How to show numbers and dates to the user (their settings, or kg/km/UTC)."""
    return units_of(selectors.get_settings(user_id=user_id))


def units_of(settings: UserSettings) -> Units:
    """The units (and time zone) these settings ask for."""
    return Units.from_settings(settings, selectors.timezone_named(settings.timezone))


def fetch_and_format(
    *,
    user_id: uuid.UUID,
    source: str,
    params: Mapping[str, Any] | None = None,
    units: Units | None = None,
) -> FormattedSource:
    """Fetch one source for the user and format it in their units.

    Raises UnknownSourceError for an unknown name and InvalidSourceParamsError for bad params.
    """
    data_source = get_source(source)
    parsed = data_source.parse_params(params)
    raw = data_source.fetch(user_id, parsed)
    text = data_source.format(raw, units or units_for(user_id=user_id))
    return FormattedSource(
        source=source, params=parsed.model_dump(exclude_none=True), text=text, chars=len(text)
    )


def runs_concurrently() -> bool:
    """Whether fetch_many may use threads with the default database.

    Not when the caller is inside a transaction (worker threads have their own connections and would not see
    its uncommitted rows), nor on an in-memory SQLite database (each thread's connection would open its own
    empty database). Tests on SQLite therefore exercise the sequential path; PostgreSQL tests the threads.
    """
    if connection.in_atomic_block:
        return False
    if connection.vendor == "sqlite":
        name = str(connection.settings_dict.get("NAME") or "")
        test_name = str((connection.settings_dict.get("TEST") or {}).get("NAME") or "")
        return not any(":memory:" in value or "mode=memory" in value for value in (name, test_name) if value)
    return True


def _fetch_one(
    user_id: uuid.UUID,
    source: str,
    params: Mapping[str, Any] | None,
    units: Units | None,
    *,
    savepoint: bool = False,
) -> FormattedSource | SourceError:
    try:
        # In a transaction shared with other sources, a savepoint: a database error here undoes only this
        # source's reads, and the others still run.
        with transaction.atomic() if savepoint else nullcontext():
            return fetch_and_format(user_id=user_id, source=source, params=params, units=units)
    except (UnknownSourceError, InvalidSourceParamsError) as error:
        return SourceError(source=source, params=dict(params or {}), error=str(error))
    except Exception as error:  # one failing source must not sink the others (docs/contracts.md §9.2)
        logger.exception("datasource.fetch_failed", extra={"source": source, "user_id": str(user_id)})
        return SourceError(source=source, params=dict(params or {}), error=f"{type(error).__name__}: {error}")


# What a pool thread's connection needs to read a user's rows: trainer_agent registers its row-level security
# context (`tenancy.acting_for`) here (a lower app gets it by registration, never by importing upward).
def _no_context(user_id: uuid.UUID) -> AbstractContextManager[Any]:
    return nullcontext()


_thread_context: Callable[[uuid.UUID], AbstractContextManager[Any]] = _no_context


def register_thread_context(context: Callable[[uuid.UUID], AbstractContextManager[Any]]) -> None:
    """Run each of fetch_many's threads inside `context(user_id)`."""
    global _thread_context
    _thread_context = context


def _fetch_in_thread(
    user_id: uuid.UUID, source: str, params: Mapping[str, Any] | None, units: Units | None
) -> FormattedSource | SourceError:
    try:
        with _thread_context(user_id):
            return _fetch_one(user_id, source, params, units)
    finally:
        # The pool's threads would otherwise each keep a connection open until they are garbage collected.
        connections.close_all()


def fetch_many(
    *,
    user_id: uuid.UUID,
    requests: Sequence[tuple[str, Mapping[str, Any] | None]],
    max_workers: int = MAX_WORKERS,
) -> list[FormattedSource | SourceError]:
    """Fetch and format several sources, concurrently where the database allows (see runs_concurrently).

    Results come back in the order of `requests`; a failing or unknown source gives a SourceError in its
    place and the others still return. `max_workers=1`: one after another on the caller's connection (each
    thread of the pool opens a database connection of its own and closes it after).
    """
    if not requests:
        return []
    if len(requests) == 1 or max_workers <= 1 or not runs_concurrently():
        # One after another, on PostgreSQL in one transaction (the caller's, or one of their own): the reads
        # then cost one BEGIN, tenant setting and COMMIT, not one each. Not on SQLite, whose transactions take
        # the write lock (the rule of trainer_agent.tenancy.reads_together, which this app cannot import).
        together = connection.vendor == "postgresql"
        with transaction.atomic(savepoint=False) if together else nullcontext():
            units = units_for(user_id=user_id)
            isolate = together and len(requests) > 1
            return [
                _fetch_one(user_id, source, params, units, savepoint=isolate) for source, params in requests
            ]
    units = units_for(user_id=user_id)
    with ThreadPoolExecutor(
        max_workers=min(max_workers, len(requests)), thread_name_prefix="datasource"
    ) as pool:
        futures = [
            pool.submit(_fetch_in_thread, user_id, source, params, units) for source, params in requests
        ]
        return [future.result() for future in futures]


def build_user_data_xml(*, user_id: uuid.UUID) -> str:
    """The `<user_data>` block of docs/contracts.md §8.2 (user data block) from the three stable-prefix sources.

    Deterministic for the same data (no timestamps, fixed ordering), so the prompt-cache prefix holds. Read fresh
    on every call (docs/contracts.md §8.2 (user data block)).
    """
    return user_data_xml_of(selectors.user_data_sources(user_id=user_id))


def user_data_xml_of(sources: selectors.UserDataSources, *, today: date | None = None) -> str:
    """`build_user_data_xml` of sources already read (`selectors.user_data_sources`), on `today` (default: the
    user's date now, `user_data_day`)."""
    units = units_of(sources.settings)
    return formatters.user_data_xml(
        profile=sources.profile,
        settings=sources.settings,
        locations=sources.locations,
        units=units,
        today=today if today is not None else selectors.today_in(units.tz),
    )


def user_data_day(sources: selectors.UserDataSources) -> date:
    """The user's date now, in the time zone of their settings: the day the `<user_data>` block shows."""
    return selectors.today_in(selectors.timezone_named(sources.settings.timezone))
