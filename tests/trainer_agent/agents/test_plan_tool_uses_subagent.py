from typing import Any

import pytest
from django.db import connection

from datasources_app.services import DEMO_USER_ID, seed_demo_user
from sessions_app.models import AgentSessionEvent, EventType
from tests.tools_app.test_calendar_tools import in_days, next_monday, trainee  # noqa: F401 - fixture
from tests.tools_app.workout_support import Trainee
from tools_app import plan_builder
from trainer_agent.turns import run_turn


@pytest.mark.django_db
def test_create_workout_plan_runs_the_fitness_plan_subagent_in_the_session(trainee: Trainee) -> None:  # noqa: F811
    """The plan tool goes through the fitness_plan sub-agent, whose run staff see in the session's timeline."""
    result = trainee.run(
        "create_workout_plan",
        {
            "name": "Block",
            "goal": "get stronger",
            "days_per_week": 3,
            "start_date": next_monday(in_days(1)).isoformat(),
        },
    )
    assert result.success, result.formatted
    purposes = list(
        AgentSessionEvent.objects.filter(
            session=trainee.session, event_type=EventType.LLM_RESPONSE
        ).values_list("data__purpose", flat=True)
    )
    assert purposes == ["subagent:fitness_plan"]
    assert "deload" in result.raw_formatted.lower()


@pytest.mark.django_db(transaction=True)  # the turn's own transactions, as a worker runs them
def test_the_plans_model_call_waits_with_no_transaction_open() -> None:
    """A plan is the fitness_plan sub-agent's model call, which can take minutes: the turn makes it before the
    transaction that stores the plan and the tool's result, so nothing is held open while it waits (on
    SQLite, `make run`'s database, an open transaction is the write lock every other process waits on)."""
    generator = plan_builder._plan_generator
    assert generator is not None, "trainer_agent registers the fitness_plan sub-agent"
    seen: list[bool] = []

    def watched(**arguments: Any) -> dict[str, Any]:
        seen.append(connection.in_atomic_block)
        assert generator is not None
        return generator(**arguments)

    seed_demo_user(reset=True)
    plan_builder.set_plan_generator(watched)
    try:
        result = run_turn(user_id=DEMO_USER_ID, message="Make me a 4-week strength plan, 3 days a week")
    finally:
        plan_builder.set_plan_generator(generator)
    assert seen == [False]
    assert "create_workout_plan" in [action.tool for action in result.actions]
    assert "Your 4-week strength plan starts" in " ".join(result.response["messages"])
