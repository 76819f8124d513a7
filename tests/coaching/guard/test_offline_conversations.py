"""Conversations with the offline coach: injuries, dislikes, equipment, units, swaps and harder/easier."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from datasources_app.models import WorkoutLog
from datasources_app.services import create_preference, record_workout_log, upsert_profile, upsert_settings
from tests.coaching.guard.conftest import (
    DemoUser,
    assert_equipment_available,
    assert_prescription_fits,
    changed_ids,
    current,
    main,
    pattern_of,
    unsafe_for,
    untouched,
)
from trainer_agent.loop import TurnResult
from trainer_agent.turns import run_turn

pytestmark = pytest.mark.django_db


def say(user_id: uuid.UUID, message: str, session_id: uuid.UUID | None = None) -> TurnResult:
    return run_turn(user_id=user_id, message=message, model="offline", session_id=session_id)


def message_of(result: TurnResult) -> str:
    return " ".join(result.response.get("messages") or [])


# --- Injuries --------------------------------------------------------------------------------------------
def test_leg_day_for_the_demo_knee_has_no_squat_lunge_or_jump(demo: DemoUser) -> None:
    say(demo.user_id, "Leg day please")
    exercises = current(demo.user_id)
    assert main(exercises)
    # As the user's words have it: a mildly bothered knee keeps knee-friendly quad work (a box squat to the
    # bench, a wall sit), never a deep squat, a lunge or a jump.
    assert unsafe_for("knee", exercises, user_id=demo.user_id) == []
    assert_equipment_available(demo.user_id, exercises)


def test_a_knee_injury_said_in_chat_keeps_squats_out_of_the_next_leg_day() -> None:
    user_id = uuid.uuid4()
    first = say(user_id, "my left knee is injured, avoid exercises that load the knee")
    say(user_id, "leg day please", first.session_id)
    exercises = current(user_id)
    assert main(exercises)
    assert unsafe_for("knee", exercises) == []
    assert not any("squat" in e["exercise_name"].lower() for e in exercises)


@pytest.mark.parametrize(
    ("injury", "part", "request_"),
    [
        ("Herniated disc in my lower back", "lower back", "Give me a full body workout"),
        ("Shoulder impingement on the right", "shoulder", "Give me a 45 minute upper body workout"),
        ("Sprained ankle last week", "ankle", "Leg day please"),
        ("Tennis elbow", "elbow", "Give me an arm workout"),
    ],
)
def test_an_injury_in_the_profile_rules_out_its_patterns(
    demo: DemoUser, injury: str, part: str, request_: str
) -> None:
    upsert_profile(user_id=demo.user_id, injuries=injury, limitations=[])
    demo.at("Gym")
    say(demo.user_id, request_)
    exercises = current(demo.user_id)
    assert main(exercises)
    assert unsafe_for(part, exercises) == []
    assert_equipment_available(demo.user_id, exercises)


def test_replacing_with_an_unsafe_exercise_picks_a_safe_one_and_says_why(demo: DemoUser) -> None:
    session_id = say(demo.user_id, "Leg day please").session_id
    before = current(demo.user_id)
    result = say(demo.user_id, "replace the glute bridge with lunges", session_id)
    after = current(demo.user_id)
    assert len(changed_ids(before, after)) == 1
    assert unsafe_for("knee", after, user_id=demo.user_id) == []
    assert "knee" in message_of(result)


# --- Swaps -------------------------------------------------------------------------------------------------
def test_swapping_the_named_exercise_changes_exactly_that_one(demo: DemoUser) -> None:
    session_id = say(demo.user_id, "Give me a 45 minute chest workout").session_id
    before = current(demo.user_id)
    assert any(e["exercise_name"] == "Dumbbell Bench Press" for e in before)
    say(demo.user_id, "Swap the dumbbell bench press for something else", session_id)
    after = current(demo.user_id)
    gone = changed_ids(before, after)
    assert len(gone) == 1
    untouched(before, after, gone)
    old = next(e for e in before if str(e["id"]) in gone)
    new = next(e for e in after if e["order"] == old["order"])
    assert pattern_of(new)[0] == pattern_of(old)[0] == "horizontal_push"
    assert new["muscles_utilized"][0]["muscle"] == "Chest"
    assert_prescription_fits(new)
    assert_equipment_available(demo.user_id, after)


def test_swapping_by_position_changes_one_and_leaves_warm_up_rest_alone(demo: DemoUser) -> None:
    session_id = say(demo.user_id, "Give me a 45 minute chest workout").session_id
    before = current(demo.user_id)
    say(demo.user_id, "swap the 3rd exercise", session_id)
    after = current(demo.user_id)
    gone = changed_ids(before, after)
    assert len(gone) == 1
    untouched(before, after, gone)
    assert [e["rest_sec"] for e in after if (e.get("group") or {}).get("type") == "warmup"] == [
        e["rest_sec"] for e in before if (e.get("group") or {}).get("type") == "warmup"
    ]


def test_a_swapped_in_isolation_exercise_gets_its_own_prescription(demo: DemoUser) -> None:
    session_id = say(demo.user_id, "Give me a 45 minute chest workout").session_id
    say(demo.user_id, "swap the dumbbell fly for something else", session_id)
    after = current(demo.user_id)
    new = [e for e in main(after) if pattern_of(e)[0] == "chest_fly"]
    assert new, [e["exercise_name"] for e in after]
    for exercise in new:
        assert_prescription_fits(exercise)
        assert exercise["rest_sec"] <= 90  # an isolation move never gets a heavy-lift rest


def test_swaps_never_bring_back_a_disliked_exercise(demo: DemoUser) -> None:
    session_id = say(demo.user_id, "no push-ups this week").session_id
    say(demo.user_id, "Give me a 45 minute chest workout", session_id)
    for order in (2, 3, 4):
        say(demo.user_id, f"swap exercise {order}", session_id)
        assert not any("push-up" in e["exercise_name"].lower() for e in current(demo.user_id))


def test_swaps_respect_the_knee_too(demo: DemoUser) -> None:
    session_id = say(demo.user_id, "Leg day please").session_id
    for order in (2, 3):
        say(demo.user_id, f"swap exercise {order}", session_id)
        assert unsafe_for("knee", current(demo.user_id), user_id=demo.user_id) == []


# --- Harder / easier -----------------------------------------------------------------------------------------
def test_harder_then_easier_names_what_changed(demo: DemoUser) -> None:
    session_id = say(demo.user_id, "Give me a 45 minute chest workout").session_id
    before = {e["id"]: e for e in main(current(demo.user_id))}
    harder = say(demo.user_id, "make it harder", session_id)
    after = {e["id"]: e for e in main(current(demo.user_id))}
    assert set(after) == set(before)  # the same exercises, only their prescription moved
    # One lever per exercise, as a coach moves them: the load, else the reps; the sets stay.
    assert all(after[i]["sets"] == before[i]["sets"] for i in before)
    grew = [
        i
        for i in before
        if (after[i].get("load_each") or [0])[0] > (before[i].get("load_each") or [0])[0]
        or (after[i].get("reps") or [0])[0] > (before[i].get("reps") or [0])[0]
    ]
    assert grew
    text = message_of(harder)
    for exercise_id in grew:
        assert after[exercise_id]["exercise_name"] in text
    assert "(only the weight: the same sets and reps)" in text
    assert "each hand" in text  # dumbbell loads are said per hand
    easier = say(demo.user_id, "make it easier", session_id)
    final = {e["id"]: e for e in main(current(demo.user_id))}
    assert all(final[i]["sets"] == after[i]["sets"] for i in final)
    assert "(only the " in message_of(easier)


# --- Equipment, units, recent training ---------------------------------------------------------------------
def test_moving_to_the_gym_then_leg_day_stays_within_gym_gear_and_knee_safe(demo: DemoUser) -> None:
    session_id = say(demo.user_id, "I'm at the gym").session_id
    say(demo.user_id, "Leg day please", session_id)
    exercises = current(demo.user_id)
    assert_equipment_available(demo.user_id, exercises)
    assert unsafe_for("knee", exercises, user_id=demo.user_id) == []


def test_a_pounds_user_gets_pounds_and_swaps_keep_them(demo: DemoUser) -> None:
    upsert_settings(user_id=demo.user_id, weight_unit="lb")
    session_id = say(demo.user_id, "Give me a 45 minute chest workout").session_id
    say(demo.user_id, "swap the dumbbell bench press for something else", session_id)
    loaded = [e for e in current(demo.user_id) if e.get("load_each")]
    assert loaded and all(e["load_unit"] == "lb" for e in loaded)


def test_a_swap_uses_the_load_from_history(demo: DemoUser) -> None:
    """A swapped-in exercise the user completed 3×12 at 12.5 kg five days ago builds on that session (one step
    up, as a draft does: one progression rule), not on a generic first load."""
    record_workout_log(
        user_id=demo.user_id,
        title="Chest",
        entries=[
            {
                "exercise_name": "Incline Dumbbell Fly",
                "exercise_type": "reps",
                "muscles": [{"muscle": "Chest", "share": 1.0}],
                "goals": [{"goal": "hypertrophy", "share": 1.0}],
                "target_sets": 3,
                "target_reps": [12] * 3,
                "actual_sets": 3,
                "actual_reps": [12] * 3,
                "actual_load_each": [12.5] * 3,
                "load_unit": "kg",
            }
        ],
        completed_at=timezone.now() - timedelta(days=5),
    )
    session_id = say(demo.user_id, "Give me a 45 minute chest workout").session_id
    say(demo.user_id, "swap the dumbbell fly for incline dumbbell fly", session_id)
    fly = next(e for e in current(demo.user_id) if e["exercise_name"] == "Incline Dumbbell Fly")
    assert set(fly["load_each"]) == {15.0}
    assert "Up from 12.5 kg × 12 last time." in fly["reasoning"]


def test_legs_trained_hard_yesterday_are_flagged_to_the_model(demo: DemoUser) -> None:
    demo.trained_legs(hours_ago=20)
    result = say(demo.user_id, "Leg day please")
    created = [a for a in result.actions if a.tool == "draft_workout" and a.result.get("success")]
    assert created
    warnings = created[-1].result["data"]["warnings"]
    assert warnings and any(re.search(r"Glutes|Hamstrings|Quadriceps", w) for w in warnings)


def test_create_swap_harder_done_logs_what_was_trained(demo: DemoUser) -> None:
    session_id = say(demo.user_id, "Give me a 45 minute chest workout").session_id
    say(demo.user_id, "Swap the dumbbell bench press for something else", session_id)
    say(demo.user_id, "make it harder", session_id)
    names = {e["exercise_name"] for e in main(current(demo.user_id))}
    say(demo.user_id, "done", session_id)
    logged = {
        entry.exercise_name
        for log in WorkoutLog.objects.filter(user_id=demo.user_id)
        for entry in log.entries.all()
    }
    assert names <= logged
    assert "Dumbbell Bench Press" not in logged


def test_a_new_preference_filed_as_an_injury_is_enforced(demo: DemoUser) -> None:
    upsert_profile(user_id=demo.user_id, injuries="", limitations=[])
    create_preference(
        user_id=demo.user_id,
        preference_type="permanent",
        category="injury",
        description="Right wrist",
        guidance="Keep load off it",
    )
    demo.at("Gym")
    say(demo.user_id, "Give me an arm workout")
    assert unsafe_for("wrist", current(demo.user_id)) == []
