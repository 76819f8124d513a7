"""The draft_workout tool and draft_workout_for (issue 27 item 3): a workout from a short brief that respects the
user's equipment, injuries, preferences, recovery, minutes and units, saved and delivered like generate_workout's.
The composer's rules (formerly the offline coach's `offline/workouts.py`) are exercised here through the tool."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from datasources_app.catalog import exercise_name_key
from datasources_app.demo import DEMO_USER_ID
from datasources_app.models import Exercise, Location
from datasources_app.selectors import get_current_workout
from datasources_app.services import (
    create_preference,
    seed_demo_user,
    set_current_location,
    upsert_profile,
)
from datasources_app.workouts import Workout
from sessions_app.services import append_event, create_session
from tests.support.training import log_bench_press, log_heavy_legs
from tests.tools_app.workout_support import GYM_EQUIPMENT, HOME_EQUIPMENT, Trainee, make_trainee, told
from tools_app.avoid_words import parse_preference, split_avoid
from tools_app.registry import execute_tool
from tools_app.training_facts import load_catalog
from tools_app.types import ToolContext
from tools_app.workout_coaching import round_load, step_load
from tools_app.workout_drafting import WorkoutBrief, draft_workout_for
from tools_app.workout_tools import estimate_duration_min
from tools_app.workout_validation import validate_workout

pytestmark = pytest.mark.django_db

LEGS = ("Quadriceps", "Hamstrings", "Glutes")


def draft(trainee: Trainee, **brief: Any) -> tuple[Any, list[dict[str, Any]]]:
    """Run draft_workout; return the result and the saved workout's exercises."""
    result = trainee.run("draft_workout", brief)
    assert result.success, result.formatted
    assert result.artifact is not None
    return result, result.artifact["payload"]["exercises"]


def main(exercises: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in exercises if (e.get("group") or {}).get("type") not in ("warmup", "cooldown")]


def works_legs_hard(exercise: dict[str, Any]) -> bool:
    return any(m["muscle"] in LEGS and m["share"] >= 0.3 for m in exercise["muscles_utilized"])


def test_a_draft_is_saved_and_delivered_like_generate_workout() -> None:
    """The drafted workout becomes the current workout, with an artifact and the same instructions to deliver it."""
    trainee = make_trainee()
    result, exercises = draft(trainee, focus=["upper body"], minutes=45)
    artifact = result.artifact
    assert artifact["type"] == "exercise_list" and artifact["artifact_id"].startswith("art_")
    assert result.artifact_id == artifact["artifact_id"]
    stored = get_current_workout(user_id=trainee.user_id)
    assert stored is not None and stored.workout["artifact_id"] == artifact["artifact_id"]
    text = result.formatted
    assert f"Created workout {artifact['artifact_id']}" in text
    assert "Use these exercise ids with swap_exercise" in text
    assert f"message_notify_user with artifact_id={artifact['artifact_id']}" in text
    assert all(e["id"].startswith("ex_") for e in exercises)
    # Delivered the same way as any workout: the loop records the artifact, message_notify_user hands it over.
    append_event(session=trainee.session, event_type="artifact", data=artifact)
    delivered = trainee.run(
        "message_notify_user", {"message": "Here it is.", "artifact_id": artifact["artifact_id"]}
    )
    assert delivered.success and delivered.delivered_artifact is not None
    assert delivered.delivered_artifact["artifact_id"] == artifact["artifact_id"]


def test_the_draft_uses_only_the_equipment_here() -> None:
    """At Home only dumbbells, bench and bands (and bodyweight); at the Gym its barbell comes in."""
    trainee = make_trainee()
    _, home = draft(trainee, focus=["full body"])
    assert {slug for e in home for slug in e.get("equipment") or ()} <= set(HOME_EQUIPMENT)
    set_current_location(user_id=trainee.user_id, location_id=trainee.gym.id)
    _, gym = draft(trainee, focus=["legs"])
    used = {slug for e in gym for slug in e.get("equipment") or ()}
    assert used <= set(GYM_EQUIPMENT) and "barbell" in used


def test_bodyweight_only_uses_no_equipment() -> None:
    """bodyweight_only leaves every implement out, even where there are some."""
    trainee = make_trainee()
    _, exercises = draft(trainee, focus=["full body"], bodyweight_only=True)
    assert all(not e.get("equipment") for e in exercises)


def test_a_knee_injury_rules_out_deep_knee_flexion_and_says_so() -> None:
    """Knee injury: no squats, lunges or jumps on leg day, and the adaptation is listed for the user."""
    trainee = make_trainee()
    upsert_profile(user_id=trainee.user_id, injuries="knee pain")
    set_current_location(user_id=trainee.user_id, location_id=trainee.gym.id)
    result, exercises = draft(trainee, focus=["legs"], minutes=45)
    patterns = {Exercise.objects.get(name=e["exercise_name"]).movement_pattern for e in exercises}
    assert not patterns & {"squat", "lunge", "jump"}, patterns
    assert main(exercises), "leg day still has main work"
    assert "knee-friendly" in result.formatted
    assert any("knee" in note for note in result.data["adaptations"])


def test_the_user_is_told_what_the_draft_holds_and_how_it_was_adapted() -> None:
    """What to tell the user: the title, about how long and where, after a warm-up when there is one, the main
    exercises by name, the adaptations (the knee's) and what they can do next; no ids."""
    trainee = make_trainee()
    upsert_profile(user_id=trainee.user_id, injuries="knee pain")
    set_current_location(user_id=trainee.user_id, location_id=trainee.gym.id)
    result, exercises = draft(trainee, focus=["legs"], minutes=45)
    assert result.artifact is not None
    names = [e["exercise_name"] for e in main(exercises)]
    warm = ", after a short warm-up" if len(names) < len(exercises) else ""
    minutes = result.data["summary"]["estimated_duration_min"]
    said = told(result)
    assert said.startswith(
        f"Here's your {result.artifact['title']}: about {minutes:g} min at Gym{warm} — "
        f"{', '.join(names[:-1])} and {names[-1]}. "
    )
    knee = next(note for note in result.data["adaptations"] if "knee" in note)
    assert knee[:1].upper() + knee[1:] in said
    assert said.endswith('Ask me to swap or adjust anything, and say "done" when you finish so I can log it.')
    assert "ex_" not in said and "art_" not in said


def test_exclusions_from_the_brief_and_from_preferences_are_left_out() -> None:
    """A stored exclusion and the brief's `avoid` (an exercise and equipment) never appear; the result says so."""
    trainee = make_trainee()
    create_preference(
        user_id=trainee.user_id,
        preference_type="permanent",
        description="No push-ups",
        exclude_exercises=["Push-Up"],
    )
    result, exercises = draft(trainee, focus=["chest"], avoid=["dumbbell bench press", "the bench"])
    names = {e["exercise_name"].lower() for e in exercises}
    assert not any("push-up" in name or "push up" in name for name in names), names
    assert "dumbbell bench press" not in names
    assert all("bench" not in (e.get("equipment") or ()) for e in exercises)
    assert "I left out" in result.formatted
    assert (
        "as you asked" not in result.formatted
    )  # the brief's avoid list is the model's words, not the user's


def test_legs_trained_yesterday_are_left_out_of_an_open_brief_and_kept_light_when_asked() -> None:
    """Recovery: an open brief skips yesterday's legs; a legs brief keeps them with lighter volume and says so."""
    trainee = make_trainee()
    set_current_location(user_id=trainee.user_id, location_id=trainee.gym.id)
    log_heavy_legs(trainee.user_id, hours_ago=20)
    result, exercises = draft(trainee, focus=["full body"])
    assert not any(works_legs_hard(e) for e in main(exercises)), [e["exercise_name"] for e in exercises]
    assert "still recovering from yesterday" in result.formatted
    result, exercises = draft(trainee, focus=["legs"])
    assert any(works_legs_hard(e) for e in main(exercises))
    assert "lighter" in result.formatted
    assert all(e["sets"] <= 2 for e in main(exercises) if works_legs_hard(e) and e["exercise_type"] == "reps")


SWEPT_BRIEFS: dict[str, dict[str, Any]] = {
    "full body": {"focus": ["full body"]},
    "upper": {"focus": ["upper body"]},
    "legs": {"focus": ["legs"]},
    "push": {"focus": ["push"]},
    "pull": {"focus": ["pull"]},
    "HIIT": {"style": "hiit"},
    "cardio": {"style": "cardio"},
}


@pytest.mark.parametrize("location", ["Home", "Gym"])
def test_the_draft_fits_the_minutes_asked_for(location: str) -> None:
    """The length the user reads ("about 30 min", the artifact's summary) is within [minutes-3, minutes+1] for
    every focus and 15-90 minutes, at Home and the Gym, for the demo user (mildly bothered knee): a user who has
    30 minutes must never be handed 33-35 (the 2026-11-27 trials), while a set or a rest, the fit's steps, are
    1-3 minutes, so a little under is the price of never being clearly over."""
    seed_demo_user()
    ctx = ToolContext(user_id=DEMO_USER_ID, session=create_session(user_id=DEMO_USER_ID))
    place = Location.objects.get(user_id=DEMO_USER_ID, name=location)
    set_current_location(user_id=DEMO_USER_ID, location_id=place.id)
    misfits = []
    for name, brief in SWEPT_BRIEFS.items():
        for minutes in (15, 20, 30, 45, 60, 90):
            result = execute_tool("draft_workout", {**brief, "minutes": minutes}, ctx)
            assert result.success and result.artifact is not None, result.formatted
            shown = result.artifact["summary"]["estimated_duration_min"]
            assert shown == estimate_duration_min(result.artifact["payload"]["exercises"])
            assert f"about {shown} min" in told(result)
            if not minutes - 3 <= shown <= minutes + 1:
                misfits.append(f"{name} {minutes} min: about {shown} min")
    assert not misfits, misfits


def test_a_draft_that_cannot_fill_the_minutes_says_so() -> None:
    """90 minutes of mobility is more than the moves there are: the user is told it comes to less, and how much."""
    trainee = make_trainee()
    result, exercises = draft(trainee, style="mobility", minutes=90)
    shown = estimate_duration_min(exercises)
    assert shown < 87
    assert f"It comes to about {shown} min rather than the 90 you asked for" in told(result)


def test_styles_give_their_kind_of_work() -> None:
    """HIIT is a circuit of intervals; mobility is stretches and mobility moves without load."""
    trainee = make_trainee()
    _, hiit = draft(trainee, style="hiit", minutes=20)
    circuit = [e for e in hiit if (e.get("group") or {}).get("type") == "circuit"]
    assert len(circuit) >= 2 and all(e["exercise_type"] == "intervals" for e in circuit)
    _, mobility = draft(trainee, style="mobility", minutes=20)
    assert all(not e.get("load_each") for e in mobility)


def test_a_pound_user_gets_loads_in_pounds_on_pound_steps() -> None:
    """Loads come in the user's unit: lb, on 5 lb steps (9 lb for kettlebells)."""
    trainee = make_trainee(weight_unit="lb")
    set_current_location(user_id=trainee.user_id, location_id=trainee.gym.id)
    _, exercises = draft(trainee, focus=["full body"])
    loaded = [e for e in exercises if e.get("load_each")]
    assert loaded
    for exercise in loaded:
        assert exercise["load_unit"] == "lb"
        step = 9 if "kettlebell" in exercise["equipment"] else 5
        assert all(load % step == 0 for load in exercise["load_each"]), exercise


def test_the_title_is_the_briefs_or_made_from_it() -> None:
    """A given title is kept; otherwise the title says what the workout is."""
    trainee = make_trainee()
    result, _ = draft(trainee, focus=["back", "biceps"], title="Pull day")
    assert result.artifact["title"] == "Pull day"
    result, _ = draft(trainee, focus=["chest"], minutes=20)
    assert result.artifact["title"] == "Quick Chest Workout"


def test_unknown_arguments_and_areas_are_refused_by_name() -> None:
    """An argument the tool does not know, or an area outside the list, fails with a message naming it."""
    trainee = make_trainee()
    result = trainee.run("draft_workout", {"focus": ["legs"], "exercises": []})
    assert not result.success and "exercises" in result.formatted
    result = trainee.run("draft_workout", {"focus": ["toes"]})
    assert not result.success and "focus" in result.formatted and "full body" in result.formatted
    result = trainee.run("draft_workout", {"minutes": 500})
    assert not result.success and "minutes" in result.formatted
    assert get_current_workout(user_id=trainee.user_id) is None


def test_draft_workout_for_saves_nothing_and_passes_validation() -> None:
    """The function for sub-agents returns a valid workout in the canonical schema and stores nothing."""
    trainee = make_trainee()
    drafted = draft_workout_for(
        user_id=trainee.user_id, brief=WorkoutBrief(focus=["legs"], minutes=40), location_id=trainee.gym.id
    )
    assert drafted is not None
    workout = Workout.model_validate(drafted.workout)
    assert validate_workout(workout, user_id=trainee.user_id, location_id=trainee.gym.id) == []
    assert any("barbell" in (e.equipment or ()) for e in workout.exercises)  # the Gym's, not Home's
    assert get_current_workout(user_id=trainee.user_id) is None


def test_a_brief_without_an_area_leaves_that_area_out() -> None:
    """ "full body, no legs" keeps the whole body except the legs (ported from the offline intents tests)."""
    weights = WorkoutBrief(focus=["full body"], avoid_areas=["legs"]).target_weights()
    assert "Quadriceps" not in weights and "Chest" in weights
    assert WorkoutBrief(focus=["full body"]).explicit_muscles() == frozenset()
    assert "Quadriceps" in WorkoutBrief(focus=["legs"]).explicit_muscles()


def test_avoid_words_tell_equipment_from_exercises() -> None:
    """'the bench' and 'dumbbells' are equipment; 'burpees' is an exercise."""
    said = split_avoid(["the bench", "Burpees", "dumbbells"])
    assert set(said.equipment) == {"bench", "dumbbells"}
    assert said.phrases == ("burpees",)


@pytest.mark.parametrize(
    ("message", "phrases", "equipment", "days", "today"),
    [
        ("I hate burpees", ("burpees",), (), None, False),
        ("no running this week", ("running",), (), 7, False),
        ("avoid jumping for 2 weeks", ("jumping",), (), 14, False),
        ("I don't have a barbell", (), ("barbell",), None, False),
        ("no push-ups from now on", ("push-ups",), (), None, False),
        ("no bench press please", ("bench press",), (), None, False),
        ("I don't have a bench or bands", (), ("bench", "resistance_bands"), None, False),
    ],
)
def test_what_words_say_to_avoid_and_for_how_long(
    message: str, phrases: tuple[str, ...], equipment: tuple[str, ...], days: int | None, today: bool
) -> None:
    """What a message says to avoid, whether it is equipment, and for how long (set_preference reads its
    description so, the drafting tool its `avoid` words)."""
    preference = parse_preference(message.lower())
    assert (preference.phrases, preference.equipment, preference.expires_in_days, preference.today_only) == (
        phrases,
        equipment,
        days,
        today,
    )


def test_an_exercise_that_names_its_equipment_leaves_the_equipment_in() -> None:
    """ "No bench press" leaves out the bench press, not the bench (the trial's model passed "bench press" and got
    "no bench, bench press"); "no bench" is the bench."""
    assert (split_avoid(["bench press"]).phrases, split_avoid(["bench press"]).equipment) == (
        ("bench press",),
        (),
    )
    assert split_avoid(["no bench today"]).equipment == ("bench",)
    assert split_avoid(["dumbbell curls"]).equipment == ()


def test_what_was_left_out_is_said_as_the_user_said_it() -> None:
    """The draft's note names what it left out in the user's words, in a sentence: "I left out burpees and jumping",
    not "jumpings"; a phrase is a plural too ("jump squats", not "no jump squat")."""
    trainee = make_trainee()
    result, _ = draft(trainee, style="hiit", minutes=25, avoid=["burpee", "jumping"])
    assert "I left out burpees and jumping." in told(result)
    result, _ = draft(trainee, style="hiit", minutes=25, avoid=["jump squat"])
    assert "I left out jump squats." in told(result)


def test_what_was_left_out_names_each_thing_once() -> None:
    """A trial's draft said "I left out bench presses, dumbbell lunges and lunges": "lunges" says the dumbbell ones
    too, so the note names it once."""
    result, _ = draft(make_trainee(), minutes=40, avoid=["bench press", "dumbbell lunges", "lunges"])
    assert "I left out bench presses and lunges." in told(result), told(result)


def test_avoid_words_in_the_users_words_give_what_they_leave_out() -> None:
    """A brief's `avoid` may be the user's own sentence: "leg day, no lunges" leaves out lunges."""
    said = split_avoid(["leg day, no lunges", "I don't have a barbell"])
    assert (said.phrases, said.equipment) == (("lunges",), ("barbell",))
    # An area said so is left to avoid_areas; a bare word is the caller's exercise phrase as before.
    assert split_avoid(["full body, no legs"], not_exercises={"leg"}).phrases == ()
    assert split_avoid(["legs"], not_exercises={"leg"}).phrases == ("legs",)


def test_one_load_rule_weights_on_hand_first_then_the_implements_step() -> None:
    """Loads round to the weights the location lists, else to the implement's step, never below the empty bar."""
    on_hand = {"dumbbells": (10.0, 12.5, 16.0, 20.0, 24.0)}
    assert round_load(18.7, unit="kg", gear="dumbbells", weights_kg=on_hand) == 20.0
    assert step_load(20.0, unit="kg", gear="dumbbells", steps=1, weights_kg=on_hand) == 24.0
    assert step_load(10.0, unit="kg", gear="dumbbells", steps=-1, weights_kg=on_hand) == 10.0
    assert step_load(20.0, unit="kg", gear="dumbbells", steps=1) == 22.5
    assert step_load(60.0, unit="kg", gear="barbell", steps=1) == 62.5
    assert step_load(16.0, unit="kg", gear="kettlebell", steps=1) == 20.0
    assert round_load(12.0, unit="kg", gear="barbell") == 20.0
    assert round_load(30.0, unit="lb", gear="barbell") == 45.0
    assert step_load(135.0, unit="lb", gear="barbell", steps=1) == 140.0


def test_a_brief_for_the_full_body_without_legs_targets_everything_but_the_legs() -> None:
    """ "full body, no legs" keeps the whole body except the legs; an open brief names no muscle explicitly, so
    recovering muscles may be left out of it, while "legs" names the quads."""
    weights = WorkoutBrief(focus=["full body"], avoid_areas=["legs"]).target_weights()
    assert "Quadriceps" not in weights and "Chest" in weights
    assert WorkoutBrief(focus=["full body"]).explicit_muscles() == frozenset()
    assert "Quadriceps" in WorkoutBrief(focus=["legs"]).explicit_muscles()


def test_a_swap_and_a_draft_prescribe_a_lift_by_the_same_rule() -> None:
    """After a completed 3×6 at 60 kg, the bench press comes back for 10 reps at that load moved to 10 reps (Epley)
    and one step heavier, 57.5 kg (not 62.5 kg for 4 more reps), whether the draft picks it or a swap puts it in:
    one progression rule for every model, said as what happened."""
    trainee = make_trainee()
    set_current_location(user_id=trainee.user_id, location_id=trainee.gym.id)
    log_bench_press(trainee.user_id, days_ago=3)
    _, drafted = draft(trainee, focus=["chest"])
    bench = next(e for e in drafted if e["exercise_name"] == "Barbell Bench Press")
    assert bench["reps"][0] == 10
    assert bench["load_each"][0] == 57.5 and "60 kg × 6 last time; 57.5 kg for 10 reps." in bench["reasoning"]
    other = next(e for e in main(drafted) if e["exercise_name"] != "Barbell Bench Press")
    swapped = trainee.run(
        "swap_exercise", {"exercise_id": other["id"], "replacement_name": "Barbell Bench Press"}
    )
    assert swapped.success, swapped.formatted
    new = swapped.data["new_exercise"]
    assert new["load_each"][0] == 57.5 and "60 kg × 6 last time; 57.5 kg for 10 reps." in new["reasoning"]
    assert new["reps"][0] == bench["reps"][0]  # the draft may lengthen rests to fit its minutes


def test_a_catalogue_edit_reaches_the_next_draft_at_once() -> None:
    """Drafting keeps the catalogue per process between drafts; an exercise staff rename (or re-equip) is what
    the next draft chooses from, not the name it had."""
    trainee = make_trainee()
    _, before = draft(trainee, focus=["upper body"], minutes=45)
    name = main(before)[0]["exercise_name"]
    exercise = Exercise.objects.get(name=name)
    exercise.name = f"Studio {name}"
    exercise.name_key = exercise_name_key(exercise.name)  # as the admin's save does
    exercise.save()
    names = {candidate.name for candidate in load_catalog()}
    assert f"Studio {name}" in names and name not in names
    exercise.equipment.clear()
    (studio,) = [c for c in load_catalog() if c.name == f"Studio {name}"]
    assert studio.equipment == ()


@pytest.mark.django_db(transaction=True)
def test_drafts_at_once_read_the_catalogue_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A burst of drafts on a process with no catalogue yet (or an old one) reads it once, not once per draft:
    fifty concurrent drafts each built it and the burst's first cards came 10 s late."""
    from django.db import connection as default_connection

    from datasources_app import selectors
    from tools_app import training_facts

    reads: list[int] = []
    real = selectors.search_exercises

    def counted(**kwargs: Any) -> Any:
        reads.append(1)
        time.sleep(0.2)  # a slow read, so the other threads arrive while it runs
        return real(**kwargs)

    monkeypatch.setattr(selectors, "search_exercises", counted)

    def load() -> int:
        try:
            return len(training_facts.load_catalog())
        finally:
            from django.db import connection

            if connection is not default_connection:
                connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        sizes = list(pool.map(lambda _: load(), range(8)))
    assert len(reads) == 1 and len(set(sizes)) == 1 and sizes[0] > 100
    # An old copy: one thread reads it again while the others go on with the copy they have.
    kept = training_facts._catalog
    assert kept is not None
    training_facts._catalog = (time.monotonic() - training_facts.CATALOG_TTL_SECONDS - 1, kept[1])
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda _: load(), range(8)))
    assert len(reads) == 2
