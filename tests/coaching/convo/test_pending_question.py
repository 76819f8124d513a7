"""A conversation that remembers its question (issue 17, item 3): the reply to the coach's question is read
as the answer first, typed or picked from the options, and completes the request that raised it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.coaching.convo.conftest import Chat, main_exercises, tools_of
from trainer_agent.context import build_context

pytestmark = pytest.mark.django_db


def loaded(exercises: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The main exercises that carry a load (the ones sets "at 20 kg" can belong to)."""
    found = [e for e in main_exercises(exercises) if e.get("load_each")]
    assert found, "the workout has no loaded exercise"
    return found


def asked_which_exercise(chat: Chat) -> dict[str, Any]:
    """Report numbers without naming the exercise: the coach asks which one, with the workout's options."""
    result = chat.say("I did 3 sets of 10 at 20 kg")
    question = chat.question(result)
    assert tools_of(result) == ["message_ask_user"]
    assert question is not None and question["options"], result.response
    assert not chat.logs(), "nothing is logged before the answer"
    return question


def test_a_typed_exercise_name_completes_the_pending_log(chat: Chat) -> None:
    """The issue's conversation: "Which exercise was that?" → "Dumbbell Bench Press" logs 3×10 @ 20 kg on it."""
    exercises = chat.workout()
    target = loaded(exercises)[0]
    asked_which_exercise(chat)

    answer = chat.say(target["exercise_name"])

    assert "log_completed_exercise" in tools_of(answer), answer.response
    (entry,) = chat.entries(target["exercise_name"])
    assert (entry.actual_sets, entry.actual_reps, entry.actual_load_each) == (3, [10, 10, 10], [20, 20, 20])
    assert entry.load_unit == "kg"
    assert target["exercise_name"] in chat.reply(answer)
    assert chat.question(answer) is None, "the answer is not met with another question"


def test_the_answer_picked_from_the_chips_logs_that_exercise(chat: Chat) -> None:
    """A chip sends the option's text: the last option offered is the exercise logged."""
    chat.workout()
    options = asked_which_exercise(chat)["options"]

    answer = chat.say(options[-1])

    assert tools_of(answer)[0] == "log_completed_exercise"
    (entry,) = chat.entries(options[-1])
    assert entry.actual_reps == [10, 10, 10]


def test_an_options_number_answers_the_question(chat: Chat) -> None:
    """ "2" after the question means its second option."""
    chat.workout()
    options = asked_which_exercise(chat)["options"]
    assert len(options) >= 2

    chat.say("2")

    assert [entry.exercise_name for entry in chat.logs()[0].entries.all()] == [options[1]]


def test_a_loosely_typed_answer_still_names_the_exercise(chat: Chat) -> None:
    """Lower case and a few words of the name are enough ("the bench press" for Dumbbell Bench Press)."""
    exercises = chat.workout()
    bench = next((e for e in exercises if "Bench Press" in e["exercise_name"]), None)
    if bench is None:
        pytest.skip("this chest workout has no bench press")
    asked_which_exercise(chat)

    chat.say("the bench press")

    (entry,) = chat.entries(bench["exercise_name"])
    assert entry.actual_load_each == [20, 20, 20]


def test_a_new_request_instead_of_an_answer_is_read_on_its_own(chat: Chat) -> None:
    """A reply that names no exercise but asks for something else is not forced into the question."""
    chat.workout()
    asked_which_exercise(chat)

    result = chat.say("Actually, give me a leg workout instead")

    assert "draft_workout" in tools_of(result)
    assert not chat.logs()


def test_the_issues_first_one_is_the_first_main_exercise_without_asking(chat: Chat) -> None:
    """ "on the first one" points at the first exercise sets are done for (not the warm-up): no question."""
    exercises = chat.workout()
    first = main_exercises(exercises)[0]

    result = chat.say("I did 3 sets of 10 at 20 kg on the first one")

    assert tools_of(result)[0] == "log_completed_exercise"
    (entry,) = chat.entries(first["exercise_name"])
    assert entry.actual_sets == 3


def test_which_exercise_to_swap_is_answered_and_exactly_that_one_is_swapped(chat: Chat) -> None:
    """ "Swap an exercise" → "Which exercise should I swap?" → naming one swaps that one and nothing else."""
    exercises = chat.workout()
    asked = chat.say("Swap an exercise")
    question = chat.question(asked)
    assert question is not None and question["options"]
    target = next(e for e in exercises if e["exercise_name"] == question["options"][-1])

    swapped = chat.say(target["exercise_name"])

    assert len(chat.calls(swapped, "swap_exercise")) == 1
    after = swapped.response["exercises"]
    assert [e["id"] for e in after if e["order"] != target["order"]] == [
        e["id"] for e in exercises if e["order"] != target["order"]
    ]
    assert target["exercise_name"] not in [e["exercise_name"] for e in after]


def test_which_exercise_to_remove_is_answered_by_its_number(chat: Chat) -> None:
    """ "Remove an exercise" asks which; "1" removes the first option and only it."""
    exercises = chat.workout()
    asked = chat.say("remove an exercise")
    question = chat.question(asked)
    if question is None:
        pytest.skip("the coach removed one without asking")
    target = question["options"][0]

    removed = chat.say("1")

    assert len(chat.calls(removed, "remove_exercise")) == 1
    names = [e["exercise_name"] for e in removed.response["exercises"]]
    assert target not in names and len(names) == len(exercises) - 1


def test_the_llm_context_states_the_pending_question_right_before_the_answer(chat: Chat) -> None:
    """Any model reads the reply as the answer: a <pending_question> block with the question and its options
    sits right before the user's answer, and only there."""
    chat.workout()
    question = asked_which_exercise(chat)
    chat.say(question["options"][0])
    session = chat.session()

    messages = build_context(session=session, user_id=chat.user_id).messages

    texts = [
        str(block.get("text", ""))
        for message in messages
        if message["role"] == "user"
        for block in message["content"]
        if block.get("type") == "text"
    ]
    pending = [index for index, text in enumerate(texts) if text.startswith("<pending_question>")]
    assert len(pending) == 1, texts
    block = texts[pending[0]]
    assert question["question"] in block and all(option in block for option in question["options"])
    assert texts[pending[0] + 1] == question["options"][0]


def test_a_question_answered_before_adds_no_block_to_later_messages(chat: Chat) -> None:
    """After the answer, the next message is a message of its own: no second pending question."""
    chat.workout()
    options = asked_which_exercise(chat)["options"]
    chat.say(options[0])
    chat.say("how am I doing")
    session = chat.session()

    messages = build_context(session=session, user_id=chat.user_id).messages

    blocks = [
        block
        for message in messages
        for block in message["content"]
        if block.get("type") == "text" and str(block.get("text", "")).startswith("<pending_question>")
    ]
    assert len(blocks) == 1


def two_dumbbell_exercises(chat: Chat) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A new workout (the demo user's chest workout at home) and its main exercises that use dumbbells."""
    exercises = chat.workout()
    dumbbell = [e for e in main_exercises(exercises) if "dumbbells" in (e.get("equipment") or ())]
    assert len(dumbbell) >= 2, "the demo user's chest workout at home has two dumbbell exercises"
    return exercises, dumbbell


def test_words_that_match_several_exercises_are_asked_about_with_those_as_options(chat: Chat) -> None:
    """ "Swap the dumbbell one" with two dumbbell exercises: the coach asks which, offering just those two,
    and the answer swaps that one only."""
    exercises, dumbbell = two_dumbbell_exercises(chat)

    asked = chat.say("swap the dumbbell one")

    question = chat.question(asked)
    assert question is not None and question["question"] == "Which exercise should I swap?"
    assert question["options"] == [e["exercise_name"] for e in dumbbell][:4]
    assert not chat.calls(asked, "swap_exercise"), "nothing is swapped before the answer"
    target = dumbbell[-1]

    swapped = chat.say(target["exercise_name"])

    assert len(chat.calls(swapped, "swap_exercise")) == 1
    after = swapped.response["exercises"]
    assert [e["id"] for e in after if e["order"] != target["order"]] == [
        e["id"] for e in exercises if e["order"] != target["order"]
    ]


def test_logged_sets_on_words_that_match_several_ask_which_with_those_options(chat: Chat) -> None:
    """ "3 sets of 10 on the dumbbell one" could be either dumbbell exercise: asked, then logged on the pick."""
    _, dumbbell = two_dumbbell_exercises(chat)

    asked = chat.say("I did 3 sets of 10 at 20 kg on the dumbbell one")

    question = chat.question(asked)
    assert question is not None and question["options"] == [e["exercise_name"] for e in dumbbell][:4]
    assert not chat.logs()

    chat.say(question["options"][0])

    (entry,) = chat.entries(question["options"][0])
    assert (entry.actual_sets, entry.actual_reps) == (3, [10, 10, 10])


def test_sets_on_the_first_one_without_a_workout_are_asked_about_not_logged_as_a_name(chat: Chat) -> None:
    """With no workout, "the first one" names nothing: the coach asks which exercise, and logs nothing yet."""
    result = chat.say("I did 3 sets of 10 at 20 kg on the first one")

    question = chat.question(result)
    assert question is not None and question["question"] == "Which exercise was that?"
    assert not chat.logs()
