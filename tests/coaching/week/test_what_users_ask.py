"""The offline coach answers what it is asked (issue 23, item 11): a table of what real users type, each checked
for what the user gets back — a message (never an empty reply), the tool it used, and what it created.

Asserts behaviour, never exact wording: the plan and its week exist, a log question lists what was logged with
its numbers, a HIIT request gets conditioning work, a question the coach cannot help with still gets a reply.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from datasources_app.models import Preference
from datasources_app.selectors import find_exercise_by_name
from datasources_app.services import upsert_profile
from tests.coaching.week.conftest import Coached, tools_of
from tests.trainer_agent.offline.conftest import DemoUser, created_workout
from trainer_agent.loop import TurnResult

PLAN = "Make me a 12-week strength plan, 3 days a week"
KNEE_UNSAFE = ("lunge", "split-squat", "step-up", "jump", "burpee", "box-", "high-knees", "bound")
CONDITIONING_PATTERNS = ("jump", "locomotion", "cyclical")


def _reply(result: TurnResult) -> str:
    messages = result.response["messages"]
    assert messages and all(message.strip() for message in messages), (tools_of(result), result.response)
    return "\n".join(messages)


def _circuit_slugs(result: TurnResult) -> list[str]:
    """The main (non warm-up/cool-down) exercises of the workout created, as catalogue slugs, after checking they
    run as intervals in a circuit."""
    main = [
        e
        for e in created_workout(result)["exercises"]
        if (e.get("group") or {}).get("type") not in ("warmup", "cooldown")
    ]
    assert {e["exercise_type"] for e in main} == {"intervals"}
    assert {e["group"]["type"] for e in main} == {"circuit"}
    found = [find_exercise_by_name(name=e["exercise_name"]) for e in main]
    assert all(found), [e["exercise_name"] for e in main]
    return [exercise.slug for exercise in found if exercise is not None]


def _conditioning(slugs: list[str]) -> list[str]:
    moves = [find_exercise_by_name(name=slug.replace("-", " ")) for slug in slugs]
    return [
        move.slug
        for move in moves
        if move is not None
        and (move.category in ("plyometrics", "cardio") or move.movement_pattern in CONDITIONING_PATTERNS)
    ]


# --- setups ---------------------------------------------------------------------------------------------------
def _healthy(coached: Coached) -> None:
    """No knee limitation and no "no burpees": every conditioning move is allowed."""
    upsert_profile(user_id=coached.user_id, injuries="", limitations=[])
    Preference.objects.filter(user_id=coached.user_id).delete()


def _logged_legs(coached: Coached) -> None:
    DemoUser(coached.user_id).trained_legs(hours_ago=30)


def _with_plan(coached: Coached) -> None:
    coached.say(PLAN)
    coached.session_id = None


def _at_gym(coached: Coached) -> None:
    coached.at("Gym")


# --- checks ---------------------------------------------------------------------------------------------------
def _plan_created(days: int) -> Callable[[Coached, TurnResult, str], None]:
    def check(coached: Coached, result: TurnResult, reply: str) -> None:
        assert result.actions[0].args["days_per_week"] == days
        assert len(coached.week(1)) == days
        assert all(item.message for item in coached.week(1)), "week 1 is prepared with its messages"
        assert "week 1" in reply.lower()
        assert "create_workout_plan" not in reply, "no tool talk to the user"

    return check


def _strength_plan(coached: Coached, result: TurnResult, reply: str) -> None:
    _plan_created(3)(coached, result, reply)
    assert coached.plan().plan["goal_type"] == "strength"


def _first_day_shown(coached: Coached, result: TurnResult, reply: str) -> None:
    first = coached.week(1)[0]
    assert first.title in reply
    assert "id=" not in reply and "<" not in reply


def _asked_day_shown(coached: Coached, result: TurnResult, reply: str) -> None:
    day = coached.week(1)[0]
    assert reply.startswith(f"On {day.scheduled_date:%A}:")
    assert day.title in reply
    assert all(other.title not in reply for other in coached.week(1)[1:]), "only the day asked about"


def _nothing_that_day(coached: Coached, result: TurnResult, reply: str) -> None:
    assert "Nothing is scheduled on Sunday" in reply
    assert coached.week(1)[0].title in reply or "No workouts scheduled" in reply


def _lists_the_logged_sets(coached: Coached, result: TurnResult, reply: str) -> None:
    for name in ("Barbell Back Squat", "Romanian Deadlift", "Walking Lunge"):
        assert name in reply
    assert "100kg × 5" in reply and "5 working sets" in reply


def _nothing_logged(coached: Coached, result: TurnResult, reply: str) -> None:
    assert "No exercises logged" in reply and "workout" in reply


def _squat_trend(coached: Coached, result: TurnResult, reply: str) -> None:
    assert (
        "Barbell Back Squat" in reply and "116.5kg" in reply
    )  # the e1RM of 100 kg × 5 (116.7), to the 0.5 kg a coach says
    assert "Trend:" in reply


def _totals(coached: Coached, result: TurnResult, reply: str) -> None:
    assert "15 sets" in reply and "5,000kg" in reply


def _units(
    weight: str | None, distance: str | None, words: str
) -> Callable[[Coached, TurnResult, str], None]:
    """The setting changed (what every later workout and log reads), and the reply says so in words."""

    def check(coached: Coached, result: TurnResult, reply: str) -> None:
        from datasources_app.selectors import get_settings

        found = get_settings(user_id=coached.user_id)
        assert (found.weight_unit, found.distance_unit) == (weight or "kg", distance or "km")
        assert words in reply, reply

    return check


def _conditioning_circuit(coached: Coached, result: TurnResult, reply: str) -> None:
    slugs = _circuit_slugs(result)
    moves = _conditioning(slugs)
    assert len(moves) >= len(slugs) / 2, slugs
    assert set(moves) & {
        "burpee",
        "mountain-climber",
        "high-knees",
        "jumping-jacks",
        "jump-squat",
        "star-jump",
    }


def _machine_intervals(coached: Coached, result: TurnResult, reply: str) -> None:
    slugs = _circuit_slugs(result)
    assert set(slugs) & {"rowing-machine", "stationary-bike", "recumbent-bike"}, slugs
    assert len(_conditioning(slugs)) >= len(slugs) / 2, slugs


def _knee_safe_conditioning(coached: Coached, result: TurnResult, reply: str) -> None:
    """The demo's knee rules out jumps and climbers and it dislikes burpees: still conditioning, never those."""
    slugs = _circuit_slugs(result)
    assert not [slug for slug in slugs if any(part in slug for part in KNEE_UNSAFE)], slugs
    assert _conditioning(slugs), slugs
    assert not {"bird-dog", "glute-kickback", "arm-circles"} & set(slugs), (
        "no low-effort moves in the circuit"
    )
    assert "knee" in reply


def _short_workout(coached: Coached, result: TurnResult, reply: str) -> None:
    assert "draft_workout" in tools_of(result)
    assert int(reply.split("about ")[1].split(" min")[0]) <= 25


def _says_what_it_does(coached: Coached, result: TurnResult, reply: str) -> None:
    assert "workout" in reply.lower()


@dataclass(frozen=True)
class Ask:
    message: str
    tool: str  # the first tool the turn calls
    check: Callable[[Coached, TurnResult, str], None]
    setup: tuple[Callable[[Coached], None], ...] = ()


ASKS = [
    # Plans: the plan is created from the days and goal said, week 1 prepared in the background.
    Ask(
        "Can you plan my training for next week? 3 days, I want to get stronger.",
        "create_workout_plan",
        _strength_plan,
    ),
    Ask("I want to get fit, 4 days a week", "create_workout_plan", _plan_created(4)),
    Ask(PLAN, "create_workout_plan", _strength_plan),
    # The schedule.
    Ask("when's my next workout?", "fetch_data", _first_day_shown, (_with_plan,)),
    Ask("What's on this week?", "fetch_data", _first_day_shown, (_with_plan,)),
    Ask("what's on sunday?", "fetch_data", _nothing_that_day, (_with_plan,)),
    # What was logged, and progress.
    Ask("What did I log this week?", "get_training_stats", _lists_the_logged_sets, (_logged_legs,)),
    Ask("what did I do last week", "get_training_stats", _lists_the_logged_sets, (_logged_legs,)),
    Ask("show me my logs", "get_training_stats", _lists_the_logged_sets, (_logged_legs,)),
    Ask("What did I log this week?", "get_training_stats", _nothing_logged),
    Ask("how am I progressing on squats", "get_training_stats", _squat_trend, (_logged_legs,)),
    Ask("how am I doing this month?", "get_training_stats", _totals, (_logged_legs,)),
    # HIIT, conditioning, cardio intervals.
    Ask("Give me a HIIT conditioning workout", "draft_workout", _conditioning_circuit, (_healthy,)),
    Ask("tabata", "draft_workout", _conditioning_circuit, (_healthy,)),
    Ask("20 minutes of conditioning", "draft_workout", _machine_intervals, (_healthy, _at_gym)),
    Ask("Give me a HIIT conditioning workout", "draft_workout", _machine_intervals, (_at_gym,)),
    Ask("Give me a HIIT conditioning workout", "draft_workout", _knee_safe_conditioning),
    Ask("I only have 20 minutes", "draft_workout", _short_workout),
    # Units: the setting, one way only.
    Ask("Use pounds from now on.", "set_units", _units("lb", None, "pounds for weights")),
    Ask("can you switch me to miles?", "set_units", _units(None, "mi", "miles for distances")),
    # Conversation.
    Ask("hi", "message_notify_user", _says_what_it_does),
    Ask("good morning!", "message_notify_user", _says_what_it_does),
    Ask("thanks", "message_notify_user", lambda coached, result, reply: None),
    Ask("what's the weather like?", "message_notify_user", _says_what_it_does),
    Ask("who are you?", "message_notify_user", _says_what_it_does),
]


@pytest.mark.django_db
@pytest.mark.parametrize("ask", ASKS, ids=[f"{i:02d} {ask.message}" for i, ask in enumerate(ASKS)])
def test_each_request_gets_the_answer_it_asks_for(coached: Coached, ask: Ask) -> None:
    for setup in ask.setup:
        setup(coached)
    result = coached.say(ask.message)
    assert tools_of(result)[0] == ask.tool, tools_of(result)
    assert tools_of(result)[-1] == "idle"
    ask.check(coached, result, _reply(result))


@pytest.mark.django_db
def test_a_schedule_question_about_one_day_shows_that_day(coached: Coached) -> None:
    """ "What's on <the first training day>?" shows that day's session and message, not the whole week."""
    _with_plan(coached)
    day = coached.week(1)[0].scheduled_date
    result = coached.say(f"what's on {day:%A}?")
    _asked_day_shown(coached, result, _reply(result))
