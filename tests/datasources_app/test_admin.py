"""The staff admin pages for the user's data and the catalogue."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from datasources_app.models import Exercise
from tests.datasources_app.factories import (
    CategoryGoalFactory,
    CurrentWorkoutFactory,
    LocationFactory,
    MilestoneGoalFactory,
    MuscleGoalFactory,
    PreferenceFactory,
    ScheduledWorkoutFactory,
    UserProfileFactory,
    UserSettingsFactory,
    WorkoutLogEntryFactory,
    WorkoutPlanFactory,
)

pytestmark = pytest.mark.django_db


MODELS = [
    "userprofile",
    "usersettings",
    "equipment",
    "location",
    "exercise",
    "currentworkout",
    "preference",
    "workoutlog",
    "categorygoal",
    "musclegoal",
    "milestonegoal",
    "workoutplan",
    "scheduledworkout",
]


@pytest.mark.parametrize("model", MODELS)
def test_changelists_render(admin_client: Client, model: str) -> None:
    """Every datasources model has a working admin list, searchable."""
    UserProfileFactory.create()
    UserSettingsFactory.create()
    LocationFactory.create(equipment=["dumbbells"])
    CurrentWorkoutFactory.create()
    PreferenceFactory.create()
    WorkoutLogEntryFactory.create()
    CategoryGoalFactory.create()
    MuscleGoalFactory.create()
    MilestoneGoalFactory.create()
    ScheduledWorkoutFactory.create(plan=WorkoutPlanFactory.create())
    url = reverse(f"admin:datasources_app_{model}_changelist")
    assert admin_client.get(url).status_code == 200
    assert admin_client.get(url, {"q": "a"}).status_code == 200


def test_exercise_change_page_shows_equipment(admin_client: Client) -> None:
    """An exercise's admin page renders with its equipment."""
    exercise = Exercise.objects.get(slug="barbell-bench-press")
    response = admin_client.get(reverse("admin:datasources_app_exercise_change", args=[exercise.pk]))
    assert response.status_code == 200
    assert b"Barbell Bench Press" in response.content


def test_workout_log_change_page_shows_entries(admin_client: Client) -> None:
    """A workout log's admin page lists its entries inline."""
    entry = WorkoutLogEntryFactory.create(exercise_name="Goblet Squat")
    response = admin_client.get(reverse("admin:datasources_app_workoutlog_change", args=[entry.log_id]))
    assert response.status_code == 200
    assert b"Goblet Squat" in response.content
