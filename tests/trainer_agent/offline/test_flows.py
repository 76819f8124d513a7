"""Whole turns with the offline model: the end-to-end check of docs/contracts.md §16 (end-to-end checks), asking, changing and logging a workout across a
multi-turn session, preferences, locations, statistics and determinism."""

from __future__ import annotations

import pytest

from datasources_app.models import Location, Preference, WorkoutLog
from datasources_app.selectors import current_location, get_current_workout
from datasources_app.services import upsert_settings
from datasources_app.workouts import is_main
from sessions_app.models import AgentSession, AgentSessionEvent
from sessions_app.selectors import get_artifact
from sessions_app.services import create_session
from tests.support.training import log_bench_press
from tests.trainer_agent.offline.conftest import DemoUser, generated, tools_of
from trainer_agent.turns import run_turn


@pytest.mark.django_db
def test_smoke_test_of_section_12_9_passes_offline(demo: DemoUser) -> None:
    """docs/contracts.md §16 (end-to-end checks) with the offline model: generate → notify with the same resolved artifact → idle."""
    session = create_session(user_id=demo.user_id)
    assert session.status == "active"

    result = run_turn(
        user_id=demo.user_id, message="Give me a quick chest workout", session_id=session.pk, model="offline"
    )

    assert result.session_id == session.pk
    assert 2 <= result.iterations <= 10
    names = tools_of(result)
    assert names == ["draft_workout", "message_notify_user", "idle"]
    generate, notify = result.actions[0], result.actions[1]
    assert generate.result["success"] is True
    assert generate.result["artifact_id"].startswith("art_")
    assert notify.result["artifact_id"] == generate.result["artifact_id"]
    assert notify.result["artifact"] is not None

    types = set(AgentSessionEvent.objects.filter(session=session).values_list("event_type", flat=True))
    assert {"user_message", "tool_call", "tool_result", "artifact", "llm_request", "llm_response"} <= types
    session.refresh_from_db()
    assert session.status == "completed"
    assert session.total_tokens > 0
    assert session.total_cost_cents == 0  # the offline model is free

    artifact = get_artifact(session=session, artifact_id=generate.result["artifact_id"])
    assert artifact is not None and artifact["type"] == "exercise_list"
    first = artifact["payload"]["exercises"][0]
    assert first["exercise_name"]
    assert first["exercise_type"] in ("reps", "hold", "duration", "intervals")
    assert first["muscles_utilized"] and first["goals_addressed"]
    assert result.response["exercises"] == artifact["payload"]["exercises"]

    again = run_turn(
        user_id=demo.user_id, message="Show me a leg workout", session_id=session.pk, model="offline"
    )
    assert tools_of(again) == ["draft_workout", "message_notify_user", "idle"]


@pytest.mark.django_db
def test_an_unclear_request_asks_with_options_and_stops(demo: DemoUser) -> None:
    """ "help" gets one question with 3-4 options; the turn ends with it."""
    result = demo.run("help")
    # It reads the last days' training first (it decides the options), then asks once and stops.
    assert tools_of(result) == ["fetch_data", "message_ask_user"]
    assert result.iterations == 2
    question = result.response["question"]
    assert question is not None and 3 <= len(question["options"]) <= 4
    assert "Upper body" in question["options"]


@pytest.mark.django_db
def test_options_avoid_legs_while_they_recover(demo: DemoUser) -> None:
    """When the legs are still recovering, the suggested options offer something else instead."""
    demo.trained_legs(hours_ago=10)
    options = demo.run("what should I do").response["question"]["options"]
    assert "Legs and glutes" not in options


@pytest.mark.django_db
def test_swap_adjust_remove_and_log_across_a_session(demo: DemoUser) -> None:
    """One session: build a workout, swap the 2nd exercise, make it easier, drop the last one, then log it."""
    first = demo.run("Give me a 30 minute chest workout")
    session_id = first.session_id
    exercises = first.response["exercises"]
    assert exercises

    swapped = demo.run("swap the 2nd exercise", session_id=session_id)
    assert tools_of(swapped) == ["swap_exercise", "message_notify_user", "idle"]
    # The 2nd in words is the second main exercise (the warm-up's are counted only when named).
    second = [e for e in exercises if is_main(e)][1]
    assert swapped.actions[0].result["data"]["old_exercise"]["id"] == second["id"]
    after_swap = swapped.response["exercises"]
    at = second["order"]
    assert after_swap[at - 1]["exercise_name"] != second["exercise_name"]
    assert [e["id"] for e in after_swap if e["order"] != at] == [
        e["id"] for e in exercises if e["order"] != at
    ]
    assert swapped.actions[1].args["artifact_id"] == swapped.actions[0].result["artifact_id"]

    easier = demo.run("make it easier", session_id=session_id)
    tools = tools_of(easier)
    assert tools[-2:] == ["message_notify_user", "idle"] and set(tools[:-2]) == {"adjust_exercise"}
    before = {e["id"]: e for e in after_swap}
    for exercise in easier.response["exercises"]:
        old = before[exercise["id"]]
        if exercise["exercise_type"] == "reps":
            assert exercise["sets"] <= old["sets"]
            assert (exercise.get("load_each") or [0])[0] <= (old.get("load_each") or [0])[0]
    assert easier.response["exercises"] != after_swap

    removed = demo.run("remove the last one", session_id=session_id)
    assert tools_of(removed) == ["remove_exercise", "message_notify_user", "idle"]
    remaining = removed.response["exercises"]
    assert len(remaining) == len(after_swap) - 1
    assert remaining[-1]["id"] == after_swap[-2]["id"]

    logged = demo.run("I did it", session_id=session_id)
    assert tools_of(logged) == ["log_workout", "message_notify_user", "idle"]
    log = WorkoutLog.objects.get(user_id=demo.user_id)
    assert log.entries.count() == len(remaining)
    assert get_current_workout(user_id=demo.user_id) is None
    assert AgentSession.objects.filter(user_id=demo.user_id).count() == 1


@pytest.mark.django_db
def test_replacing_by_name_uses_a_safe_pick_and_says_why_not_the_asked_one(demo: DemoUser) -> None:
    """ "replace the glute bridge with lunges" with a bad knee: the bridge is swapped, not for lunges, and the
    message explains it. (Leg day for a bad knee holds no squat to replace.)"""
    session_id = demo.run("Leg day please").session_id
    result = demo.run("replace the glute bridge with lunges", session_id=session_id)
    # swap_exercise refuses the lunges (the knee), then picks a safe one itself: one swap is made.
    assert tools_of(result) == ["swap_exercise", "swap_exercise", "message_notify_user", "idle"]
    refused, swapped = result.actions[0], result.actions[1]
    assert refused.args["replacement_name"] == "lunges" and not refused.result["success"]
    new_name = swapped.result["data"]["new_exercise"]["exercise_name"]
    assert "lunge" not in new_name.lower()
    assert "knee" in result.response["messages"][0]


@pytest.mark.django_db
def test_changing_a_workout_that_does_not_exist_offers_to_create_one(demo: DemoUser) -> None:
    """Swap, adjust, remove or log with no current workout: ask whether to build one, call nothing else."""
    for message in ("swap the 2nd exercise", "make it easier", "remove exercise 2", "I did it"):
        result = demo.run(message)
        assert tools_of(result) == ["message_ask_user"], message
        assert "build one" in result.response["question"]["question"]


@pytest.mark.django_db
def test_reported_sets_are_logged_as_one_exercise(demo: DemoUser) -> None:
    """ "I did 3x8 at 20kg on bench" logs those sets for a bench press, without needing a workout."""
    result = demo.run("I did 3x8 at 20kg on bench")
    assert tools_of(result) == ["log_completed_exercise", "message_notify_user", "idle"]
    arguments = result.actions[0].args
    assert (
        arguments["sets"] == 3 and arguments["reps"] == [8, 8, 8] and arguments["load_each"] == [20, 20, 20]
    )
    assert "bench" in arguments["exercise_name"].lower()
    entry = WorkoutLog.objects.get(user_id=demo.user_id).entries.get()
    assert entry.actual_load_each == [20.0, 20.0, 20.0]


@pytest.mark.django_db
def test_words_that_name_no_exercise_make_the_whole_workout_harder(demo: DemoUser) -> None:
    """ "That looks too easy, make it harder": the words name no exercise (the tool says so), so the coach asks
    the tool for every main exercise at once and delivers the harder workout (`manage.py eval` caught the coach
    giving up after the first refusal)."""
    first = demo.run("Give me a full body workout")
    harder = demo.run("That looks too easy, make it harder", session_id=first.session_id)
    assert tools_of(harder) == ["adjust_exercise", "adjust_exercise", "message_notify_user", "idle"]
    assert harder.actions[1].args["exercise_id"] == "all"
    assert harder.response["exercises"] != first.response["exercises"]


@pytest.mark.django_db
def test_sets_noted_down_during_a_workout_are_logged_for_its_exercise(demo: DemoUser) -> None:
    """ "3x8 at 27.5 on the bench press" during a chest workout, the way a set is noted down (no "I did", no
    unit): those sets go to the workout's bench press, in the user's unit."""
    demo.run("a quick chest workout")
    result = demo.run("3x8 at 27.5 on the bench press")
    assert tools_of(result) == ["log_completed_exercise", "message_notify_user", "idle"]
    entry = WorkoutLog.objects.get(user_id=demo.user_id).entries.get()
    assert "Bench Press" in entry.exercise_name and entry.actual_load_each == [27.5, 27.5, 27.5]
    assert entry.actual_reps == [8, 8, 8]


@pytest.mark.django_db
def test_a_preference_is_saved_and_respected_by_the_next_workout(demo: DemoUser) -> None:
    """ "no push-ups this week" becomes a temporary preference, and the next chest workout has no push-ups."""
    result = demo.run("no push-ups this week")
    assert tools_of(result) == ["set_preference", "message_notify_user", "idle"]
    saved = Preference.objects.get(user_id=demo.user_id, description="no push-ups this week")
    assert saved.preference_type == "temporary" and saved.expires_at is not None
    assert saved.exclude_exercises == ["Push-Up"]

    workout = demo.run("quick chest workout", session_id=result.session_id)
    assert all("push-up" not in e["exercise_name"].lower() for e in generated(workout))


@pytest.mark.django_db
def test_saying_where_you_are_switches_location_and_asks_what_to_train(demo: DemoUser) -> None:
    """ "I'm at the gym" makes the Gym current, then asks what to train (the turn ends on the question)."""
    result = demo.run("I'm at the gym")
    assert tools_of(result) == ["set_current_location", "message_ask_user"]
    location = current_location(user_id=demo.user_id)
    assert location is not None and location.name == "Gym"
    assert Location.objects.filter(user_id=demo.user_id, is_current=True).count() == 1


@pytest.mark.django_db
def test_progress_question_reads_statistics_then_answers_with_numbers(demo: DemoUser) -> None:
    """ "How am I doing this month" calls a statistics tool, then summarises real numbers for the user."""
    demo.trained_legs(hours_ago=30)
    result = demo.run("how am I doing this month")
    assert tools_of(result) == ["get_training_stats", "message_notify_user", "idle"]
    assert result.actions[0].args == {"view": "totals", "days": 30}
    message = result.response["messages"][0]
    assert "1 workout" in message and "15 sets" in message


@pytest.mark.django_db
def test_greeting_and_thanks_get_a_short_reply_then_idle(demo: DemoUser) -> None:
    """Small talk is one friendly message and idle; the greeting uses the user's name and location."""
    hello = demo.run("hi")
    assert tools_of(hello) == ["message_notify_user", "idle"]
    assert "Alex" in hello.response["messages"][0] and "Home" in hello.response["messages"][0]
    thanks = demo.run("thanks!", session_id=hello.session_id)
    assert tools_of(thanks) == ["message_notify_user", "idle"]


@pytest.mark.django_db
def test_yes_after_an_offer_builds_the_workout(demo: DemoUser) -> None:
    """Answering "yes" to "Want me to build one?" creates a workout in the same session."""
    offer = demo.run("I did it")
    assert tools_of(offer) == ["message_ask_user"]
    result = demo.run("yes", session_id=offer.session_id)
    assert tools_of(result) == ["draft_workout", "message_notify_user", "idle"]


@pytest.mark.django_db
def test_the_same_request_gives_the_same_tool_calls(demo: DemoUser) -> None:
    """Determinism: the same request in the same state produces identical tool calls."""
    first = demo.run("Give me a 45 minute full body workout")
    second = demo.run("Give me a 45 minute full body workout")
    assert first.session_id != second.session_id
    assert first.actions[0].args == second.actions[0].args
    assert first.actions[1].args["message"] == second.actions[1].args["message"]
    assert tools_of(first) == tools_of(second)


@pytest.mark.django_db
def test_a_new_dislike_also_fixes_the_current_workout(demo: DemoUser) -> None:
    """ "I hate push-ups" while a workout holds push-ups: save the preference, swap them out, deliver."""
    first = demo.run("a 45 minute chest workout with push-ups")
    names = [e["exercise_name"] for e in first.response["exercises"]]
    if "Push-Up" not in names:
        demo.run("replace the fly with push-ups", session_id=first.session_id)
    result = demo.run("I hate push-ups", session_id=first.session_id)
    assert tools_of(result)[0] == "set_preference"
    assert "swap_exercise" in tools_of(result)
    assert tools_of(result)[-2:] == ["message_notify_user", "idle"]
    assert all("push-up" not in e["exercise_name"].lower() for e in result.response["exercises"])


@pytest.mark.django_db
def test_no_bench_today_swaps_every_exercise_that_needs_the_bench(demo: DemoUser) -> None:
    """ "no bench today" replaces each exercise of the current workout that uses the bench."""
    first = demo.run("Give me a quick chest workout")
    assert any("bench" in (e.get("equipment") or []) for e in first.response["exercises"])
    result = demo.run("no bench today", session_id=first.session_id)
    assert set(tools_of(result)[:-2]) == {"swap_exercise"}
    assert all("bench" not in (e.get("equipment") or []) for e in result.response["exercises"])


@pytest.mark.django_db
def test_loads_follow_the_users_weight_unit(demo: DemoUser) -> None:
    """A user who trains in pounds gets pound loads that match the weights on hand (whole pounds)."""
    upsert_settings(user_id=demo.user_id, weight_unit="lb")
    exercises = generated(demo.run("quick chest workout"))
    loaded = [e for e in exercises if e.get("load_each")]
    assert loaded
    for exercise in loaded:
        assert exercise["load_unit"] == "lb"
        assert all(float(load).is_integer() for load in exercise["load_each"])


@pytest.mark.django_db
def test_progressive_overload_builds_on_the_last_logged_session(demo: DemoUser) -> None:
    """A lift completed as planned three days ago comes back one weight step heavier, and says so."""
    demo.at("Gym")
    log_bench_press(demo.user_id, days_ago=3)
    exercises = generated(demo.run("Give me a quick chest workout"))
    bench = next(e for e in exercises if e["exercise_name"] == "Barbell Bench Press")
    assert bench["load_each"] == [62.5] * bench["sets"]
    assert "Up from 60 kg × 6 last time." in bench["reasoning"]
