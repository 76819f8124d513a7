"""/exercises/history and /exercises/distribution: the caller's own training data, never anyone else's."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from datasources_app.models import WorkoutLog
from tests.datasources_app.factories import MuscleGoalFactory, WorkoutLogEntryFactory, WorkoutLogFactory
from tests.trainer_agent.api.support import ApiUser

HISTORY = "/exercises/history"
DISTRIBUTION = "/exercises/distribution"


def log_workout(user_id: uuid.UUID, *, days_ago: float, title: str, muscle: str = "Chest") -> WorkoutLog:
    when = timezone.now() - timedelta(days=days_ago)
    log = WorkoutLogFactory.create(user_id=user_id, title=title, completed_at=when)
    WorkoutLogEntryFactory(
        log=log,
        exercise_name="Push-Up",
        exercise_type="reps",
        actual_sets=3,
        muscles=[{"muscle": muscle, "share": 1.0}],
        goals=[{"goal": "strength", "share": 1.0}],
        completed_at=when,
    )
    return log


@pytest.mark.django_db
def test_history_lists_the_callers_workouts_with_entries_newest_first(alice: ApiUser, bob: ApiUser) -> None:
    """History holds the caller's logs (with entries), newest first; other users' logs never appear."""
    log_workout(alice.user_id, days_ago=3, title="Older")
    log_workout(alice.user_id, days_ago=1, title="Newer")
    log_workout(bob.user_id, days_ago=0, title="Bob's")
    response = alice.get(HISTORY)
    assert response.status_code == 200
    workouts = response.json()["workouts"]
    assert [w["title"] for w in workouts] == ["Newer", "Older"]
    assert workouts[0]["entries"][0]["exercise_name"] == "Push-Up"
    assert workouts[0]["entries"][0]["muscles"] == [{"muscle": "Chest", "share": 1.0}]


@pytest.mark.django_db
def test_history_honours_limit_and_days_back(alice: ApiUser) -> None:
    """limit caps the count; days_back keeps only recent workouts."""
    for days in (1, 2, 10):
        log_workout(alice.user_id, days_ago=days, title=f"{days}d")
    assert [w["title"] for w in alice.get(HISTORY, data={"limit": 1}).json()["workouts"]] == ["1d"]
    assert [w["title"] for w in alice.get(HISTORY, data={"days_back": 5}).json()["workouts"]] == ["1d", "2d"]


@pytest.mark.parametrize(
    "query", [{"limit": "0"}, {"limit": "x"}, {"days_back": "0"}, {"days_back": "99999"}]
)
@pytest.mark.django_db
def test_history_with_bad_query_is_400(alice: ApiUser, query: dict[str, str]) -> None:
    """Out-of-range or non-integer parameters are 400 naming the parameter."""
    response = alice.get(HISTORY, data=query)
    assert response.status_code == 400
    assert response.json()["detail"].startswith(next(iter(query)))


@pytest.mark.parametrize("base", [HISTORY, DISTRIBUTION])
@pytest.mark.django_db
def test_path_form_with_the_callers_own_id_works(alice: ApiUser, base: str) -> None:
    """Seed 001's `/<userId>` form answers for the caller's own id like the plain form."""
    log_workout(alice.user_id, days_ago=1, title="Mine")
    assert alice.get(f"{base}/{alice.user_id}").json() == alice.get(base).json()


@pytest.mark.parametrize("base", [HISTORY, DISTRIBUTION])
@pytest.mark.django_db
def test_path_form_with_another_user_id_is_404(alice: ApiUser, bob: ApiUser, base: str) -> None:
    """Another user's id in the path (or a non-UUID) is 404: the path is never trusted."""
    log_workout(bob.user_id, days_ago=1, title="Bob's")
    for other in (str(bob.user_id), "not-a-uuid"):
        response = alice.get(f"{base}/{other}")
        assert response.status_code == 404
        assert response.json() == {"detail": "User not found."}


@pytest.mark.django_db
def test_distribution_compares_training_with_goals(alice: ApiUser, bob: ApiUser) -> None:
    """Distribution reports muscle and category shares of the window against the user's goals."""
    MuscleGoalFactory(user_id=alice.user_id, muscle="Chest", weight=0.5)
    MuscleGoalFactory(user_id=alice.user_id, muscle="Back", weight=0.5)
    log_workout(alice.user_id, days_ago=1, title="Push", muscle="Chest")
    log_workout(alice.user_id, days_ago=30, title="Old", muscle="Back")
    log_workout(bob.user_id, days_ago=1, title="Bob", muscle="Back")
    response = alice.get(DISTRIBUTION, data={"days": 7})
    assert response.status_code == 200
    body = response.json()
    assert body["window_days"] == 7
    rows = {row["name"]: row for row in body["muscles"]["rows"]}
    assert rows["Chest"]["actual"] == 1.0 and rows["Back"]["actual"] == 0.0
    assert rows["Back"]["debt"] == 0.5
    assert body["muscles"]["rows"][0]["name"] == "Back"  # most under-trained first
    assert body["muscles"]["entry_count"] == 1
    assert body["categories"]["rows"][0]["name"] == "strength"


@pytest.mark.django_db
def test_distribution_numbers_carry_no_float_noise(alice: ApiUser) -> None:
    """Shares and volumes are sent rounded (4 decimals for fractions, 2 for volumes): 3 sets x 0.1 is a volume
    of 0.3, not 0.30000000000000004, and a debt of 0.2 - 0.1 is 0.1."""
    for muscle, weight in (("Chest", 0.5), ("Triceps", 0.3), ("Shoulders", 0.2)):
        MuscleGoalFactory(user_id=alice.user_id, muscle=muscle, weight=weight)
    when = timezone.now() - timedelta(days=1)
    WorkoutLogEntryFactory(
        log=WorkoutLogFactory.create(user_id=alice.user_id, title="Push", completed_at=when),
        exercise_name="Dumbbell Bench Press",
        exercise_type="reps",
        actual_sets=3,
        muscles=[
            {"muscle": "Chest", "share": 0.7},
            {"muscle": "Triceps", "share": 0.2},
            {"muscle": "Shoulders", "share": 0.1},
        ],
        goals=[
            {"goal": "strength", "share": 0.6},
            {"goal": "hypertrophy", "share": 0.3},
            {"goal": "power", "share": 0.1},
        ],
        completed_at=when,
    )
    body = alice.get(DISTRIBUTION).json()
    rows = {row["name"]: row for row in body["muscles"]["rows"]}
    assert rows["Shoulders"] == {
        "name": "Shoulders",
        "target": 0.2,
        "actual": 0.1,
        "volume": 0.3,
        "debt": 0.1,
    }
    assert rows["Triceps"] == {"name": "Triceps", "target": 0.3, "actual": 0.2, "volume": 0.6, "debt": 0.1}
    assert rows["Chest"] == {"name": "Chest", "target": 0.5, "actual": 0.7, "volume": 2.1, "debt": -0.2}
    assert body["muscles"]["total_volume"] == 3.0
    categories = {row["name"]: row for row in body["categories"]["rows"]}
    assert categories["power"]["volume"] == 0.3 and categories["hypertrophy"]["volume"] == 0.9
    for distribution in (body["muscles"], body["categories"]):
        numbers = [distribution["total_volume"]] + [
            row[field] for row in distribution["rows"] for field in ("target", "actual", "volume", "debt")
        ]
        assert all(len(repr(float(number)).partition(".")[2]) <= 4 for number in numbers), numbers


@pytest.mark.parametrize("days", ["0", "366", "a"])
@pytest.mark.django_db
def test_distribution_with_bad_days_is_400(alice: ApiUser, days: str) -> None:
    """days must be an integer from 1 to 365."""
    response = alice.get(DISTRIBUTION, data={"days": days})
    assert response.status_code == 400
    assert response.json()["detail"].startswith("days:")
