"""A real turn (the 2026-11-27 trial): "cut the rest times on everything" is one adjust_exercise call and one new
workout version, not one call per exercise."""

from __future__ import annotations

import pytest

from datasources_app.selectors import get_current_workout
from sessions_app.models import AgentSessionEvent
from tests.tools_app.workout_support import bodyweight_exercise, generate, make_trainee, reps_exercise
from tools_app.workout_tools import workout_exercises
from trainer_agent.llm.providers import override_provider
from trainer_agent.llm.scripted import ScriptedProvider, tool_response
from trainer_agent.turns import run_turn


@pytest.mark.django_db
def test_cutting_the_rest_on_everything_is_one_call_and_one_new_version() -> None:
    """The model's one call changes every main exercise's rest (the warm-up keeps its own) in one artifact."""
    trainee = make_trainee()
    warm_up = bodyweight_exercise(1, exercise_name="Jumping Jack", sets=1, reps=[30], rest_sec=30)
    warm_up["group"] = {"id": "g_warm", "type": "warmup", "position": 1}
    exercises = [warm_up, reps_exercise(2), bodyweight_exercise(3)]
    exercises.append(reps_exercise(4, exercise_name="Dumbbell Biceps Curl", load_each=[10, 10, 10]))
    assert generate(trainee, {"title": "Upper", "exercises": exercises}).success
    provider = ScriptedProvider(
        [
            tool_response("adjust_exercise", {"exercise_id": "everything", "change": "less_rest"}),
            tool_response("message_notify_user", {"message": "Rests are 30 s shorter everywhere."}),
            tool_response("idle", {"reason": "done"}),
        ]
    )
    message = "Cut the rest times on everything, I'm short on time"
    with override_provider("claude-haiku-4-5", provider):
        result = run_turn(user_id=trainee.user_id, message=message, model="claude-haiku-4-5")
    assert [a.tool for a in result.actions] == ["adjust_exercise", "message_notify_user", "idle"]
    events = AgentSessionEvent.objects.filter(session_id=result.session_id)
    assert events.filter(event_type="artifact").count() == 1
    current = get_current_workout(user_id=trainee.user_id)
    assert current is not None
    rests = {e["exercise_name"]: e["rest_sec"] for e in workout_exercises(current.workout)}
    assert rests == {
        "Jumping Jack": 30,
        "Dumbbell Bench Press": 60,
        "Push-Up": 30,
        "Dumbbell Biceps Curl": 60,
    }
