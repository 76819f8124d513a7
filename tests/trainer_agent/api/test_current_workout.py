"""currentWorkout in POST /agent/chat: the server's own workout round-trips unchanged, an exercise added in the
app is accepted, and a field the server does not know is refused by name (datasources_app.workouts.ClientWorkout).
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest
from django.test import Client

from datasources_app.demo import DEMO_USER_ID
from datasources_app.models import CurrentWorkout
from datasources_app.services import seed_demo_user
from datasources_app.workouts import is_main
from sessions_app.models import AgentSessionEvent
from tests.trainer_agent.api.support import JWT_SECRET, ApiUser, notify_then_idle, row_counts
from trainer_agent.auth import mint_token
from trainer_agent.llm.providers import override_provider

CHAT = "/agent/chat"
HAND_ADDED = {"name": "Cable Fly", "type": "reps", "sets": 3, "reps": [12, 12, 12], "rest_sec": 60}

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo() -> ApiUser:
    """The seeded demo user (home equipment) signed in, so the offline coach builds a real workout."""
    seed_demo_user()
    return ApiUser(
        user_id=DEMO_USER_ID, token=mint_token(user_id=DEMO_USER_ID, secret=JWT_SECRET), client=Client()
    )


def chat(user: ApiUser, message: str, **body: Any) -> dict[str, Any]:
    response = user.post_json(CHAT, {"message": message, **body})
    assert response.status_code == 200, response.content
    result: dict[str, Any] = response.json()
    return result


def stored_workout(user: ApiUser) -> tuple[str, dict[str, Any]]:
    current = CurrentWorkout.objects.get(user_id=user.user_id)
    return current.artifact_id, copy.deepcopy(current.workout)


def send_back(user: ApiUser, workout: dict[str, Any], session_id: str) -> dict[str, Any]:
    """A turn that only carries the client's workout: the model says something and stops, changing nothing."""
    with override_provider("offline", notify_then_idle("Noted")):
        return chat(user, "Here is my workout", currentWorkout=workout, sessionId=session_id)


def last_event(session_id: str, event_type: str, **match: Any) -> dict[str, Any]:
    events = AgentSessionEvent.objects.filter(session_id=uuid.UUID(session_id), event_type=event_type)
    data = [e.data for e in events.order_by("-sequence_number") if match.items() <= e.data.items()]
    assert data, f"no {event_type} event matching {match}"
    return dict(data[0])


def generated_and_logged(user: ApiUser) -> str:
    """A workout from the offline coach with its bench press logged (completed: true); returns the session id."""
    session_id = str(chat(user, "Give me a quick chest workout")["sessionId"])
    exercises = stored_workout(user)[1]["exercises"]
    bench = next(e for e in exercises if "bench" in e["exercise_name"].lower())
    chat(user, f"I did 3x8 at 20kg on {bench['exercise_name']}", sessionId=session_id)
    return session_id


def test_the_servers_workout_and_its_artifact_round_trip_unchanged_and_the_next_swap_works(
    demo: ApiUser,
) -> None:
    """The stored workout (ids, slugs, completed) and the delivered artifact, sent back, are stored as they were."""
    session_id = generated_and_logged(demo)
    artifact_id, original = stored_workout(demo)
    assert any(e.get("completed") for e in original["exercises"]), "the logged exercise is marked completed"
    assert all(e.get("id") and e.get("exercise_slug") for e in original["exercises"])
    done = sum(1 for e in original["exercises"] if e.get("completed"))

    send_back(demo, original, session_id)
    assert stored_workout(demo) == (artifact_id, original)
    knowledge = last_event(session_id, "knowledge", source="current_workout_session")
    assert f"Progress: {done}/{len(original['exercises'])}" in knowledge["data"]

    artifact = last_event(session_id, "artifact")
    assert artifact["artifact_id"] == artifact_id
    # The artifact holds the workout as delivered (before the log marked an exercise completed).
    delivered = {**original, "exercises": artifact["payload"]["exercises"]}
    send_back(demo, artifact, session_id)
    assert stored_workout(demo) == (artifact_id, delivered)

    swapped = chat(demo, "swap the 2nd exercise", sessionId=session_id)
    result = last_event(session_id, "tool_result", tool_name="swap_exercise")
    assert result["success"], result
    # The 2nd in words is the second main exercise (the warm-up's are counted only when named).
    second = [exercise for exercise in delivered["exercises"] if is_main(exercise)][1]
    assert result["result"]["data"]["old_exercise"]["id"] == second["id"]
    now = swapped["response"]["exercises"][second["order"] - 1]
    assert now["exercise_name"] != second["exercise_name"]


def test_an_exercise_added_in_the_app_is_accepted_with_a_new_id_and_the_next_order(demo: ApiUser) -> None:
    """Name, type, sets, reps and rest are enough for the client's own exercise; the others stay as sent."""
    session_id = generated_and_logged(demo)
    _, original = stored_workout(demo)
    edited = {**original, "exercises": [*original["exercises"], HAND_ADDED]}

    send_back(demo, edited, session_id)
    _, stored = stored_workout(demo)
    *kept, added = stored["exercises"]
    assert kept == original["exercises"]
    count = len(original["exercises"])
    assert added["id"].startswith("ex_") and added["id"] not in {e["id"] for e in kept}
    assert {k: v for k, v in added.items() if k != "id"} == {
        "exercise_name": "Cable Fly",
        "exercise_type": "reps",
        "sets": 3,
        "reps": [12, 12, 12],
        "rest_sec": 60,
        "order": count + 1,
    }
    knowledge = last_event(session_id, "knowledge", source="current_workout_session")
    assert f"○ {count + 1}. Cable Fly (reps)" in knowledge["data"]

    chat(demo, "swap the 2nd exercise", sessionId=session_id)
    result = last_event(session_id, "tool_result", tool_name="swap_exercise")
    assert result["success"], result
    assert CurrentWorkout.objects.get(user_id=demo.user_id).workout["exercises"][-1]["id"] == added["id"]


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (lambda w: w["exercises"][0].update(rest_seconds=90), "currentWorkout.exercises.0.rest_seconds"),
        (lambda w: w.update(difficulty="hard"), "currentWorkout.difficulty"),
        (
            lambda w: w["exercises"][0]["muscles_utilized"][0].update(role="primary"),
            "muscles_utilized.0.role",
        ),
        (lambda w: w["summary"].update(calories=300), "currentWorkout.summary.calories"),
    ],
)
def test_a_field_the_server_does_not_know_is_refused_by_name_and_nothing_is_written(
    demo: ApiUser, edit: Any, named: str
) -> None:
    """Unknown fields are not dropped silently: the 400 names each one, and nothing is stored."""
    session_id = generated_and_logged(demo)
    _, workout = stored_workout(demo)
    edit(workout)
    before = row_counts()
    response = demo.post_json(CHAT, {"message": "hi", "currentWorkout": workout, "sessionId": session_id})
    assert response.status_code == 400
    assert named in response.json()["detail"]
    assert "Extra inputs are not permitted" in response.json()["detail"]
    assert row_counts() == before


@pytest.mark.parametrize(
    ("exercise", "named", "says"),
    [
        ({"sets": 10**12}, "currentWorkout.exercises.0.sets", "sets must be from 1 to 50, got 1000000000000"),
        ({"reps": [12, -3, 12]}, "currentWorkout.exercises.0.reps", "reps must be from 1 to 1000, got -3"),
        (
            {"load_each": [-100] * 3},
            "currentWorkout.exercises.0.load_each",
            "load_each must be from 0 to 2000",
        ),
        ({"load_each": [1e308] * 3}, "currentWorkout.exercises.0.load_each", "got 1e+308"),
        ({"rest_sec": 10**12}, "currentWorkout.exercises.0.rest_sec", "rest_sec must be from 0 to 3600"),
        ({"implements": 3}, "currentWorkout.exercises.0.implements", "implements must be from 1 to 2, got 3"),
        (
            {"group": {"id": "c", "type": "circuit", "position": 1, "rounds": 10**12}},
            "currentWorkout.exercises.0.group.rounds",
            "rounds must be from 1 to 200",
        ),
    ],
)
def test_a_number_out_of_a_workouts_limits_is_refused_by_name_and_nothing_is_written(
    demo: ApiUser, exercise: dict[str, Any], named: str, says: str
) -> None:
    """The client's workout has the limits of a generated one (datasources_app.workouts.NUMBER_LIMITS)."""
    workout = {"title": "Mine", "exercises": [{**HAND_ADDED, **exercise}]}
    before = row_counts()
    response = demo.post_json(CHAT, {"message": "hi", "currentWorkout": workout})
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert named in detail and says in detail, detail
    assert row_counts() == before
