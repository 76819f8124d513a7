"""A mildly bothered knee at Home (dumbbells, a bench, bands): the drafts keep knee-friendly quad work there, a
knee-friendly isometric or a lift kept short by its notes or by a plan's words is no deep bend, and a focus on
quads is quad work (the 2026-11-27 home trials)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from datasources_app.catalog import deep_knee_bend
from datasources_app.models import Exercise, Location
from datasources_app.services import seed_demo_user, set_current_location, upsert_profile
from datasources_app.workouts import is_main
from tests.datasources_app.factories import LocationFactory
from tests.tools_app.test_injury_words import DEMO_KNEE, HURTING, MILD, generate, quads
from tests.tools_app.workout_support import GYM_EQUIPMENT, Trainee, hold_exercise, make_trainee
from tools_app.training_facts import load_facts
from tools_app.workout_drafting import (
    WorkoutBrief,
    balance_pattern,
    compose_workout,
    draft_workout_for,
)
from tools_app.workout_validation import KNEE_WORK_CUE, unsafe_named_exercises

# What a mild knee skips: a squat or lunge to full depth, a step-up onto a bench.
DEEP = {"Dumbbell Squat", "Goblet Squat", "Bulgarian Split Squat", "Dumbbell Lunge", "Dumbbell Step-Up"}


def knee_trainee(injuries: str = DEMO_KNEE) -> Trainee:
    trainee = make_trainee()
    upsert_profile(user_id=trainee.user_id, injuries=injuries, limitations=["knee"])
    return trainee


def main_exercises(trainee: Trainee, **brief: Any) -> list[dict[str, Any]]:
    result = trainee.run("draft_workout", brief)
    assert result.success and result.artifact is not None, result.formatted
    return [
        exercise
        for exercise in result.artifact["payload"]["exercises"]
        if (exercise.get("group") or {}).get("type") not in ("warmup", "cooldown")
    ]


def quad_work(exercises: list[dict[str, Any]]) -> list[str]:
    """The drafted exercises a coach calls quad work: the catalogue's quads first, and no hinge."""
    catalogue = {e.name: e for e in Exercise.objects.filter(name__in=[x["exercise_name"] for x in exercises])}
    return [
        name
        for name in (str(x["exercise_name"]) for x in exercises)
        if name in catalogue
        and (catalogue[name].primary_muscles or [""])[0] == "Quadriceps"
        and catalogue[name].movement_pattern != "hinge"
    ]


@pytest.mark.django_db
@pytest.mark.parametrize("focus", [["legs"], ["lower body"], ["full body"]])
def test_a_mild_knee_at_home_gets_quad_work_and_no_deep_bend(focus: list[str]) -> None:
    """At Home the mild knee's legs draft was an RDL, a bridge and two calf raises: now a box squat to the bench
    (and for a leg day a second quad move), never a full-depth squat, a lunge or a step-up onto the bench."""
    trainee = knee_trainee()
    exercises = main_exercises(trainee, focus=focus, minutes=45)
    names = [str(exercise["exercise_name"]) for exercise in exercises]
    assert "Dumbbell Box Squat" in names, names
    assert len(quad_work(exercises)) >= (1 if focus == ["full body"] else 2), names
    assert not DEEP & set(names), names


@pytest.mark.django_db
def test_a_knee_that_hurts_at_home_still_gets_no_squat() -> None:
    """A knee that hurts (more than mild) stays as strict as before: no box squat, no Spanish squat, no wall sit."""
    trainee = knee_trainee("Knee pain when I squat.")
    exercises = main_exercises(trainee, focus=["legs"], minutes=45)
    names = [str(exercise["exercise_name"]) for exercise in exercises]
    assert not quad_work(exercises), names


@pytest.mark.django_db
@pytest.mark.parametrize(
    "location, focus", [("Gym", ["quads", "glutes"]), ("Home", ["quads"]), ("Gym", ["quads"])]
)
def test_a_quads_focus_is_mostly_quad_work(location: str, focus: list[str]) -> None:
    """The demo user (mild knee) asking for quads first got one quad lift and three hinges at the Gym (a trap-bar
    deadlift lists the quads first), and nothing at Home: now most of the main exercises are squats, knee
    extensions or quad holds."""
    user_id = uuid.uuid4()
    seed_demo_user(user_id=user_id)
    where = Location.objects.get(user_id=user_id, name=location)
    drafted = draft_workout_for(
        user_id=user_id, brief=WorkoutBrief(focus=focus, minutes=40), location_id=where.id
    )
    assert drafted is not None
    exercises = [exercise for exercise in drafted.workout["exercises"] if is_main(exercise)]
    names = [str(exercise["exercise_name"]) for exercise in exercises]
    assert len(quad_work(exercises)) * 2 > len(exercises), names
    assert len(quad_work(exercises)) >= 3, names


def test_a_spanish_squat_hold_is_no_deep_bend_and_a_deep_squat_hold_still_is() -> None:
    """'Squat hold' names a deep bend; a Spanish squat held at parallel against a band is the classic knee-friendly
    isometric. Held deep or at full depth it is a deep bend again."""
    assert not deep_knee_bend("squat", "Spanish Squat Hold")
    assert not deep_knee_bend("squat", "Band Spanish Squat Hold")
    assert unsafe_named_exercises([("Mon", "Spanish squat hold 4x45s")], MILD) == []
    for deep in (
        "Squat Hold",
        "Deep Squat Hold",
        "Spanish Squat Hold to full depth",
        "Deep Spanish squat hold",
    ):
        assert deep_knee_bend("squat", deep), deep
    assert unsafe_named_exercises([("Mon", "Spanish squat hold 4x45s")], HURTING)


def test_a_step_up_to_a_high_box_or_a_bench_is_still_a_deep_bend() -> None:
    """A high box keeps a squat short and takes a step-up deep; a mid-shin box keeps a step-up short."""
    assert deep_knee_bend("lunge", "Dumbbell Step-Up (high box)")
    assert deep_knee_bend("lunge", "Step-ups onto a high box")
    assert not deep_knee_bend("squat", "Box squat to a high box")
    assert not deep_knee_bend("lunge", "Dumbbell Step-Up (mid-shin box)")


@pytest.mark.django_db
def test_a_depth_cue_in_an_exercises_notes_counts_like_one_in_its_name() -> None:
    """'Leg Press' and 'Dumbbell Step-Up' were refused for the mild knee although their notes said 'pain-free range'
    and 'mid-shin box': the notes' cue keeps that exercise short, not the workout's others, and a knee that hurts
    still refuses it."""
    trainee = knee_trainee()
    machines = LocationFactory.create(
        user_id=trainee.user_id, name="Leg Gym", equipment=[*GYM_EQUIPMENT, "leg_press_machine"]
    )
    set_current_location(user_id=trainee.user_id, location_id=machines.id)
    press = quads(1, "Leg Press", equipment=[], notes="Keep it in a pain-free range.")
    step = quads(
        2, "Dumbbell Step-Up", equipment=["dumbbells"], implements=2, notes="Step onto a mid-shin box."
    )
    ok, text = generate(trainee, press, step)
    assert ok and "unsafe" not in text, text
    squat = quads(2, "Goblet Squat", equipment=["dumbbells"], notes="Chest up.")
    ok, text = generate(trainee, press, squat)
    assert not ok and "exercise 2 'Goblet Squat': unsafe for the user's knee" in text, text
    assert "exercise 1" not in text, text
    ok, text = generate(trainee, quads(1, "Leg Press", equipment=[], notes="To parallel or below."))
    assert not ok and "exercise 1 'Leg Press': unsafe for the user's knee" in text, text
    upsert_profile(user_id=trainee.user_id, injuries="Knee pain when I squat.", limitations=["knee"])
    ok, text = generate(trainee, press)
    assert not ok and "unsafe for the user's knee" in text, text


@pytest.mark.django_db
def test_generate_workout_keeps_a_models_spanish_squat_hold_for_a_mild_knee() -> None:
    """The trial's model wrote a 'Spanish Squat Hold' for the mild knee and generate_workout refused it as a deep
    bend; a plain 'Squat Hold' is still refused."""
    trainee = knee_trainee()
    quads_only = [{"muscle": "Quadriceps", "share": 1.0}]
    ok, text = generate(
        trainee, hold_exercise(1, exercise_name="Spanish Squat Hold", muscles_utilized=quads_only)
    )
    assert ok and "unsafe" not in text, text
    ok, text = generate(trainee, hold_exercise(1, exercise_name="Squat Hold", muscles_utilized=quads_only))
    assert not ok and "exercise 1 'Squat Hold': unsafe for the user's knee" in text, text


@pytest.mark.django_db
def test_a_plans_depth_cue_stays_with_its_lift_in_the_weeks_draft() -> None:
    """The plan said 'Dumbbell Step-Up (low box)' and the week's draft swapped it for a second box squat: the step-up
    stays, with the plan's words as its cue, and passes the workout check."""
    trainee = knee_trainee()
    facts = load_facts(user_id=trainee.user_id)
    composed = compose_workout(
        WorkoutBrief(focus=["legs"], minutes=45),
        facts,
        named=["Box squat to parallel", "Dumbbell Step-Up (low box)", "Glute bridge"],
    )
    assert composed is not None
    by_name = {str(exercise["exercise_name"]): exercise for exercise in composed.exercises}
    assert "Dumbbell Step-Up" in by_name, list(by_name)
    assert "low box" in by_name["Dumbbell Step-Up"]["notes"], by_name["Dumbbell Step-Up"]
    assert not any("Dumbbell Step-Up (low box) swapped" in note for note in composed.notes), composed.notes
    squats = [name for name in by_name if "Squat" in name and balance_pattern_of(name, facts) == "squat"]
    assert len(squats) == 1, squats


def balance_pattern_of(name: str, facts: Any) -> str:
    candidate = next(c for c in facts.catalog if c.name == name)
    return balance_pattern(candidate)


@pytest.mark.django_db
def test_swap_exercise_reads_a_leg_press_named_with_its_range_as_the_catalogues_leg_press() -> None:
    """The trial's model swapped in 'Leg Press (pain-free range)' after 'Leg Press' was refused for the mild knee:
    the tool said it was not in the catalogue and offered a Svend Press. It is the catalogue's Leg Press, with its
    range as the cue the check reads (then the knee work's tempo cue); plain 'Leg Press' is still refused."""
    trainee = knee_trainee()
    machines = LocationFactory.create(
        user_id=trainee.user_id, name="Leg Gym", equipment=[*GYM_EQUIPMENT, "leg_press_machine"]
    )
    set_current_location(user_id=trainee.user_id, location_id=machines.id)
    first = main_exercises(trainee, focus=["legs"], minutes=45)[0]
    refused = trainee.run("swap_exercise", {"exercise_id": first["id"], "replacement_name": "Leg Press"})
    assert not refused.success and "unsafe for the user's knee" in refused.raw_formatted, (
        refused.raw_formatted
    )
    assert "'Leg Press (pain-free range)'" in refused.raw_formatted, refused.raw_formatted
    result = trainee.run(
        "swap_exercise", {"exercise_id": first["id"], "replacement_name": "Leg Press (pain-free range)"}
    )
    assert result.success, result.raw_formatted
    swapped = result.data["new_exercise"]
    assert (swapped["exercise_name"], swapped["notes"]) == (
        "Leg Press",
        f"Pain-free range. {KNEE_WORK_CUE}",
    ), swapped
