"""The draft_workout tool checks its workout once (issue 25: drafting's CPU): what it saves and says must be what
the straightforward path gives, drafting then generate_workout's own check and save of that draft, and the
catalogue lookups of a check made in one query must find what the lookup of each name finds."""

from __future__ import annotations

import re
from typing import Any

import pytest

from datasources_app.selectors import get_current_workout
from datasources_app.services import create_preference, set_current_location, upsert_profile
from datasources_app.workouts import Exercise
from tests.support.training import log_heavy_legs
from tests.tools_app.workout_support import Trainee, make_trainee, reps_exercise
from tools_app.workout_drafting import WorkoutBrief, draft_workout_for
from tools_app.workout_validation import check_exercises, find_catalog_match

pytestmark = pytest.mark.django_db

BRIEFS: tuple[dict[str, Any], ...] = (
    {"focus": ["full body"], "minutes": 35},
    {"focus": ["legs"], "minutes": 45},
    {"focus": ["upper body"], "minutes": 40, "avoid": ["bench"]},
    {"style": "hiit", "minutes": 20, "bodyweight_only": True},
    {"style": "mobility", "minutes": 20},
    {"style": "cardio", "minutes": 30},
)
_IDS = re.compile(r"\b(?:art|ex)_[0-9a-f]{6,12}\b")
_ADAPTATIONS = re.compile(r"Adaptations made \(tell the user\):\n(?:  - .*\n)*|\nTell the user: .*$")


def masked(value: Any) -> str:
    """`value` as text with the random artifact and exercise ids masked."""
    return _IDS.sub("<id>", repr(value))


def reference(trainee: Trainee, brief: dict[str, Any]) -> tuple[str, Any, Any]:
    """The straightforward path: draft (saving nothing), then generate_workout checks and saves the draft."""
    drafted = draft_workout_for(user_id=trainee.user_id, brief=WorkoutBrief.model_validate(brief))
    assert drafted is not None
    result = trainee.run("generate_workout", {"workout": drafted.workout})
    assert result.success, result.formatted
    stored = get_current_workout(user_id=trainee.user_id)
    assert stored is not None
    return result.raw_formatted, result.data, stored.workout


def drafted_by_the_tool(trainee: Trainee, brief: dict[str, Any]) -> tuple[str, Any, Any]:
    """The draft_workout tool, its adaptations and what to tell the user taken out of what it says
    (generate_workout has neither)."""
    result = trainee.run("draft_workout", brief)
    assert result.success, result.formatted
    stored = get_current_workout(user_id=trainee.user_id)
    assert stored is not None
    data = {key: value for key, value in result.data.items() if key != "adaptations"}
    return _ADAPTATIONS.sub("", result.raw_formatted), data, stored.workout


@pytest.mark.parametrize("brief", BRIEFS, ids=lambda brief: "-".join(map(str, brief.values())))
def test_the_tool_saves_and_says_what_generate_workout_makes_of_the_same_draft(brief: dict[str, Any]) -> None:
    """Same text, data and stored workout as drafting and then generate_workout, for a user with an injury, a
    stored exclusion and legs trained yesterday (the checks have something to say)."""
    trainee = make_trainee()
    upsert_profile(user_id=trainee.user_id, injuries="knee pain")
    create_preference(
        user_id=trainee.user_id,
        preference_type="permanent",
        description="No push-ups",
        exclude_exercises=["Push-Up"],
    )
    log_heavy_legs(trainee.user_id, hours_ago=20)
    expected = reference(trainee, brief)
    assert tuple(map(masked, drafted_by_the_tool(trainee, brief))) == tuple(map(masked, expected))


def test_a_change_between_two_drafts_changes_the_second() -> None:
    """The user's facts are read for every draft: an injury, an exclusion or a move made since shows at once."""
    trainee = make_trainee()
    brief = {"focus": ["legs"], "minutes": 45}
    first = trainee.run("draft_workout", brief)
    upsert_profile(user_id=trainee.user_id, injuries="knee pain")
    second = trainee.run("draft_workout", brief)
    assert "knee-friendly" not in first.formatted and "knee-friendly" in second.formatted
    names = {e["exercise_name"] for e in (second.artifact or {})["payload"]["exercises"]}
    create_preference(
        user_id=trainee.user_id,
        preference_type="permanent",
        description="No more of those",
        exclude_exercises=sorted(names),
    )
    third = trainee.run("draft_workout", brief)
    assert third.success, third.formatted
    assert not names & {e["exercise_name"] for e in (third.artifact or {})["payload"]["exercises"]}
    set_current_location(user_id=trainee.user_id, location_id=trainee.gym.id)
    fourth = trainee.run("draft_workout", {"focus": ["upper body"], "minutes": 45})
    assert any("barbell" in e["equipment"] for e in (fourth.artifact or {})["payload"]["exercises"])


def test_one_query_finds_each_name_as_the_lookup_of_that_name_does() -> None:
    """check_exercises' catalogue matches: a name, its variant spelling, a name twice, an alias, an unknown name."""
    trainee = make_trainee()
    names = [
        "Dumbbell Bench Press",
        "dumbbell bench presses",
        "Dumbbell Bench Press",
        "Piriformis Stretch",
        "Zorb Lift",
    ]
    exercises = [
        Exercise.model_validate(reps_exercise(order, exercise_name=name))
        for order, name in enumerate(names, 1)
    ]
    check = check_exercises(exercises, user_id=trainee.user_id)
    expected = [find_catalog_match(name) for name in names]
    assert check.catalog == expected
    assert expected[0] is not None and expected[1] == expected[0] and expected[4] is None
    assert expected[3] is not None and expected[3].name == "Figure-Four Stretch"  # known by an alias only
    partial = check_exercises(exercises, user_id=trainee.user_id, only={3})
    assert partial.catalog == [None, None, None, expected[3], None]
