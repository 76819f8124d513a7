"""How the user's recent training is spread over muscles and goal categories, against their goals.

Each logged entry contributes a *volume proxy* (sets for reps/hold work, minutes / 5 for continuous work,
rounds for intervals) split over its goals by their shares; to its muscles only its working sets
(`working_sets`: a coach's split, in which a warm-up, a stretch or a run is no set for a muscle) are split. A muscle's (or category's) actual
share is its part of the total; its `debt` is goal weight − actual share, so a positive debt means
under-trained and is what the next workout should favour.
"""

from __future__ import annotations

import math
import uuid
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from datasources_app import selectors
from datasources_app.catalog import canonical_muscle
from datasources_app.models import CategoryGoal, MuscleGoal, WorkoutLogEntry

DEFAULT_WINDOW_DAYS = 14
# Minutes of continuous work that count as much as one set.
MINUTES_PER_SET = 5.0
# A muscle is "trained hard" by an entry that gives it at least this share (a prime mover, not a helper).
HARD_SHARE = 0.3
# Work hard enough to need recovery: sets of reps, holds and intervals (strength and power). Steady cardio (a
# duration entry: an easy ride, a jog, a row) is aerobic work a muscle recovers from as it goes.
HARD_WORK_TYPES = frozenset({"reps", "hold", "intervals"})
# Decimals kept of shares (fractions: 0.01 % steps) and volumes (sets): what float arithmetic adds beyond
# them is noise (3 sets x 0.1 = 0.30000000000000004), which the API and the model would otherwise show.
SHARE_DECIMALS = 4
VOLUME_DECIMALS = 2


@dataclass(frozen=True)
class ShareRow:
    """One muscle or category: goal weight, share of the window's volume, and the gap between them."""

    name: str
    target: float
    actual: float
    volume: float

    @property
    def debt(self) -> float:
        return round(self.target - self.actual, SHARE_DECIMALS)


@dataclass(frozen=True)
class Distribution:
    """Rows for every goal and everything trained, most under-trained (largest debt) first."""

    kind: str  # "muscle" | "category"
    window_days: int
    entry_count: int
    total_volume: float
    rows: tuple[ShareRow, ...]

    def row(self, name: str) -> ShareRow | None:
        folded = name.casefold()
        return next((row for row in self.rows if row.name.casefold() == folded), None)


def is_working_entry(entry: WorkoutLogEntry) -> bool:
    """Whether the entry is *working* training: done (not skipped), in the main part of its workout (not its
    warm-up or cool-down, `WorkoutLogEntry.section`), and not mobility work only (a stretch; also how the
    warm-ups and cool-downs logged before entries kept their section read).

    A coach counts a muscle's training in working sets: the sets hard enough to make it stronger or bigger. A
    warm-up of band pull-aparts or a hamstring stretch prepares or loosens a muscle, but counted like a set of
    rows it inflates the muscles warmed up or stretched and hides the ones being neglected.
    """
    if entry.skipped or entry.section not in ("", "main"):
        return False
    goals = {str(item.get("goal", "")).lower() for item in entry.goals or () if isinstance(item, dict)}
    return not (goals and goals <= {"mobility"})


def is_hard_work(exercise_type: str) -> bool:
    """Whether work of this type (reps, hold, duration, intervals) is hard work a muscle must recover from
    (`HARD_WORK_TYPES`): a set of squats is, a steady ride on the bike is not."""
    return exercise_type in HARD_WORK_TYPES


def working_sets(entry: WorkoutLogEntry) -> float:
    """The entry's sets when it is working training of reps or holds (`is_working_entry`), else 0: what a
    muscle's share of the training counts."""
    if entry.exercise_type not in ("reps", "hold") or not is_working_entry(entry):
        return 0.0
    return entry_volume(entry)


def _first_number(*values: float | int | None) -> float | None:
    return next((float(value) for value in values if value), None)


def entry_volume(entry: WorkoutLogEntry) -> float:
    """The entry's volume proxy from what was done (falling back to the target); 0 for skipped entries.

    reps/hold: sets; duration: minutes / 5; intervals: rounds. An entry with none of these counts as 1.
    """
    if entry.skipped:
        return 0.0
    if entry.exercise_type == "duration":
        minutes = _first_number(entry.actual_duration_min, entry.target_duration_min)
        return minutes / MINUTES_PER_SET if minutes else 1.0
    if entry.exercise_type == "intervals":
        return _first_number(entry.actual_rounds, entry.target_rounds) or 1.0
    per_set = entry.actual_reps if entry.exercise_type == "reps" else entry.actual_hold_sec
    return (
        _first_number(entry.actual_sets, len(per_set or ()), entry.target_sets, len(entry.target_reps or ()))
        or 1.0
    )


@dataclass(frozen=True)
class Tally:
    """What entries put on each muscle (or goal category), by case-folded name: the volume, the display spelling
    (the first seen) and how many entries gave it any."""

    volumes: dict[str, float]
    spelling: dict[str, str]
    entries: dict[str, int]
    # In how many workouts each got at least one set's worth (`TRAINED_IN_A_WORKOUT`): "how often did I train
    # my quads" counts the squat days, not every workout whose lunge touched a muscle with a tenth of a set.
    workouts: dict[str, int] = field(default_factory=dict)


# Working sets (shared out) a muscle needs in one workout to count as trained in it.
TRAINED_IN_A_WORKOUT = 1.0


def tally(entries: Iterable[WorkoutLogEntry], kind: str) -> Tally:
    """The one split of entries over muscles (kind "muscle": working sets only, `working_sets`, muscles by their
    canonical name) or goal categories (kind "category": every entry's volume proxy, `entry_volume`), each
    entry's volume shared out by its muscles' or goals' shares."""
    muscles = kind == "muscle"
    volumes: dict[str, float] = defaultdict(float)
    spelling: dict[str, str] = {}
    counts: dict[str, int] = defaultdict(int)
    per_workout: dict[tuple[str, Any], float] = defaultdict(float)
    for entry in entries:
        volume = working_sets(entry) if muscles else entry_volume(entry)
        if not volume:
            continue
        for item in (entry.muscles if muscles else entry.goals) or ():
            raw = str(item.get("muscle" if muscles else "goal") or "").strip()
            name = (canonical_muscle(raw) or raw) if muscles else raw
            if not name:
                continue
            folded = name.casefold()
            share = volume * float(item.get("share") or 0)
            volumes[folded] += share
            per_workout[folded, entry.log_id] += share
            spelling.setdefault(folded, name)
            counts[folded] += 1
    workouts: dict[str, int] = defaultdict(int)
    for (folded, _log), share in per_workout.items():
        workouts[folded] += share >= TRAINED_IN_A_WORKOUT
    return Tally(dict(volumes), spelling, dict(counts), dict(workouts))


def distribution_from_entries(
    *,
    entries: list[WorkoutLogEntry],
    goals: Mapping[str, float],
    kind: str,
    window_days: int = DEFAULT_WINDOW_DAYS,
) -> Distribution:
    """The distribution of `entries` over muscles (kind="muscle") or goal categories ("category").

    `goals` maps names to weights (summing to 1); names match case-insensitively.
    """
    split = tally(entries, kind)
    volumes, spelling = split.volumes, dict(split.spelling)
    total = sum(volumes.values())
    targets = {name.casefold(): float(weight) for name, weight in goals.items()}
    for name in goals:
        spelling[name.casefold()] = name  # the goal's own spelling wins for display
    names = set(volumes) | set(targets)
    rows = [
        ShareRow(
            name=spelling[name],
            target=round(targets.get(name, 0.0), SHARE_DECIMALS),
            actual=round(volumes.get(name, 0.0) / total, SHARE_DECIMALS) if total else 0.0,
            volume=round(volumes.get(name, 0.0), VOLUME_DECIMALS),
        )
        for name in names
    ]
    rows.sort(key=lambda row: (-row.debt, -row.target, row.name))
    return Distribution(
        kind=kind,
        window_days=window_days,
        entry_count=sum(1 for entry in entries if not entry.skipped),
        total_volume=round(total, VOLUME_DECIMALS),
        rows=tuple(rows),
    )


@dataclass(frozen=True)
class Window:
    """The entries (not skipped) logged in the `days` days up to `moment`, read once for the several figures
    one reader takes of them (a draft's muscle shares and recovery; a report's muscles and categories)."""

    moment: datetime
    days: int
    entries: list[WorkoutLogEntry]


def training_window(
    *, user_id: uuid.UUID, days: int = DEFAULT_WINDOW_DAYS, now: datetime | None = None
) -> Window:
    moment = now or timezone.now()
    start = moment - timedelta(days=days)
    return Window(moment, days, selectors.volume_entries_between(user_id=user_id, start=start, end=moment))


def muscle_distribution(
    *,
    user_id: uuid.UUID,
    days: int = DEFAULT_WINDOW_DAYS,
    now: datetime | None = None,
    window: Window | None = None,
    goals: Sequence[MuscleGoal] | None = None,
) -> Distribution:
    """Share of the last `days` days' volume (`window`'s, when given) per muscle against the user's muscle
    goals (`goals`, when the caller has read them)."""
    goals = goals if goals is not None else selectors.list_muscle_goals(user_id=user_id)
    window = window or training_window(user_id=user_id, days=days, now=now)
    weights = {goal.muscle: goal.weight for goal in goals}
    return distribution_from_entries(
        entries=window.entries, goals=weights, kind="muscle", window_days=window.days
    )


def category_distribution(
    *,
    user_id: uuid.UUID,
    days: int = DEFAULT_WINDOW_DAYS,
    now: datetime | None = None,
    window: Window | None = None,
    goals: Sequence[CategoryGoal] | None = None,
) -> Distribution:
    """Share of the last `days` days' volume (`window`'s, when given) per goal category against the user's
    category goals (`goals`, when the caller has read them)."""
    goals = goals if goals is not None else selectors.list_category_goals(user_id=user_id)
    window = window or training_window(user_id=user_id, days=days, now=now)
    weights = {goal.category: goal.weight for goal in goals}
    return distribution_from_entries(
        entries=window.entries, goals=weights, kind="category", window_days=window.days
    )


def recently_trained_muscles(
    *,
    user_id: uuid.UUID,
    hours: int = 48,
    min_share: float = HARD_SHARE,
    now: datetime | None = None,
    window: Window | None = None,
) -> dict[str, float]:
    """Muscles some entry of the last `hours` hours (up to `window`'s moment, from its entries, when given and
    long enough) worked as a prime mover (share ≥ `min_share`).

    Maps each to the hours since it was last trained that hard (one decimal), most recent first.
    Warm-ups, stretches and other mobility-only entries do not count: a chest stretch needs no recovery; nor
    does steady cardio (`is_hard_work`): an easy ride on the bike does not make the quads need 48 h off.
    """
    if window is None or window.days * 24 < hours:
        window = training_window(user_id=user_id, days=math.ceil(hours / 24), now=now)
    moment = window.moment
    since = moment - timedelta(hours=hours)
    last: dict[str, datetime] = {}
    for entry in (entry for entry in window.entries if entry.completed_at >= since):
        if not is_working_entry(entry) or not is_hard_work(entry.exercise_type):
            continue
        for item in entry.muscles or ():
            muscle = canonical_muscle(str(item.get("muscle") or ""))
            if muscle is None or float(item.get("share") or 0) < min_share:
                continue
            if muscle not in last or entry.completed_at > last[muscle]:
                last[muscle] = entry.completed_at
    ago = {muscle: round((moment - when).total_seconds() / 3600, 1) for muscle, when in last.items()}
    return dict(sorted(ago.items(), key=lambda item: (item[1], item[0])))
