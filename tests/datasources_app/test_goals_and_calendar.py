"""Goals (category, muscle, milestone), the calendar and workout plans."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from django.utils import timezone

from datasources_app import selectors, services
from datasources_app.models import CategoryGoal, MilestoneGoal, MuscleGoal, ScheduledWorkout, WorkoutPlan
from tests.datasources_app.factories import (
    CategoryGoalFactory,
    MilestoneGoalFactory,
    MuscleGoalFactory,
    ScheduledWorkoutFactory,
    WorkoutPlanFactory,
)

pytestmark = pytest.mark.django_db


# --- Category and muscle goals ------------------------------------------------------------------------------
def test_set_category_goals_replaces_and_normalises() -> None:
    """Percentages become weights summing to 1; the old set is replaced; descriptions are kept."""
    user_id = uuid.uuid4()
    CategoryGoalFactory.create(user_id=user_id, category="Old", weight=1.0)
    other = CategoryGoalFactory.create()
    goals = services.set_category_goals(
        user_id=user_id,
        goals={"Strength": 50, "Zone 2 Cardio": 30, "Mobility": 20, "Unused": 0},
        descriptions={"Strength": "Compound lifts"},
    )
    assert [(goal.category, goal.weight, goal.description) for goal in goals] == [
        ("Strength", pytest.approx(0.5), "Compound lifts"),
        ("Zone 2 Cardio", pytest.approx(0.3), ""),
        ("Mobility", pytest.approx(0.2), ""),
    ]
    assert selectors.list_category_goals(user_id=user_id) == goals
    assert CategoryGoal.objects.filter(pk=other.pk).exists()


@pytest.mark.parametrize(
    ("goals", "message"),
    [
        ({"Strength": 1, "strength": 1}, "given twice"),
        ({"Strength": -1, "Cardio": 2}, "Strength: -1"),
        ({"Strength": 0}, "must not all be zero"),
        ({" ": 1}, "must not be empty"),
        ({"Strength": "lots"}, "Strength: 'lots'"),
    ],
)
def test_set_category_goals_rejects_bad_input(goals: dict[str, object], message: str) -> None:
    """Bad names or weights raise a ValueError saying what is wrong, leaving the goals as they were."""
    user_id = uuid.uuid4()
    CategoryGoalFactory.create(user_id=user_id)
    with pytest.raises(ValueError, match=message):
        services.set_category_goals(user_id=user_id, goals=goals)  # type: ignore[arg-type]
    assert CategoryGoal.objects.filter(user_id=user_id).count() == 1


def test_set_category_goals_with_nothing_clears() -> None:
    """An empty mapping removes the user's category goals."""
    goal = CategoryGoalFactory.create()
    assert services.set_category_goals(user_id=goal.user_id, goals={}) == []


def test_set_muscle_goals_canonicalises_names() -> None:
    """Muscle names match any case and spacing and are stored canonically, weights normalised."""
    user_id = uuid.uuid4()
    MuscleGoalFactory.create(user_id=user_id, muscle="Neck")
    goals = services.set_muscle_goals(user_id=user_id, goals={"chest": 1, "lower  back": 3})
    assert [(goal.muscle, goal.weight) for goal in goals] == [
        ("Lower Back", pytest.approx(0.75)),
        ("Chest", pytest.approx(0.25)),
    ]


def test_set_muscle_goals_rejects_unknown_and_duplicate_muscles() -> None:
    """Unknown muscles are named along with the valid 16; the same muscle twice is refused."""
    user_id = uuid.uuid4()
    with pytest.raises(ValueError, match=r"unknown muscles: Lats, Pecs\. Valid muscles: Chest, Back"):
        services.set_muscle_goals(user_id=user_id, goals={"Pecs": 1, "Lats": 1, "Chest": 1})
    with pytest.raises(ValueError, match="muscle given twice: Chest"):
        services.set_muscle_goals(user_id=user_id, goals={"chest": 1, "Chest": 1})
    assert not MuscleGoal.objects.filter(user_id=user_id).exists()


# --- Milestones ---------------------------------------------------------------------------------------------
def test_milestone_lifecycle() -> None:
    """Create, record progress, achieve (stamps achieved_at), filter by status, delete own only."""
    user_id = uuid.uuid4()
    milestone = services.create_milestone_goal(
        user_id=user_id,
        title=" Run 5 km ",
        target_value=5,
        unit="km",
        metric="distance",
        deadline=dt.date(2030, 1, 1),
    )
    assert (milestone.title, milestone.status, milestone.current_value) == ("Run 5 km", "active", 0)
    services.update_milestone_goal(user_id=user_id, milestone_id=milestone.id, current_value=3.5)
    achieved = services.update_milestone_goal(user_id=user_id, milestone_id=milestone.id, status="achieved")
    assert achieved.current_value == 3.5 and achieved.achieved_at is not None
    assert selectors.list_milestone_goals(user_id=user_id, status="active") == []
    assert selectors.list_milestone_goals(user_id=user_id, status="achieved") == [achieved]
    with pytest.raises(ValueError, match="status must be one of active, achieved, abandoned"):
        services.update_milestone_goal(user_id=user_id, milestone_id=milestone.id, status="done")
    with pytest.raises(MilestoneGoal.DoesNotExist):
        services.update_milestone_goal(user_id=uuid.uuid4(), milestone_id=milestone.id, current_value=1)
    assert services.delete_milestone_goal(user_id=uuid.uuid4(), milestone_id=milestone.id) is False
    assert services.delete_milestone_goal(user_id=user_id, milestone_id=milestone.id) is True


def test_milestones_soonest_deadline_first_undated_last() -> None:
    """Milestones are listed by deadline with undated ones at the end."""
    user_id = uuid.uuid4()
    undated = MilestoneGoalFactory.create(user_id=user_id, deadline=None)
    late = MilestoneGoalFactory.create(user_id=user_id, deadline=dt.date(2031, 1, 1))
    soon = MilestoneGoalFactory.create(user_id=user_id, deadline=dt.date(2030, 1, 1))
    assert selectors.list_milestone_goals(user_id=user_id) == [soon, late, undated]


# --- Calendar -----------------------------------------------------------------------------------------------
def test_schedule_update_and_delete_own_workouts() -> None:
    """Scheduling stores the fields; updates change only what is given (time can be cleared); others' are
    out of reach."""
    user_id = uuid.uuid4()
    day = dt.date(2030, 3, 4)
    scheduled = services.schedule_workout(
        user_id=user_id,
        scheduled_date=day,
        title="Upper Body",
        scheduled_time=dt.time(7, 30),
        duration_minutes=45,
    )
    updated = services.update_scheduled_workout(
        user_id=user_id,
        scheduled_workout_id=scheduled.id,
        scheduled_time=None,
        notes="Bring bands",
        status="skipped",
    )
    assert (updated.scheduled_date, updated.scheduled_time, updated.title) == (day, None, "Upper Body")
    assert (updated.notes, updated.status, updated.duration_minutes) == ("Bring bands", "skipped", 45)
    with pytest.raises(ValueError, match="status must be one of scheduled"):
        services.update_scheduled_workout(user_id=user_id, scheduled_workout_id=scheduled.id, status="late")
    with pytest.raises(ScheduledWorkout.DoesNotExist):
        services.update_scheduled_workout(user_id=uuid.uuid4(), scheduled_workout_id=scheduled.id, title="x")
    assert services.delete_scheduled_workout(user_id=uuid.uuid4(), scheduled_workout_id=scheduled.id) is False
    assert services.delete_scheduled_workout(user_id=user_id, scheduled_workout_id=scheduled.id) is True


def test_schedule_workout_refuses_another_users_plan() -> None:
    """A scheduled workout can only join the user's own plan."""
    plan = WorkoutPlanFactory.create()
    with pytest.raises(WorkoutPlan.DoesNotExist):
        services.schedule_workout(
            user_id=uuid.uuid4(), scheduled_date=dt.date(2030, 1, 1), title="x", plan_id=plan.id
        )


def test_scheduled_workouts_window() -> None:
    """From the start day through start + days_ahead, in date and time order; statuses filter."""
    user_id = uuid.uuid4()
    start = dt.date(2030, 6, 10)
    for offset in (-1, 0, 14, 15):
        ScheduledWorkoutFactory.create(user_id=user_id, scheduled_date=start + dt.timedelta(days=offset))
    evening = ScheduledWorkoutFactory.create(
        user_id=user_id, scheduled_date=start, scheduled_time=dt.time(18)
    )
    morning = ScheduledWorkoutFactory.create(
        user_id=user_id, scheduled_date=start, scheduled_time=dt.time(7), status="cancelled"
    )
    items = selectors.scheduled_workouts(user_id=user_id, start=start)
    assert [(item.scheduled_date - start).days for item in items] == [0, 0, 0, 14]
    assert items[:2] == [morning, evening]
    assert morning not in selectors.scheduled_workouts(user_id=user_id, start=start, statuses=["scheduled"])


# --- Plans ----------------------------------------------------------------------------------------------------
def _plan_days(start: dt.date) -> dict[str, object]:
    return {
        "weeks": [
            {
                "week": 1,
                "days": [
                    {"date": str(start), "title": "Upper", "duration_minutes": 45},
                    {"date": str(start + dt.timedelta(days=2)), "title": "Lower"},
                    {"title": "Optional run"},
                ],
            }
        ]
    }


def test_create_workout_plan_schedules_dated_days() -> None:
    """With schedule_days every dated day becomes a scheduled workout linked to the plan."""
    user_id = uuid.uuid4()
    start = timezone.localdate() + dt.timedelta(days=1)
    plan = services.create_workout_plan(
        user_id=user_id,
        name="Base",
        goal="Get fit",
        weeks=1,
        start_date=start,
        plan=_plan_days(start),
        schedule_days=True,
    )
    scheduled = list(plan.scheduled_workouts.order_by("scheduled_date"))
    assert [(item.title, item.scheduled_date, item.duration_minutes) for item in scheduled] == [
        ("Upper", start, 45),
        ("Lower", start + dt.timedelta(days=2), None),
    ]
    assert all(item.user_id == user_id for item in scheduled)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"name": " "}, "name"), ({"weeks": 0}, "weeks"), ({"status": "paused"}, "status must be one of draft")],
)
def test_create_workout_plan_rejects_bad_input(kwargs: dict[str, object], message: str) -> None:
    """Empty names, no weeks and unknown statuses are refused."""
    arguments: dict[str, object] = {"user_id": uuid.uuid4(), "name": "Plan", **kwargs}
    with pytest.raises(ValueError, match=message):
        services.create_workout_plan(**arguments)  # type: ignore[arg-type]


def test_archiving_a_plan_cancels_its_future_sessions() -> None:
    """Archived: future scheduled sessions are cancelled, completed ones stay; not the user's → DoesNotExist."""
    user_id = uuid.uuid4()
    start = timezone.localdate() + dt.timedelta(days=1)
    plan = services.create_workout_plan(
        user_id=user_id, name="Base", start_date=start, plan=_plan_days(start), schedule_days=True
    )
    first = plan.scheduled_workouts.order_by("scheduled_date").first()
    assert first is not None
    services.update_scheduled_workout(user_id=user_id, scheduled_workout_id=first.id, status="completed")
    with pytest.raises(WorkoutPlan.DoesNotExist):
        services.update_workout_plan_status(user_id=uuid.uuid4(), plan_id=plan.id, status="archived")
    archived = services.update_workout_plan_status(user_id=user_id, plan_id=plan.id, status="archived")
    assert archived.status == "archived"
    assert sorted(plan.scheduled_workouts.values_list("status", flat=True)) == ["cancelled", "completed"]
    assert selectors.list_workout_plans(user_id=user_id, status="active") == []
    with pytest.raises(ValueError, match="status"):
        services.update_workout_plan_status(user_id=user_id, plan_id=plan.id, status="paused")


def test_delete_workout_plan_removes_pending_sessions() -> None:
    """Deleting a plan deletes its pending sessions; done ones stay, unlinked; others' plans are untouched."""
    user_id = uuid.uuid4()
    plan = WorkoutPlanFactory.create(user_id=user_id)
    pending = ScheduledWorkoutFactory.create(user_id=user_id, plan=plan)
    done = ScheduledWorkoutFactory.create(user_id=user_id, plan=plan, status="completed")
    assert services.delete_workout_plan(user_id=uuid.uuid4(), plan_id=plan.id) is False
    assert services.delete_workout_plan(user_id=user_id, plan_id=plan.id) is True
    assert not ScheduledWorkout.objects.filter(pk=pending.pk).exists()
    done.refresh_from_db()
    assert done.plan_id is None


def test_a_day_the_user_changed_while_the_week_was_prepared_stays_theirs() -> None:
    """The week chain stores a prepared day only while it is still pending on the calendar: a day the user
    cancelled or deleted meanwhile keeps what the user did, and the chain is told (False)."""
    user_id = uuid.uuid4()
    start = timezone.localdate() + dt.timedelta(days=1)
    plan = services.create_workout_plan(
        user_id=user_id, name="Base", weeks=1, start_date=start, plan=_plan_days(start), schedule_days=True
    )
    upper, lower = services.start_week_preparation(
        user_id=user_id, plan_id=plan.pk, first=start, last=start + dt.timedelta(days=6)
    )
    services.update_scheduled_workout(user_id=user_id, scheduled_workout_id=upper.pk, status="cancelled")
    services.delete_scheduled_workout(user_id=user_id, scheduled_workout_id=lower.pk)
    workout = {"title": "Upper", "exercises": []}
    assert not services.store_prepared_workout(
        user_id=user_id, scheduled_workout_id=upper.pk, workout=workout, message="Go!"
    )
    assert not services.fail_workout_preparation(user_id=user_id, scheduled_workout_id=lower.pk, error="x")
    upper.refresh_from_db()
    assert (upper.status, upper.message, upper.workout) == ("cancelled", "", None)
