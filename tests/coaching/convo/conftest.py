"""The convo conversations: multi-turn chats with the offline coach, as the demo user, through the real turn
(`trainer_agent.turns.run_turn`: admission, the initializer, the loop, the tools, the event store).

`Chat` keeps one session and says one message per turn; each test asserts properties a user would notice
(what was logged, what the stats say, what the reply and the cards state), never exact wording.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from datasources_app import stats
from datasources_app.models import WorkoutLog, WorkoutLogEntry
from sessions_app.models import AgentSession
from tests.trainer_agent.offline.conftest import DemoUser, demo, main_exercises, tools_of
from trainer_agent.loop import TurnResult
from trainer_agent.turns import run_turn

__all__ = ["Chat", "DemoUser", "chat", "demo", "main_exercises", "tools_of"]


@dataclass
class Chat:
    """One conversation of the demo user with the offline coach."""

    user_id: uuid.UUID
    session_id: uuid.UUID | None = None
    turns: list[TurnResult] = field(default_factory=list)

    def say(self, message: str) -> TurnResult:
        result = run_turn(user_id=self.user_id, message=message, model="offline", session_id=self.session_id)
        assert result.status == "completed", (message, result.error_message)
        self.session_id = result.session_id
        self.turns.append(result)
        return result

    def workout(self, message: str = "Give me a quick chest workout") -> list[dict[str, Any]]:
        """Ask for a workout; its exercises as delivered."""
        exercises: list[dict[str, Any]] = self.say(message).response["exercises"]
        assert exercises, "no workout was delivered"
        return exercises

    @staticmethod
    def reply(result: TurnResult) -> str:
        return " ".join(result.response.get("messages") or ())

    @staticmethod
    def question(result: TurnResult) -> dict[str, Any] | None:
        question: dict[str, Any] | None = result.response.get("question")
        return question

    @staticmethod
    def calls(result: TurnResult, tool: str) -> list[dict[str, Any]]:
        """The arguments of the turn's successful calls of `tool`."""
        return [
            action.args for action in result.actions if action.tool == tool and action.result.get("success")
        ]

    def session(self) -> AgentSession:
        assert self.session_id is not None, "nothing was said yet"
        return AgentSession.objects.get(pk=self.session_id)

    def logs(self) -> list[WorkoutLog]:
        return list(WorkoutLog.objects.filter(user_id=self.user_id).order_by("completed_at"))

    def entries(self, name: str) -> list[WorkoutLogEntry]:
        return list(WorkoutLogEntry.objects.filter(log__user_id=self.user_id, exercise_name=name))

    def statistics(self) -> stats.WorkoutStatistics:
        now = timezone.now()
        return stats.workout_statistics(
            user_id=self.user_id, start=now - timedelta(days=30), end=now + timedelta(minutes=1)
        )


@pytest.fixture
def chat(demo: DemoUser) -> Chat:
    return Chat(demo.user_id)
