"""What the demo user (mild knee, at Home) reads after a draft, a circuit and a log (the 2026-11-28 trials): knee
cues only on lifts that bend the knee under load, the knee said once, a cardio session warmed up and told about
as cardio, a circuit's rest between moves, and a log that asks for the rest only while some is open."""

from __future__ import annotations

from typing import Any

import pytest

from datasources_app.models import Exercise
from datasources_app.services import set_current_location
from datasources_app.workouts import is_main
from tests.tools_app.test_knee_at_home import knee_trainee
from tests.tools_app.workout_support import Trainee, told
from tools_app.training_facts import MILD_INJURY_RULES

pytestmark = pytest.mark.django_db

KNEE_RANGE_CUE = MILD_INJURY_RULES["knee"].cue
LEG_MUSCLES = {"Quadriceps", "Hamstrings", "Glutes", "Calves", "Adductors", "Abductors"}


def draft(trainee: Trainee, **brief: Any) -> Any:
    result = trainee.run("draft_workout", brief)
    assert result.success and result.artifact is not None, result.formatted
    return result


def exercises(result: Any) -> list[dict[str, Any]]:
    return list(result.artifact["payload"]["exercises"])


@pytest.mark.parametrize(
    ("place", "brief"),
    [
        ("Home", {"focus": ["legs"], "minutes": 30}),
        ("Gym", {"focus": ["glutes"], "minutes": 45}),
        ("Gym", {"focus": ["lower body"], "minutes": 60}),
    ],
)
def test_the_knee_range_cue_is_only_on_lifts_that_bend_the_knee(place: str, brief: dict[str, Any]) -> None:
    """A hip thrust or a Romanian deadlift (the hip works, the knee stays still) gets no "range your knee is
    happy with" cue; it did, next to the squat's."""
    trainee = knee_trainee()
    if place == "Gym":
        set_current_location(user_id=trainee.user_id, location_id=trainee.gym.id)
    drafted = exercises(draft(trainee, **brief))
    catalogue = {e.name: e for e in Exercise.objects.filter(name__in=[x["exercise_name"] for x in drafted])}
    cued = [str(x["exercise_name"]) for x in drafted if KNEE_RANGE_CUE in str(x.get("notes") or "")]
    hips_only = [name for name in cued if "knee" not in (catalogue[name].loaded_joints or [])]
    assert hips_only == [], (cued, [x["exercise_name"] for x in drafted])


def test_the_knee_is_said_once_after_a_leg_draft() -> None:
    """ "Legs at home, 30 minutes": one sentence for the knee (what is left out, and the box squat kept moderate),
    not two that each say the leg work is kept knee-friendly."""
    result = draft(knee_trainee(), focus=["legs"], minutes=30)
    tell = told(result)
    knee_sentences = [s for s in tell.split(". ") if "knee" in s.lower()]
    assert len(knee_sentences) == 1, tell
    assert "deep bends" in knee_sentences[0] and "moderate" in knee_sentences[0], tell
    assert tell.lower().count("knee-friendly") <= 1, tell


def test_a_cardio_session_is_warmed_up_and_told_about_as_cardio() -> None:
    """ "20 minutes of cardio at home": the warm-up and cool-down work the legs the moves run on (it was Arm
    Circles and a Shoulder Stretch, as shadow boxing works the shoulders), and the knee note speaks of jumping
    and deep bends, not of "leg work" the session does not have."""
    result = draft(knee_trainee(), style="cardio", minutes=20)
    catalogue = {
        e.name: e for e in Exercise.objects.filter(name__in=[x["exercise_name"] for x in exercises(result)])
    }
    prep = [x for x in exercises(result) if not is_main(x)]
    assert prep, exercises(result)
    for exercise in prep:
        primary = (catalogue[exercise["exercise_name"]].primary_muscles or [""])[0]
        assert primary in LEG_MUSCLES, [(x["exercise_name"], x["group"]["type"]) for x in prep]
    tell = told(result)
    assert "leg work" not in tell, tell
    assert "jumping" in tell, tell


def test_a_circuit_line_says_the_work_and_the_rest_between_moves() -> None:
    """The circuit's moves read "40s work, 20s rest" where the model and the user read the workout; they read
    "40s", the 20 s before the next move nowhere."""
    result = draft(knee_trainee(), style="cardio", minutes=20)
    members = [x for x in exercises(result) if (x.get("group") or {}).get("type") == "circuit"]
    assert members and {(x["work_sec"], x["rest_sec"]) for x in members} == {(40, 20)}, members
    lines = [line for line in result.formatted.splitlines() if "(intervals)" in line]
    assert lines and all("40s work, 20s rest" in line for line in lines), result.formatted


def test_a_log_asks_for_the_rest_only_while_the_workout_has_some_open() -> None:
    """Logging an exercise asks the user for the rest while the current workout has open exercises, and says
    which are open so that a user who says they have finished gets the workout logged; an exercise logged with
    no current workout, or the last one, never asks for "the rest"."""
    trainee = knee_trainee()
    alone = trainee.run(
        "log_completed_exercise",
        {"exercise_name": "Dumbbell Calf Raise", "sets": 3, "reps": [12, 12, 12], "load_each": [25, 25, 25]},
    )
    assert alone.success, alone.formatted
    assert "the rest" not in told(alone), told(alone)

    drafted = draft(trainee, focus=["legs"], minutes=30)
    main = [x for x in exercises(drafted) if is_main(x)]
    first = trainee.run("mark_exercise_complete", {"exercise_id": main[0]["id"]})
    assert "finished the rest" in told(first), told(first)
    assert "log_workout" in first.formatted and str(main[-1]["exercise_name"]) in first.formatted
    for exercise in main[1:]:
        last = trainee.run("mark_exercise_complete", {"exercise_id": exercise["id"]})
        assert last.success, last.formatted
    assert "the rest" not in told(last), told(last)
