"""get_training_stats (docs/contracts.md §11.5 (tool list)): its totals, breakdown, trends and summary views over
one date range, with real figures from the logs checked against hand-computed values."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from datasources_app.formatters import day
from datasources_app.models import WorkoutLogEntry
from tests.datasources_app.factories import MuscleGoalFactory, WorkoutLogEntryFactory, WorkoutLogFactory
from tests.tools_app.workout_support import (
    Trainee,
    bodyweight_exercise,
    generate,
    hold_exercise,
    make_trainee,
    reps_exercise,
    told,
)
from tools_app.registry import get_tool

pytestmark = pytest.mark.django_db

CHEST = [{"muscle": "Chest", "share": 1.0}]
LEGS = [{"muscle": "Quadriceps", "share": 1.0}]


def log_entry(
    trainee: Trainee, when: dt.datetime, name: str, reps: list[int], load: list[float], **extra: Any
) -> WorkoutLogEntry:
    log = WorkoutLogFactory.create(user_id=trainee.user_id, completed_at=when)
    values: dict[str, Any] = {
        "exercise_name": name,
        "exercise_slug": "",
        "actual_sets": len(reps),
        "actual_reps": reps,
        "actual_load_each": load,
        "muscles": CHEST if "Bench" in name else LEGS,
        **extra,
    }
    entry: WorkoutLogEntry = WorkoutLogEntryFactory.create(log=log, **values)
    return entry


def days_ago(days: int) -> dt.datetime:
    return timezone.now() - dt.timedelta(days=days)


def seed_history(trainee: Trainee) -> None:
    """3 days ago: bench 3×8 @ 60 (1440 kg) + squat 3×5 @ 100 (1500 kg) + a 30 min run, RPE 8;
    10 days ago: bench 3×8 @ 55 (1320 kg); 40 days ago: bench 3×5 @ 70 (1050 kg, e1RM 81.7)."""
    recent = WorkoutLogFactory.create(user_id=trainee.user_id, completed_at=days_ago(3))
    common = {"exercise_slug": "", "actual_sets": 3, "rpe": 8}
    WorkoutLogEntryFactory.create(
        log=recent,
        exercise_name="Bench Press",
        actual_reps=[8, 8, 8],
        actual_load_each=[60, 60, 60],
        muscles=CHEST,
        **common,
    )
    WorkoutLogEntryFactory.create(
        log=recent,
        exercise_name="Barbell Squat",
        actual_reps=[5, 5, 5],
        actual_load_each=[100] * 3,
        muscles=LEGS,
        **common,
    )
    WorkoutLogEntryFactory.create(
        log=recent,
        exercise_name="Easy Run",
        exercise_slug="",
        exercise_type="duration",
        actual_sets=None,
        actual_reps=[],
        actual_load_each=[],
        actual_duration_min=30,
        muscles=LEGS,
    )
    log_entry(trainee, days_ago(10), "Bench Press", [8, 8, 8], [55, 55, 55])
    log_entry(trainee, days_ago(40), "Bench Press", [5, 5, 5], [70, 70, 70])


@pytest.fixture
def trainee() -> Trainee:
    return make_trainee()


def run_stats(trainee: Trainee, **args: Any) -> Any:
    return trainee.run("get_training_stats", args)


def label(first: dt.date, last: dt.date) -> str:
    """The range as the observation names it, e.g. 'Mon 5 Jan – Sun 11 Jan 2026 (7 days)'."""
    days = (last - first).days + 1
    return f"{day(first)} – {day(last, with_year=True)} ({days} day{'s' if days != 1 else ''})"


def test_stats_tool_metadata() -> None:
    """Status messages as in docs/contracts.md §11.2 (observations and status messages); statistics are full-data observations."""
    tool = get_tool("get_training_stats")
    assert (tool.status_start, tool.status_done, tool.category, tool.observation) == (
        "Crunching your numbers...",
        "Stats ready",
        "analytics",
        "full",
    )


def test_totals_over_the_last_30_days(trainee: Trainee) -> None:
    """2 workouts, 3 exercises (bench twice), 9 sets, 1440 + 1500 + 1320 = 4260 kg, 30 min, RPE 8, about 0.5 a
    week; the top exercises are those with the most working sets (bench 6, squat 3), the run none."""
    seed_history(trainee)
    result = run_stats(trainee)
    assert result.success, result.formatted
    overview = result.data["overview"]
    assert (overview["workouts"], overview["exercises"], overview["sets"]) == (2, 4, 9)
    assert (overview["total_volume"], overview["total_minutes"], overview["average_rpe"]) == (4260, 30, 8)
    assert 2 / (30 / 7) <= overview["workouts_per_week"] <= 2 / (29 / 7)
    today = timezone.localdate()
    assert result.data["range"] == {
        "start_date": (today - dt.timedelta(days=29)).isoformat(),
        "end_date": today.isoformat(),
        "days": 30,
    }
    lines = result.raw_formatted.splitlines()
    assert lines[0] == f"Statistics, {label(today - dt.timedelta(days=29), today)} (weights in kg):"
    assert lines[1] == (
        "2 workouts (0.5/week) on 2 days, 3 exercises, 9 sets, volume 4,260kg, 30 min of cardio/intervals, "
        "average RPE 8"
    )
    assert lines[3:6] == [
        "Top exercises (most working sets first):",
        "  Bench Press (reps): 6 working sets, 2 sessions, volume 2,760kg, best set 60kg × 8, e1RM 76kg "
        f"(60kg × 8), RPE 8, last {day(days_ago(3).date())}",
        "  Barbell Squat (reps): 3 working sets, 1 session, volume 1,500kg, best set 100kg × 5, e1RM 116.5kg "
        f"(100kg × 5), RPE 8, last {day(days_ago(3).date())}",
    ]
    assert "Easy Run" not in "\n".join(lines[3:])
    assert "Best estimated 1RM: Barbell Squat 116.5kg; Bench Press 76kg" in result.raw_formatted


def test_last_week_as_dates_counts_only_those_days_and_names_them(trainee: Trainee) -> None:
    """start_date..end_date around the bench session 10 days ago: only its 1320 kg, and the range is stated."""
    seed_history(trainee)
    today = timezone.localdate()
    first, last = today - dt.timedelta(days=13), today - dt.timedelta(days=7)
    result = run_stats(trainee, start_date=first.isoformat(), end_date=last.isoformat())
    assert result.success, result.formatted
    overview = result.data["overview"]
    assert (overview["workouts"], overview["sets"], overview["total_volume"]) == (1, 3, 1320)
    assert result.data["range"] == {"start_date": first.isoformat(), "end_date": last.isoformat(), "days": 7}
    assert result.raw_formatted.splitlines()[0] == f"Statistics, {label(first, last)} (weights in kg):"
    assert "Barbell Squat" not in result.raw_formatted


def test_every_view_honours_the_date_range(trainee: Trainee) -> None:
    """breakdown, trends and summary over the same 7 days see the one bench session only."""
    seed_history(trainee)
    today = timezone.localdate()
    first, last = today - dt.timedelta(days=13), today - dt.timedelta(days=7)
    dates = {"start_date": first.isoformat(), "end_date": last.isoformat()}
    breakdown = run_stats(trainee, view="breakdown", **dates)
    assert [item["name"] for item in breakdown.data["exercises"]] == ["Bench Press"]
    assert breakdown.raw_formatted.startswith(f"Exercise breakdown, {label(first, last)} (weights in kg):")
    trends = run_stats(trainee, view="trends", **dates)
    assert sum(week["volume"] for week in trends.data["weeks"]) == 1320
    assert f", {label(first, last)}, " in trends.raw_formatted.splitlines()[0]
    summary = run_stats(trainee, view="summary", **dates)
    assert summary.raw_formatted.startswith(f"Your training, {label(first, last)}:")
    assert "- Overview: 1 workout (1/week) on 1 day, 1 exercise, 3 sets" in summary.raw_formatted


def test_totals_in_pounds_and_seed_001_time_period(db: None) -> None:
    """A pound user sees pounds; time_period 'week' means the last 7 days."""
    trainee = make_trainee(weight_unit="lb")
    seed_history(trainee)
    result = run_stats(trainee, time_period="week")
    assert result.success, result.formatted
    assert result.data["range"]["days"] == 7
    assert result.data["overview"]["total_volume"] == round(2940 * 2.20462, 1)
    assert "volume 6,482lb" in result.raw_formatted


def test_totals_without_logs(trainee: Trainee) -> None:
    """No logs is a successful, explicit 'nothing logged' answer naming the range; the user is told so, and how
    to get numbers."""
    result = run_stats(trainee, days=14)
    today = timezone.localdate()
    assert result.success
    said = f"No workouts logged in {label(today - dt.timedelta(days=13), today)}."
    assert result.raw_formatted == (
        f'{said}\nTell the user: {said} Ask me for a workout and say "done" when you finish, and I\'ll keep '
        "track from there."
    )


def test_range_mistakes_are_named(trainee: Trainee) -> None:
    """days with dates, a start after the end, and a start in the future each fail with what to change."""
    both = run_stats(trainee, days=7, start_date="2026-01-01")
    assert not both.success and both.data["error"] == "Give either days or start_date/end_date, not both."
    backwards = run_stats(trainee, start_date="2026-01-10", end_date="2026-01-03")
    assert not backwards.success
    assert backwards.data["error"].startswith("start_date 2026-01-10 is after 2026-01-03")
    future = (timezone.localdate() + dt.timedelta(days=3)).isoformat()
    ahead = run_stats(trainee, start_date=future)
    assert not ahead.success and f"start_date {future} is after today" in ahead.data["error"]
    not_a_date = run_stats(trainee, start_date="last week")
    assert not not_a_date.success and "start_date" in not_a_date.data["error"]


def test_an_option_of_another_view_is_an_error_naming_the_views_options(trainee: Trainee) -> None:
    """group_by belongs to breakdown: asking trends for it fails and lists what trends takes."""
    result = run_stats(trainee, view="trends", group_by="muscle")
    assert not result.success
    assert result.data["error"] == (
        "group_by does not apply to view trends; its options: metric, exercise_name, start_date, end_date, days."
    )
    totals = run_stats(trainee, metric="volume")
    assert not totals.success
    assert totals.data["error"] == (
        "metric does not apply to view totals; its options: start_date, end_date, days."
    )


def test_unknown_argument_is_refused_not_answered_for_30_days(trainee: Trainee) -> None:
    """A misspelt range (from/to) is an error naming it and the accepted arguments, not 30 days of stats."""
    result = run_stats(trainee, **{"from": "2026-01-01", "to": "2026-01-07"})
    assert not result.success
    assert result.data["error"] == (
        "Invalid arguments for get_training_stats: unknown argument(s) from, to (accepted: view, start_date, "
        "end_date, days, exercise_name, group_by, metric)"
    )


def test_breakdown_for_one_exercise_over_a_year(trainee: Trainee) -> None:
    """All bench sessions: 3 sessions, 9 sets, 3810 kg; best set 70 × 5 and its e1RM 81.7 kg."""
    seed_history(trainee)
    result = run_stats(trainee, view="breakdown", exercise_name="bench press", days=365)
    assert result.success, result.formatted
    (bench,) = result.data["exercises"]
    assert (bench["sessions"], bench["sets"], bench["volume"]) == (3, 9, 3810)
    assert bench["best_set"] == {"load": 70, "reps": 5}
    assert bench["best_estimated_1rm"] == 81.7
    assert "best set 70kg × 5, e1RM 81.5kg (70kg × 5)" in result.raw_formatted


def test_breakdown_by_muscle_and_seed_001_breakdown_type(trainee: Trainee) -> None:
    """group_by (or breakdown_type) muscle gives each muscle's working sets and their share: chest 3 + 3 bench
    sets, legs 3 squat sets (the run is cardio, no set): 6 and 3 of 9."""
    seed_history(trainee)
    result = run_stats(trainee, view="breakdown", breakdown_type="muscle", days=30)
    assert result.success, result.formatted
    shares = {group["name"]: (group["volume"], group["share"]) for group in result.data["groups"]}
    assert shares == {"Chest": (6, 0.6667), "Quadriceps": (3, 0.3333)}
    assert result.raw_formatted.splitlines()[1:] == [
        "- Chest: 6 sets, 67%, trained in 2 workouts",
        "- Quadriceps: 3 sets, 33%, trained in 1 workout",
    ]


def test_the_muscle_split_says_how_many_workouts_trained_each_muscle(trainee: Trainee) -> None:
    """ "How many times did I train quads this month?": two squat days count two workouts for the quads; the
    glutes, a fifth of each squat set, never got a set's worth in one workout and are not said to be trained."""
    for days in (9, 2):
        log_entry(
            trainee,
            days_ago(days),
            "Barbell Squat",
            [5, 5, 5],
            [100] * 3,
            muscles=[{"muscle": "Quadriceps", "share": 0.8}, {"muscle": "Glutes", "share": 0.2}],
        )
    result = run_stats(trainee, view="breakdown", group_by="muscle", days=30)
    assert result.success, result.formatted
    lines = result.raw_formatted.splitlines()
    assert "- Quadriceps: 4.8 sets, 80%, trained in 2 workouts" in lines, lines
    assert "- Glutes: 1.2 sets, 20%, no full set in a workout" in lines, lines
    assert [group.get("workouts") for group in result.data["groups"]] == [2, 0]


def test_breakdown_of_an_unknown_exercise_fails_listing_the_logged_ones(trainee: Trainee) -> None:
    """A name with no logs fails and names the exercises that were logged."""
    seed_history(trainee)
    result = run_stats(trainee, view="breakdown", exercise_name="deadlift", days=30)
    assert not result.success
    assert "No logged 'deadlift' in " in result.data["error"]
    assert "Bench Press" in result.data["error"] and "Barbell Squat" in result.data["error"]


def test_an_exercise_in_the_users_words_is_the_one_logged_exercise_that_holds_them(trainee: Trainee) -> None:
    """ "squats" is the logged Barbell Squat: its figures, under its logged name; a word two logged exercises
    share ("press" of Bench Press and Overhead Press) is a refusal naming both, to choose from or ask about."""
    seed_history(trainee)
    log_entry(trainee, days_ago(2), "Overhead Press", [8, 8], [30, 30])
    squats = run_stats(trainee, view="breakdown", exercise_name="squats", days=30)
    assert squats.success, squats.formatted
    assert [item["name"] for item in squats.data["exercises"]] == ["Barbell Squat"]
    trend = run_stats(trainee, view="trends", exercise_name="squat", days=28)
    assert trend.success and "Weekly volume of Barbell Squat" in trend.raw_formatted
    press = run_stats(trainee, view="breakdown", exercise_name="press", days=30)
    assert not press.success
    assert press.data["error"].startswith("Which exercise? 'press' matches 2 logged in ")
    assert "Bench Press" in press.data["error"] and "Overhead Press" in press.data["error"]


def weekly_history(trainee: Trainee) -> None:
    """Monday noon of the 4 oldest of the last 7 weeks: 1000 kg; of the 3 latest: 2000 kg."""
    today = timezone.localdate()
    this_monday = today - dt.timedelta(days=today.weekday())
    for weeks_back, load in ((7, 100), (6, 100), (5, 100), (4, 100), (3, 200), (2, 200), (1, 200)):
        monday = this_monday - dt.timedelta(weeks=weeks_back)
        when = dt.datetime.combine(monday, dt.time(12), tzinfo=dt.UTC)
        log_entry(trainee, when, "Bench Press", [10], [load], rpe=7)


def eight_weeks() -> dict[str, str]:
    """Monday 7 weeks ago through today: 8 calendar weeks, the current one last."""
    today = timezone.localdate()
    monday = today - dt.timedelta(days=today.weekday()) - dt.timedelta(weeks=7)
    return {"start_date": monday.isoformat(), "end_date": today.isoformat()}


def test_trends_weekly_volume_goes_up(trainee: Trainee) -> None:
    """8 weeks: 1000 ×4, 2000 ×3, 0 this week so far: left out, the last 3 whole weeks' mean (2000) is 100 %
    above the first 3's (this week counted, 1500 against 1000: +50 %)."""
    weekly_history(trainee)
    result = run_stats(trainee, view="trends", **eight_weeks())
    assert result.success, result.formatted
    assert [week["volume"] for week in result.data["weeks"]] == [1000] * 4 + [2000] * 3 + [0]
    assert (result.data["direction"], result.data["change"]) == ("up", 1.0)
    monday = timezone.localdate() - dt.timedelta(days=timezone.localdate().weekday())
    assert result.raw_formatted.splitlines()[-2:] == [
        f"  no sessions in w/c Mon {monday.day} {monday:%b}",  # this week, named: the others have sessions
        "Trend: up +100% (second half of the weeks vs the first, this unfinished week left out)",
    ]


def test_trends_of_one_logged_week_list_that_week_and_call_no_trend(trainee: Trainee) -> None:
    """One bench session in 8 weeks (a user's first): the report shows that week and says there is no trend
    yet, not seven rows of '0 sessions' and 'Trend: flat' (a model trial passed that on)."""
    today = timezone.localdate()
    monday = today - dt.timedelta(days=today.weekday()) - dt.timedelta(weeks=2)
    log_entry(
        trainee, dt.datetime.combine(monday, dt.time(12), tzinfo=dt.UTC), "Bench Press", [8] * 3, [60] * 3
    )
    result = run_stats(trainee, view="trends", metric="e1rm", exercise_name="Bench Press", **eight_weeks())
    assert result.success, result.formatted
    rows = [line for line in result.raw_formatted.splitlines() if line.startswith("  w/c")]
    assert len(rows) == 1 and "1 session, 3 sets" in rows[0]
    assert "  no sessions in the other 7 weeks" in result.raw_formatted.splitlines()
    assert result.raw_formatted.splitlines()[-1] == "Trend: none yet (sessions in one week only)"
    assert len(result.data["weeks"]) == 8  # the data keeps every week for a client's chart


def test_trends_e1rm_for_one_exercise_with_seed_001_metric(trainee: Trainee) -> None:
    """Seed 001's metric 'weight' is the best estimated 1RM: 100 × (1 + 10/30) = 133.3 → 266.7 kg."""
    weekly_history(trainee)
    result = run_stats(trainee, view="trends", metric="weight", exercise_name="Bench Press", **eight_weeks())
    assert result.success, result.formatted
    assert result.data["metric"] == "e1rm"
    assert [week["best_estimated_1rm"] for week in result.data["weeks"]][:5] == [133.3] * 4 + [266.7]
    assert result.data["direction"] == "up"


def test_estimated_1rms_are_said_to_the_load_step_of_the_users_unit() -> None:
    """Epley is no closer than a plate: 185 lb × 5 (e1RM 215.8) reads "216lb", not "215.8lb"; 180 lb × 6 (216.0)
    a few days later is a new record that rounds the same, said as just above the earlier best, not "216lb, up
    from 216lb". (Kilograms go to 0.5: 100 kg × 5 reads 116.5kg, see the totals.)"""
    trainee = make_trainee(weight_unit="lb")
    log_entry(trainee, days_ago(10), "Bench Press", [5, 5, 5], [185] * 3, load_unit="lb")
    breakdown = run_stats(trainee, view="breakdown", exercise_name="Bench Press", days=30)
    assert "best set 185lb × 5, e1RM 216lb (185lb × 5)" in breakdown.raw_formatted, breakdown.raw_formatted
    log_entry(trainee, days_ago(3), "Bench Press", [6, 6, 6], [180] * 3, load_unit="lb")
    summary = run_stats(trainee, view="summary", days=7)
    assert (
        "- New personal records: Bench Press e1RM 216lb (180lb × 6), just above the earlier best"
        in summary.raw_formatted.splitlines()
    ), summary.raw_formatted


def test_sets_logged_in_kilograms_read_in_pounds_as_the_history_shows_them() -> None:
    """A user who switched to pounds reads a 140 kg squat as "309lb × 5" in the stats, as in the history, not
    "308.6lb × 5"."""
    trainee = make_trainee(weight_unit="lb")
    log_entry(trainee, days_ago(3), "Barbell Back Squat", [5, 5, 5], [140] * 3, load_unit="kg")
    breakdown = run_stats(trainee, view="breakdown", exercise_name="Barbell Back Squat", days=30)
    assert "best set 309lb × 5" in breakdown.raw_formatted, breakdown.raw_formatted
    assert "308.6" not in breakdown.raw_formatted


def test_trends_failures(trainee: Trainee) -> None:
    """An exercise not logged in the range fails; an unknown metric is a validation failure."""
    weekly_history(trainee)
    missing = run_stats(trainee, view="trends", exercise_name="Deadlift")
    assert not missing.success and "No logged 'Deadlift'" in missing.data["error"]
    bad_metric = run_stats(trainee, view="trends", metric="reps")
    assert not bad_metric.success and "metric" in bad_metric.data["error"]


def test_summary_of_the_last_7_days(trainee: Trainee) -> None:
    """The 7 days against the 7 before; the squat is a first record, the bench is not (81.7 earlier)."""
    seed_history(trainee)
    result = run_stats(trainee, view="summary", days=7)
    assert result.success, result.formatted
    text = result.raw_formatted
    assert result.data["summary"] == text
    assert "- Overview: 1 workout (1/week) on 1 day, 3 exercises, 6 sets" in text
    assert "vs the 7 days before: workouts 0%, volume +123%" in text  # 2940 vs 1320 kg
    assert "- New personal records: Barbell Squat e1RM 116.5kg (100kg × 5), first record" in text
    assert "Bench Press e1RM" not in text
    assert [record["name"] for record in result.data["personal_records"]] == ["Barbell Squat"]
    assert "- By muscle, working sets: Chest 3 (50%), Quadriceps 3 (50%)" in text
    assert "- Weekly volume (kg, 4 weeks to " in text


def test_summary_of_an_empty_period(trainee: Trainee) -> None:
    """A period without workouts says so; seed 001's period 'month' is the last 30 days."""
    empty = run_stats(trainee, view="summary", period="month")
    assert empty.success and "No workouts logged in this period." in empty.raw_formatted
    assert empty.data["range"]["days"] == 30


@pytest.mark.parametrize(
    "args",
    [
        {"view": "trends"},
        {"view": "trends", "exercise_name": "squat"},
        {"view": "breakdown", "exercise_name": "squat"},
    ],
)
def test_a_range_with_nothing_logged_is_told_not_an_error(trainee: Trainee, args: dict[str, Any]) -> None:
    """Nothing logged in the range: every view succeeds and tells the user so, rather than an empty week-by-week
    table or an error asking the model to correct an exercise name nobody has logged."""
    result = run_stats(trainee, days=7, **args)
    assert result.success, result.formatted
    today = timezone.localdate()
    assert told(result).startswith(f"No workouts logged in {label(today - dt.timedelta(days=6), today)}")


def pulling_workout() -> dict[str, Any]:
    """A warm-up of band pull-aparts (2 × 15, goals the model wrote: hypertrophy, not mobility), a row 4 × 10 @
    25 kg each hand, a curl 3 × 12 @ 12 kg each hand and a cool-down stretch."""
    warm_up = bodyweight_exercise(
        1,
        exercise_name="Band Pull-Apart",
        sets=2,
        reps=[15, 15],
        equipment=["resistance_bands"],
        muscles_utilized=[{"muscle": "Shoulders", "share": 1.0}],
        goals_addressed=[{"goal": "hypertrophy", "share": 1.0}],
    )
    warm_up["group"] = {"id": "g_warm", "type": "warmup", "position": 1}
    row = reps_exercise(
        2,
        exercise_name="Bent-Over Dumbbell Row",
        sets=4,
        reps=[10] * 4,
        load_each=[25] * 4,
        muscles_utilized=[{"muscle": "Back", "share": 1.0}],
    )
    curl = reps_exercise(
        3,
        exercise_name="Dumbbell Biceps Curl",
        reps=[12] * 3,
        load_each=[12] * 3,
        equipment=["dumbbells"],
        muscles_utilized=[{"muscle": "Biceps", "share": 1.0}],
    )
    stretch = hold_exercise(
        4,
        exercise_name="Doorway Chest Stretch",
        sets=1,
        hold_sec=[45],
        muscles_utilized=[{"muscle": "Chest", "share": 1.0}],
        goals_addressed=[{"goal": "flexibility", "share": 1.0}],
    )
    stretch["group"] = {"id": "g_cool", "type": "cooldown", "position": 1}
    return {"title": "Pull", "exercises": [warm_up, row, curl, stretch]}


def test_the_muscle_split_counts_working_sets_not_the_warm_up_or_cool_down(trainee: Trainee) -> None:
    """A workout logged as planned: the band pull-apart warm-up (2 sets) and the stretch of the cool-down (1)
    are no sets for the shoulders or chest; the split is the row's 4 sets for the back and the curl's 3 for
    the biceps: 4/7 = 57% and 3/7 = 43%; 10 sets done, 7 of them working."""
    assert generate(trainee, pulling_workout()).success
    logged = trainee.run("log_workout", {"others_as_planned": True})
    assert logged.success, logged.formatted
    assert [entry.section for entry in WorkoutLogEntry.objects.order_by("order")] == [
        "warmup",
        "main",
        "main",
        "cooldown",
    ]
    totals = run_stats(trainee, days=7)
    assert totals.success, totals.formatted
    assert "By muscle, working sets: Back 4 (57%), Biceps 3 (43%)" in totals.raw_formatted.splitlines()
    assert ", 4 exercises, 10 sets (7 working), " in totals.raw_formatted
    split = run_stats(trainee, view="breakdown", group_by="muscle", days=7)
    assert [(group["name"], group["volume"]) for group in split.data["groups"]] == [
        ("Back", 4),
        ("Biceps", 3),
    ]


def test_a_set_logged_during_the_workout_keeps_its_section(trainee: Trainee) -> None:
    """The warm-up's sets noted down while training (log_completed_exercise) are stored as the warm-up's, so
    the split leaves them out; the row's are main work."""
    assert generate(trainee, pulling_workout()).success
    for exercise in ("Band Pull-Apart", "Bent-Over Dumbbell Row"):
        result = trainee.run("log_completed_exercise", {"exercise_name": exercise})
        assert result.success, result.formatted
    assert sorted(WorkoutLogEntry.objects.values_list("exercise_name", "section")) == [
        ("Band Pull-Apart", "warmup"),
        ("Bent-Over Dumbbell Row", "main"),
    ]
    split = run_stats(trainee, view="breakdown", group_by="muscle", days=7)
    assert [group["name"] for group in split.data["groups"]] == ["Back"]


def test_a_stretch_logged_on_its_own_is_not_a_working_set(trainee: Trainee) -> None:
    """An entry whose only goal is mobility (a stretch, or a warm-up logged before entries kept their section)
    is not working volume: only the bench's 3 sets count, for the chest; the stretch is not a top exercise."""
    log_entry(trainee, days_ago(1), "Bench Press", [8, 8, 8], [60, 60, 60])
    log_entry(
        trainee,
        days_ago(1),
        "Hamstring Stretch",
        [],
        [],
        exercise_type="hold",
        actual_sets=3,
        actual_hold_sec=[45, 45, 45],
        goals=[{"goal": "mobility", "share": 1.0}],
        muscles=[{"muscle": "Hamstrings", "share": 1.0}],
    )
    result = run_stats(trainee, days=7)
    assert result.success, result.formatted
    assert "By muscle, working sets: Chest 3 (100%)" in result.raw_formatted.splitlines()
    assert [item["name"] for item in result.data["top_exercises"]] == ["Bench Press"]


def test_top_exercises_are_the_most_trained_first_with_their_working_sets(trainee: Trainee) -> None:
    """One workout of an Arnold press (2 sets), a Zercher squat (5 sets) and a bench (3 sets): all once, so the
    order is by working sets, 5, 3, 2, with the figure; not the names' alphabetical order."""
    when = days_ago(1)
    log = WorkoutLogFactory.create(user_id=trainee.user_id, completed_at=when)
    for order, (name, sets) in enumerate((("Arnold Press", 2), ("Zercher Squat", 5), ("Bench Press", 3))):
        WorkoutLogEntryFactory.create(
            log=log,
            order=order,
            exercise_name=name,
            exercise_slug="",
            completed_at=when,
            actual_sets=sets,
            actual_reps=[5] * sets,
            actual_load_each=[40] * sets,
            muscles=LEGS,
        )
    totals = run_stats(trainee, days=7)
    assert [item["name"] for item in totals.data["top_exercises"]] == [
        "Zercher Squat",
        "Bench Press",
        "Arnold Press",
    ]
    assert "  Zercher Squat (reps): 5 working sets, 1 session, " in totals.raw_formatted
    summary = run_stats(trainee, view="summary", days=7)
    assert (
        "- Top exercises (most working sets first): Zercher Squat 5 working sets in 1 session; Bench Press 3 "
        "working sets in 1 session; Arnold Press 2 working sets in 1 session"
    ) in summary.raw_formatted


def test_a_dumbbell_pairs_estimated_1rm_is_each_hand(trainee: Trainee) -> None:
    """Dumbbell bench 8 reps @ 22.5 kg each hand: e1RM 22.5 × (1 + 8/30) = 28.5 kg each hand, wherever it is
    shown (the records line of totals, the summary's new record with the one before it, 20 × 1.2667 = 25.3)."""
    log_entry(trainee, days_ago(20), "Dumbbell Bench Press", [8, 8], [20, 20])
    log_entry(trainee, days_ago(2), "Dumbbell Bench Press", [8, 8], [22.5, 22.5])
    totals = run_stats(trainee, days=7)
    assert "Best estimated 1RM: Dumbbell Bench Press 28.5kg each hand" in totals.raw_formatted.splitlines()
    summary = run_stats(trainee, view="summary", days=7)
    assert (
        "- New personal records: Dumbbell Bench Press e1RM 28.5kg each hand (22.5kg × 8), up from 25.5kg each "
        "hand"
    ) in summary.raw_formatted
    trend = run_stats(trainee, view="trends", metric="e1rm", exercise_name="dumbbell bench", days=28)
    week = day(days_ago(2).date() - dt.timedelta(days=days_ago(2).weekday()))
    # The metric is the e1RM: each week's line says it once, not again among the week's other figures.
    assert f"  w/c {week}: 28.5kg each hand | 1 session, 2 sets, volume 720kg" in [
        line.removesuffix(" (week not over: so far)") for line in trend.raw_formatted.splitlines()
    ]
    volume = run_stats(trainee, view="trends", exercise_name="dumbbell bench", days=28)
    assert ", e1RM 28.5kg each hand" in volume.raw_formatted


def test_an_e1rm_trend_needs_one_exercise(trainee: Trainee) -> None:
    """The best estimated 1RM of every exercise together, week by week, would set a squat against a curl: the
    model is asked for the exercise rather than shown a figure that mixes them."""
    seed_history(trainee)
    result = run_stats(trainee, view="trends", metric="e1rm", days=28)
    assert not result.success
    assert result.data["error"].startswith(
        "metric e1rm follows one exercise's best estimated 1RM week by week"
    )
    volume = run_stats(trainee, view="trends", days=28)
    assert "e1RM" not in volume.raw_formatted


def test_a_trend_leaves_out_a_first_week_the_range_cuts(trainee: Trainee) -> None:
    """A range starting on a Sunday holds one day of that week: its 1000 kg against the whole weeks' 2000 kg
    would read 'up'; left out, 3 whole weeks of 2000 kg (and this week, unfinished) are flat."""
    weekly_history(trainee)
    today = timezone.localdate()
    sunday = today - dt.timedelta(days=today.weekday()) - dt.timedelta(weeks=3, days=1)
    log_entry(trainee, dt.datetime.combine(sunday, dt.time(12), tzinfo=dt.UTC), "Bench Press", [10], [100])
    result = run_stats(trainee, view="trends", start_date=sunday.isoformat())
    assert result.success, result.formatted
    assert [week["volume"] for week in result.data["weeks"]] == [1000, 2000, 2000, 2000, 0]
    assert (result.data["direction"], result.data["change"]) == ("flat", 0.0)
    assert f"(from {day(sunday)} only)" in result.raw_formatted.splitlines()[1]
    assert result.raw_formatted.splitlines()[-1] == (
        "Trend: flat 0% (second half of the weeks vs the first, the first week (cut by the range) and this "
        "unfinished week left out)"
    )


def test_an_unplanned_warm_up_the_model_marks_so_is_not_a_working_set(trainee: Trainee) -> None:
    """'I did 2 × 15 band pull-aparts to warm up' logged with section warmup is stored as a warm-up and left out
    of the split; the same logged as training (no section) counts its 2 sets for the catalogue's muscles. In
    log_workout, an unplanned warm-up is kept as one too."""
    done = {"exercise_name": "Band Pull-Apart", "sets": 2, "reps": [15, 15]}
    warm_up = trainee.run("log_completed_exercise", {**done, "section": "warmup"})
    assert warm_up.success, warm_up.formatted
    assert not run_stats(trainee, view="breakdown", group_by="muscle", days=7).data["groups"]
    trained = trainee.run("log_completed_exercise", done)
    assert trained.success, trained.formatted
    split = run_stats(trainee, view="breakdown", group_by="muscle", days=7)
    assert sum(group["volume"] for group in split.data["groups"]) == 2
    assert generate(trainee, pulling_workout()).success
    logged = trainee.run(
        "log_workout",
        {
            "completed_exercises": [
                {"exercise_name": "Jumping Jack", "duration_min": 5, "section": "warmup"},
            ],
            "others_as_planned": True,
        },
    )
    assert logged.success, logged.formatted
    assert WorkoutLogEntry.objects.get(exercise_name="Jumping Jack").section == "warmup"


def test_a_logged_workout_counts_the_exercises_trained_plus_the_warm_up(trainee: Trainee) -> None:
    """The pull workout done as planned, with 5 min of band pull-aparts before it: the user hears the 2 main
    exercises they trained, plus the warm-up and cool-down, not '5 exercises'."""
    assert generate(trainee, pulling_workout()).success
    logged = trainee.run(
        "log_workout",
        {
            "completed_exercises": [
                {"exercise_name": "Band Pull-Apart", "duration_min": 5, "section": "warmup"}
            ],
            "others_as_planned": True,
        },
    )
    assert logged.success, logged.formatted
    assert told(logged).startswith("Logged 2 exercises, plus the warm-up and cool-down. Nice work!")


def test_the_muscle_split_stands_beside_the_users_muscle_goals(trainee: Trainee) -> None:
    """'Which muscles am I neglecting?' in one call: each muscle's share of the working sets beside its goal
    (chest 6 of 9 sets = 67% against 40%), and a goal muscle without a set (back, goal 60%) listed as such."""
    seed_history(trainee)
    MuscleGoalFactory.create(user_id=trainee.user_id, muscle="Back", weight=0.6)
    MuscleGoalFactory.create(user_id=trainee.user_id, muscle="Chest", weight=0.4)
    result = run_stats(trainee, view="breakdown", group_by="muscle", days=30)
    assert result.success, result.formatted
    assert result.raw_formatted.splitlines()[1:] == [
        "- Chest: 6 sets, 67% (goal 40%), trained in 2 workouts",
        "- Quadriceps: 3 sets, 33%, trained in 1 workout",
        "- Back: no working sets (goal 60%)",
    ]
    assert result.data["groups"][0]["goal"] == 0.4
