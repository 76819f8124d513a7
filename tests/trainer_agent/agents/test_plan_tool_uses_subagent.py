import pytest

from sessions_app.models import AgentSessionEvent, EventType
from tests.tools_app.test_calendar_tools import in_days, next_monday, trainee  # noqa: F401 - fixture
from tests.tools_app.workout_support import Trainee


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
