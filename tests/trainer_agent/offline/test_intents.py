"""The offline coach's reading of user messages (pure text rules, no database)."""

from __future__ import annotations

import pytest

from tools_app.plan_builder import classify_goal
from trainer_agent.offline.intents import Adjustment, parse_message


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("Give me a quick chest workout", "workout"),
        ("Show me a leg workout", "workout"),
        ("Full-body strength (45 min)", "workout"),
        ("Legs and glutes", "workout"),
        ("push day", "workout"),
        ("swap the 2nd exercise", "swap"),
        ("replace squats with something else", "swap"),
        ("no bench today", "swap"),
        ("make it easier", "adjust"),
        ("fewer sets", "adjust"),
        ("change reps of exercise 3 to 12", "adjust"),
        ("remove the last one", "remove"),
        ("drop exercise 2", "remove"),
        ("I did it", "log"),
        ("finished!", "log"),
        ("log my workout", "log"),
        ("I did 3x8 at 20kg on bench", "log"),
        ("3x8 at 27.5 on the bench press", "log"),
        ("3 sets of 10 on the rows", "log"),
        ("I hate burpees", "preference"),
        ("no running this week", "preference"),
        ("no push-ups from now on", "preference"),
        ("I don't have a barbell", "preference"),
        ("how am I doing this month", "stats"),
        ("show me my progress", "stats"),
        ("how much did I lift this week?", "stats"),
        ("how many kg have I moved this month", "stats"),
        ("what have I lifted lately", "stats"),
        ("I want to lift heavy today", "workout"),
        ("I'm at the gym", "location"),
        ("hi", "greeting"),
        ("thanks!", "thanks"),
        ("who are you", "smalltalk"),
        ("yes please", "affirm"),
        ("nah", "decline"),
        ("help", "ambiguous"),
        ("what should I do", "ambiguous"),
        ("train?", "ambiguous"),
        ("blorp", "ambiguous"),
    ],
)
def test_message_kind(message: str, kind: str) -> None:
    """Each kind of request is recognised from everyday wording."""
    assert parse_message(message).kind == kind


@pytest.mark.parametrize(
    ("message", "focus", "minutes", "style"),
    [
        ("Give me a quick chest workout", ("chest",), 20, None),
        ("Quick 20-minute HIIT", (), 20, "hiit"),
        ("pull workout, about an hour", ("pull",), 60, None),
        ("half an hour of cardio", (), 30, "cardio"),
        ("upper body strength, 45 min", ("upper body",), 45, "strength"),
        ("a stretching session for my lower back", ("lower back",), None, "mobility"),
        ("chest and triceps", ("chest", "triceps"), None, None),
        ("I'm at the gym, give me a workout", (), None, None),
    ],
)
def test_workout_details(
    message: str, focus: tuple[str, ...], minutes: int | None, style: str | None
) -> None:
    """Body areas, duration and style are read from the request; "gym" is a place, not a muscle."""
    ask = parse_message(message).workout
    assert ask is not None
    assert (ask.focus, ask.duration_min, ask.style) == (focus, minutes, style)


def test_full_body_without_legs_asks_for_a_brief_without_the_legs() -> None:
    """ "full body, no legs": the whole body is the focus and the legs are left out (draft_workout's brief)."""
    ask = parse_message("full body workout, no legs").workout
    assert ask is not None
    assert ask.focus == ("full body",) and ask.avoid == ("legs",)
    assert parse_message("leg day").workout.focus == ("legs",)  # type: ignore[union-attr]


def test_references_to_exercises_are_the_users_words() -> None:
    """The words that say which exercise go to the tools as said (positions, names, equipment); a message
    that says none gives none, and a replacement named is not part of them."""
    assert parse_message("swap the 2nd exercise").ref == "swap the 2nd exercise"
    assert parse_message("remove exercise 4").ref == "remove exercise 4"
    assert parse_message("remove the last one").ref == "remove the last one"
    assert parse_message("Swap an exercise").ref == ""
    assert parse_message("no bench today").avoids
    swap = parse_message("replace the fly with push-ups")
    assert swap.replacement == "push-ups" and swap.ref.strip() == "replace the fly"
    assert parse_message("change reps of the plank to 45").ref == "the plank"


@pytest.mark.parametrize(
    ("message", "adjustment"),
    [
        ("make it easier", Adjustment("overall", "down")),
        ("this is too easy", Adjustment("overall", "up")),
        ("fewer sets please", Adjustment("sets", "down")),
        ("lighter", Adjustment("load", "down")),
        ("more rest", Adjustment("rest", "up")),
        ("change reps of exercise 3 to 12", Adjustment("reps", None, 12.0)),
    ],
)
def test_adjustments(message: str, adjustment: Adjustment) -> None:
    """Easier/harder, sets, reps, load and rest changes, with or without a number."""
    assert parse_message(message).adjustment == adjustment


def test_logged_numbers() -> None:
    """ "3x8 at 20kg on bench" gives sets, reps, load, unit and the exercise's words."""
    (logged,) = parse_message("I did 3x8 at 20kg on bench").logged
    assert (logged.sets, logged.reps, logged.load, logged.unit, logged.exercise) == (
        3,
        8,
        20.0,
        "kg",
        "bench",
    )
    (noted,) = parse_message("3x8 at 27.5 on the bench press").logged
    assert (noted.sets, noted.reps, noted.load, noted.unit, noted.exercise) == (
        3,
        8,
        27.5,
        None,
        "bench press",
    )
    (unnamed,) = parse_message("I did 3 sets of 10 at 20 kg").logged
    assert unnamed.exercise == ""
    skipped = parse_message("done, but I skipped the planks")
    assert skipped.kind == "log" and skipped.skipped == ("planks",)


def test_location_names_come_from_the_user() -> None:
    """A location the user has, by any name, is recognised; unknown places are not."""
    assert parse_message("at the office today", known_locations=["Office", "Home"]).location == "Office"
    assert parse_message("at the office today", known_locations=["Home", "Gym"]).location is None


@pytest.mark.parametrize(
    ("request_text", "goal"),
    [
        ("Make me a 12-week plan to get stronger, 3 days a week", "Get stronger"),
        ("a 12-week strength plan, 3 days a week", "Strength"),
        ("12 week plan to build muscle 4 days a week", "Build muscle"),
        ("8 week program to run a 10k in under 50 minutes", "Run a 10k in under 50 minutes"),
        ("12-week hypertrophy block to get bigger", "Hypertrophy"),
        ("12 week plan to get stronger at home with dumbbells", "Get stronger"),
    ],
)
def test_a_plan_request_keeps_its_goal_not_the_whole_sentence(request_text: str, goal: str) -> None:
    """The plan's goal reads as a goal, and the plan tool still picks the type the whole request asked for."""
    intent = parse_message(request_text)
    assert intent.kind == "plan" and intent.plan is not None
    assert intent.plan.goal == goal
    assert classify_goal(intent.plan.goal) == classify_goal(request_text)
