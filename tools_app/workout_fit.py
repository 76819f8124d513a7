"""Fitting a drafted workout to its minutes: one fitter for the Composer's drafts and for plan days.

The estimate the user reads (`workout_tools.estimate_duration_min`) is brought within the minutes asked for
(`fits_minutes`: at most FIT_OVER over, FIT_UNDER under) by the levers a `FitRules` allows, in its order: each
exercise's sets and rest move within its `Give` (a plan day's sets are the plan's, so they do not move; a rest the
plan or the knee rule gives does not either), then the warm-up loses its last moves, then the main exercises that
are not kept lose the last of them, while `min_main` stay. `shortest_minutes` is how short the levers could make a
draft: the Composer budgets its lifts with it before it builds the warm-up, so a fit seldom drops a lift it drew.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from datasources_app.workouts import is_main
from tools_app.workout_tools import estimate_duration_min

# How long a draft may be: the estimate the user reads (the artifact's summary and the "about 30 min" they are
# told) at most FIT_OVER minutes over the minutes asked for (a user who has 30 minutes must not be handed 33) and
# at most FIT_UNDER under (a set or a rest is 1-3 minutes, the fit's step).
FIT_OVER = 1
FIT_UNDER = 3
REST_STEP_SEC = 15
REST_CAP_SEC = 150  # the longest rest a fit lengthens to
REST_GROWTH_SEC = (
    30  # how much longer than prescribed a fit makes a rest (a draft: twice that in a long session)
)
REST_FLOOR_SEC = 45  # the shortest rest a draft's fit shortens to
PLAN_REST_FLOOR_SEC = 60  # the shortest rest a plan day's fit gives a set of more than 6 reps
HEAVY_REST_FLOOR_SEC = 120  # the shortest rest a plan day's fit gives a set of 6 or fewer reps

Lever = Literal["sets", "rest", "warmup", "lift"]
CUTS: tuple[Lever, ...] = ("sets", "rest", "warmup", "lift")
GROWTHS: tuple[Lever, ...] = ("sets", "rest")


def fits_minutes(estimate: int, minutes: int) -> bool:
    """Whether a draft estimated at `estimate` minutes fits a brief of `minutes` (FIT_OVER, FIT_UNDER)."""
    return minutes - FIT_UNDER <= estimate <= minutes + FIT_OVER


@dataclass(frozen=True)
class Give:
    """How far a fit may move one exercise: its sets and its rest (s), each from low to high."""

    sets: tuple[int, int]
    rest: tuple[int, int]

    @staticmethod
    def fixed(exercise: Mapping[str, Any]) -> Give:
        sets, rest = int(exercise.get("sets") or 1), int(exercise.get("rest_sec") or 0)
        return Give((sets, sets), (rest, rest))


@dataclass(frozen=True)
class FitRules:
    """What a fit may change, and in what order: `give` says how far each main reps or hold exercise may move;
    `cuts` the levers tried, in order, for a draft over its minutes (`growths` for one under); `keep` the main
    exercises never dropped (a plan's named lifts, its finishers and cardio); `min_main` how many main exercises
    the "lift" cut leaves at least."""

    give: Callable[[Mapping[str, Any]], Give]
    min_main: int
    keep: Collection[str] = ()
    cuts: tuple[Lever, ...] = CUTS
    growths: tuple[Lever, ...] = GROWTHS


def draft_rules(
    *, min_main: int, keep: Collection[str], light: Collection[str], compounds: Collection[str], growth: int
) -> FitRules:
    """A composed draft's fit: sets from 2 up to 4 (5 for a compound in a long session; `light` exercises, for
    muscles still recovering, no more than drafted), rests down to REST_FLOOR_SEC and up to `growth` more
    (REST_CAP_SEC at most, none for `light` ones); then the warm-up, then the last lifts not kept."""

    def give(exercise: Mapping[str, Any]) -> Give:
        name, sets, rest = (
            str(exercise["exercise_name"]),
            int(exercise["sets"]),
            int(exercise.get("rest_sec") or 0),
        )
        cap = sets if name in light else 5 if name in compounds else 4
        longest = rest if name in light else min(REST_CAP_SEC, rest + growth)
        return Give((min(2, sets), max(sets, cap)), (min(REST_FLOOR_SEC, rest), max(rest, longest)))

    return FitRules(give=give, min_main=min_main, keep=frozenset(keep))


def plan_day_rules(*, min_main: int, keep: Collection[str], rests_given: Collection[str]) -> FitRules:
    """A plan day's fit, the plan's sets in: its sets never move, nor a rest the plan (or the knee rule) gives;
    other rests go down to PLAN_REST_FLOOR_SEC (HEAVY_REST_FLOOR_SEC for a set of 6 or fewer reps) and up to
    REST_GROWTH_SEC more (REST_CAP_SEC at most); then the warm-up, then the last lifts the plan does not name."""

    def give(exercise: Mapping[str, Any]) -> Give:
        if str(exercise["exercise_name"]) in rests_given:
            return Give.fixed(exercise)
        sets, rest = int(exercise["sets"]), int(exercise.get("rest_sec") or 0)
        floor = PLAN_REST_FLOOR_SEC if min(exercise.get("reps") or [99]) > 6 else HEAVY_REST_FLOOR_SEC
        return Give((sets, sets), (min(floor, rest), max(rest, min(REST_CAP_SEC, rest + REST_GROWTH_SEC))))

    return FitRules(
        give=give, min_main=min_main, keep=frozenset(keep), cuts=("rest", "warmup", "lift"), growths=("rest",)
    )


def _adjustable(exercises: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        e for e in exercises if is_main(e) and e.get("exercise_type") in ("reps", "hold") and e.get("sets")
    ]


def resize(exercise: dict[str, Any], sets: int) -> None:
    """Change the number of sets, stretching each per-set list (its first value repeated)."""
    exercise["sets"] = sets
    for key in ("reps", "load_each", "hold_sec"):
        values = exercise.get(key)
        if values:
            exercise[key] = [values[0]] * sets


def shortest_minutes(exercises: Sequence[dict[str, Any]], rules: FitRules) -> int:
    """The estimate of `exercises` with every set and rest at the least its `Give` allows (the warm-up as it is)."""
    shortest = []
    for exercise in exercises:
        if exercise in _adjustable(exercises):
            give = rules.give(exercise)
            exercise = dict(exercise)
            resize(exercise, give.sets[0])
            exercise["rest_sec"] = give.rest[0]
        shortest.append(exercise)
    return estimate_duration_min(shortest)


def fit_to_minutes(exercises: list[dict[str, Any]], *, minutes: int, rules: FitRules) -> list[str]:
    """Bring `exercises` (in place) within `minutes` by `rules`, and number them; the names of the main exercises
    dropped."""
    adjustable = _adjustable(exercises)
    give = {id(e): rules.give(e) for e in adjustable}
    dropped: list[str] = []

    def step_up(exercise: dict[str, Any], lever: Lever) -> bool:
        sets, rest = int(exercise["sets"]), int(exercise.get("rest_sec") or 0)
        if lever == "sets" and sets < give[id(exercise)].sets[1]:
            resize(exercise, sets + 1)
        elif lever == "rest" and rest + REST_STEP_SEC <= max(rest, give[id(exercise)].rest[1]):
            exercise["rest_sec"] = rest + REST_STEP_SEC
        else:
            return False
        if estimate_duration_min(exercises) <= minutes + FIT_OVER:
            return True
        resize(exercise, sets)
        exercise["rest_sec"] = rest
        return False

    def grow() -> bool:
        """One step longer that keeps the estimate within the minutes (the fewest sets, the shortest rest first)."""
        for lever in rules.growths:
            key = "sets" if lever == "sets" else "rest_sec"
            ordered = sorted(adjustable, key=lambda e: (int(e.get(key) or 0), adjustable.index(e)))
            if any(step_up(exercise, lever) for exercise in ordered):
                return True
        return False

    def cut(lever: Lever) -> bool:
        if lever == "sets":
            over = [e for e in adjustable if int(e["sets"]) > give[id(e)].sets[0]]
            if over:
                target = max(over, key=lambda e: (int(e["sets"]), adjustable.index(e)))
                resize(target, int(target["sets"]) - 1)
            return bool(over)
        if lever == "rest":
            over = [e for e in adjustable if int(e.get("rest_sec") or 0) > give[id(e)].rest[0]]
            if over:
                target = max(over, key=lambda e: (int(e.get("rest_sec") or 0), adjustable.index(e)))
                rest = int(target.get("rest_sec") or 0)
                target["rest_sec"] = max(give[id(target)].rest[0], rest - REST_STEP_SEC)
            return bool(over)
        if lever == "warmup":
            warmup = [e for e in exercises if (e.get("group") or {}).get("type") == "warmup"]
            if len(warmup) > 1:
                exercises.remove(warmup[-1])
            return len(warmup) > 1
        main = [e for e in exercises if is_main(e)]
        droppable = [e for e in main if str(e["exercise_name"]) not in rules.keep]
        if len(main) <= rules.min_main or not droppable:
            return False
        exercises.remove(droppable[-1])
        if droppable[-1] in adjustable:
            adjustable.remove(droppable[-1])
        dropped.append(str(droppable[-1]["exercise_name"]))
        return True

    for _ in range(300):
        estimate = estimate_duration_min(exercises)
        if fits_minutes(estimate, minutes) and estimate >= minutes - 1:
            break
        if not (grow() if estimate < minutes else any(cut(lever) for lever in rules.cuts)):
            break
    for order, item in enumerate(exercises, start=1):
        item["order"] = order
    return dropped
