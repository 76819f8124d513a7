"""set_goals (docs/contracts.md §11.5 (tool list)) and the milestone goal tools."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from django.utils import timezone

from datasources_app.catalog import MUSCLES
from datasources_app.models import CategoryGoal, MilestoneGoal, MuscleGoal
from tests.datasources_app.factories import CategoryGoalFactory, MilestoneGoalFactory, MuscleGoalFactory
from tests.tools_app.workout_support import Trainee, make_trainee
from tools_app.registry import get_tool

pytestmark = pytest.mark.django_db


@pytest.fixture
def trainee() -> Trainee:
    return make_trainee()


def category_weights(user_id: uuid.UUID) -> dict[str, float]:
    return {goal.category: round(goal.weight, 4) for goal in CategoryGoal.objects.filter(user_id=user_id)}


@pytest.mark.parametrize(
    ("name", "start", "done", "observation"),
    [
        ("set_goals", "Updating your goals...", "Goals updated", "summary"),
        ("create_milestone_goal", "Setting your milestone...", "Milestone set", "summary"),
        ("update_milestone_goal", "Updating your milestone...", "Milestone updated", "summary"),
    ],
)
def test_goal_tools_metadata(name: str, start: str, done: str, observation: str) -> None:
    """Status messages, goals category and observation size as in docs/contracts.md §11.2 (observations and status messages)."""
    tool = get_tool(name)
    assert (tool.status_start, tool.status_done, tool.category, tool.observation) == (
        start,
        done,
        "goals",
        observation,
    )


def test_set_category_goals_normalises_weights_and_replaces_old_ones(trainee: Trainee) -> None:
    """Percentages are scaled to sum 1, earlier categories disappear, the summary shows the split."""
    CategoryGoalFactory.create(user_id=trainee.user_id, category="Old", weight=1.0)
    result = trainee.run(
        "set_goals",
        {"goal_type": "category", "category_goals": {"Strength": 50, "Cardio": 30, "Mobility": 20}},
    )
    assert result.success, result.formatted
    assert category_weights(trainee.user_id) == {"Strength": 0.5, "Cardio": 0.3, "Mobility": 0.2}
    assert result.data["count"] == 3
    assert result.raw_formatted == "category goals set: Strength 50%, Cardio 30%, Mobility 20%"
    assert result.status_message == "Goals updated"


def test_set_goals_accepts_seed_001_category_list_with_descriptions(trainee: Trainee) -> None:
    """Seed 001's [{category, description, percentage}] form is accepted; descriptions are stored."""
    result = trainee.run(
        "set_goals",
        {
            "goal_type": "category",
            "category_goals": [
                {"category": "Strength", "description": "Compound lifts", "percentage": 55},
                {"category": "Cardio", "percentage": 45},
            ],
        },
    )
    assert result.success, result.formatted
    strength = CategoryGoal.objects.get(user_id=trainee.user_id, category="Strength")
    assert (round(strength.weight, 2), strength.description) == (0.55, "Compound lifts")


def test_set_muscle_goals_accepts_any_case(trainee: Trainee) -> None:
    """Muscle names are matched case-insensitively and stored in canonical spelling, normalised."""
    MuscleGoalFactory.create(user_id=trainee.user_id, muscle="Neck", weight=1.0)
    result = trainee.run(
        "set_goals", {"goal_type": "muscle", "muscle_goals": {"chest": 0.3, "lower back": 0.1, "Back": 0.6}}
    )
    assert result.success, result.formatted
    stored = {
        goal.muscle: round(goal.weight, 2) for goal in MuscleGoal.objects.filter(user_id=trainee.user_id)
    }
    assert stored == {"Chest": 0.3, "Lower Back": 0.1, "Back": 0.6}


def test_unknown_muscle_fails_naming_the_valid_ones(trainee: Trainee) -> None:
    """An unknown muscle is a failed result listing all 16 muscles; existing goals are kept."""
    MuscleGoalFactory.create(user_id=trainee.user_id, muscle="Neck", weight=1.0)
    result = trainee.run("set_goals", {"goal_type": "muscle", "muscle_goals": {"Chest": 50, "Pecs": 50}})
    assert not result.success
    assert "unknown muscles: Pecs" in result.data["error"]
    assert all(muscle in result.data["error"] for muscle in MUSCLES)
    assert list(MuscleGoal.objects.filter(user_id=trainee.user_id).values_list("muscle", flat=True)) == [
        "Neck"
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"goal_type": "category"}, "needs category_goals"),
        ({"goal_type": "muscle", "muscle_goals": {}}, "needs muscle_goals"),
        (
            {"goal_type": "category", "category_goals": {"A": 1}, "muscle_goals": {"Chest": 1}},
            "Call set_goals once per goal type",
        ),
        ({"goal_type": "category", "category_goals": {"A": 0, "B": 0}}, "must not all be zero"),
        ({"goal_type": "category", "category_goals": {"Cardio": 1, "cardio": 1}}, "given twice"),
    ],
)
def test_set_goals_failures(trainee: Trainee, args: dict[str, object], message: str) -> None:
    """Missing, mixed, all-zero and duplicate goals fail with a message saying what to fix."""
    result = trainee.run("set_goals", args)
    assert not result.success
    assert message in result.data["error"]
    assert not CategoryGoal.objects.filter(user_id=trainee.user_id).exists()


def test_set_goals_rejects_negative_weights_and_unknown_goal_type(trainee: Trainee) -> None:
    """Schema validation names the bad weight and the goal_type enum."""
    result = trainee.run("set_goals", {"goal_type": "body", "category_goals": {"A": -1}})
    assert not result.success
    assert "goal_type" in result.data["error"] and "category_goals.A" in result.data["error"]


def test_create_milestone_goal(trainee: Trainee) -> None:
    """A milestone is stored with its target, progress and deadline; the summary gives its id."""
    deadline = (timezone.localdate() + dt.timedelta(days=90)).isoformat()
    result = trainee.run(
        "create_milestone_goal",
        {
            "title": "Bench 100 kg",
            "target_value": 100,
            "unit": "kg",
            "current_value": 80,
            "deadline": deadline,
        },
    )
    assert result.success, result.formatted
    milestone = MilestoneGoal.objects.get(user_id=trainee.user_id)
    assert (milestone.title, milestone.target_value, milestone.current_value, milestone.status) == (
        "Bench 100 kg",
        100,
        80,
        "active",
    )
    assert result.raw_formatted.startswith("milestone set: Bench 100 kg 80/100kg by ")
    assert str(milestone.id) in result.raw_formatted


def test_create_milestone_with_a_past_deadline_fails(trainee: Trainee) -> None:
    """A deadline before today is refused and nothing is stored."""
    past = (timezone.localdate() - dt.timedelta(days=2)).isoformat()
    result = trainee.run("create_milestone_goal", {"title": "5K", "target_value": 5, "deadline": past})
    assert not result.success and "in the past" in result.data["error"]
    assert not MilestoneGoal.objects.filter(user_id=trainee.user_id).exists()


def test_update_milestone_progress_and_achieve(trainee: Trainee) -> None:
    """Progress is recorded; status achieved stamps achieved_at."""
    milestone = MilestoneGoalFactory.create(user_id=trainee.user_id)
    result = trainee.run(
        "update_milestone_goal",
        {"milestone_id": str(milestone.id), "current_value": 100, "status": "achieved"},
    )
    assert result.success, result.formatted
    milestone.refresh_from_db()
    assert (milestone.current_value, milestone.status) == (100, "achieved")
    assert milestone.achieved_at is not None
    assert result.raw_formatted == "milestone updated: Bench press 100 kg 100/100kg, achieved"


@pytest.mark.parametrize("which", ["unknown", "not-a-uuid", "other user"])
def test_update_unknown_or_foreign_milestone_fails(trainee: Trainee, which: str) -> None:
    """Only the user's own milestones can be updated; the failure lists their active ones."""
    own = MilestoneGoalFactory.create(user_id=trainee.user_id, title="Run 5K")
    foreign = MilestoneGoalFactory.create()
    reference = {"unknown": str(uuid.uuid4()), "not-a-uuid": "bench", "other user": str(foreign.id)}[which]
    result = trainee.run("update_milestone_goal", {"milestone_id": reference, "current_value": 1})
    assert not result.success
    assert "not found" in result.data["error"] and str(own.id) in result.data["error"]
    foreign.refresh_from_db()
    assert foreign.current_value == 80


def test_update_milestone_without_changes_fails(trainee: Trainee) -> None:
    """An update that changes nothing says which fields to give."""
    milestone = MilestoneGoalFactory.create(user_id=trainee.user_id)
    result = trainee.run("update_milestone_goal", {"milestone_id": str(milestone.id)})
    assert not result.success and "Nothing to update" in result.data["error"]
