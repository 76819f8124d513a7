"""manage.py chat: talk to the agent in the terminal, with the console log of every event of each turn."""

from __future__ import annotations

import logging
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser, OutputWrapper

from datasources_app.demo import DEMO_USER_ID
from sessions_app.models import AgentSession, SessionNotFound
from sessions_app.selectors import get_session_for_user
from trainer_agent.console import session_totals
from trainer_agent.context import describe_exercise
from trainer_agent.llm.models import ModelConfig, UnknownModel, get_model
from trainer_agent.loop import TurnError
from trainer_agent.sink import console_logger
from trainer_agent.tenancy import acting_for
from trainer_agent.turns import run_turn

EXIT_WORDS = frozenset({"exit", "quit"})


class _OutputHandler(logging.Handler):
    """Writes console-log records to the command's stdout, so the log and the replies interleave in order."""

    def __init__(self, out: OutputWrapper) -> None:
        super().__init__(level=logging.INFO)
        self.out = out

    def emit(self, record: logging.LogRecord) -> None:
        self.out.write(self.format(record), style_func=lambda text: text)


class Command(BaseCommand):
    # `stdin` (a text stream) can be passed by call_command, e.g. in tests; the terminal's otherwise.
    stealth_options = ("stdin",)
    help = (
        "Chat with the agent in the terminal: each line you type is one turn; the console log of the turn and "
        "the coach's reply (messages, the workout as a numbered list, a question with options) are printed. "
        "Type 'exit' or press Ctrl-D to stop."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--model", default=None, help="model id (default: PRIMARY_MODEL, e.g. offline)")
        parser.add_argument(
            "--user", type=uuid.UUID, default=DEMO_USER_ID, help="user id (default: demo user)"
        )
        parser.add_argument(
            "--session", type=uuid.UUID, default=None, help="continue this session of the user"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        model_id: str = options["model"] or settings.PRIMARY_MODEL
        user_id: uuid.UUID = options["user"]
        try:
            model = get_model(model_id)
        except UnknownModel as exc:
            raise CommandError(str(exc)) from exc
        with acting_for(user_id):  # the user's conversation, under the application's rules
            self._chat(
                model=model, user_id=user_id, session_id=options["session"], stdin=options.get("stdin")
            )

    def _chat(
        self, *, model: ModelConfig, user_id: uuid.UUID, session_id: uuid.UUID | None, stdin: TextIO | None
    ) -> None:
        session: AgentSession | None = None
        if session_id is not None:
            try:
                session = get_session_for_user(user_id=user_id, session_id=session_id)
            except SessionNotFound as exc:
                raise CommandError(f"Session {session_id} not found for user {user_id}.") from exc
        stdin = stdin or sys.stdin

        self.stdout.write(f"Chatting with {model.display_name} ({model.id}) as user {user_id}.")
        if session is not None:
            self.stdout.write(f"Continuing session {session.pk}.")
        self.stdout.write("Type 'exit' or press Ctrl-D to stop.")
        with self._console_log_to_stdout():
            while True:
                self.stdout.write("you> ", ending="")
                self.stdout.flush()
                line = stdin.readline()
                if not line:
                    self.stdout.write("")
                    break
                message = line.strip()
                if not stdin.isatty():
                    self.stdout.write(message)  # echo piped input, so the transcript reads like a terminal
                if message.lower() in EXIT_WORDS:
                    break
                if message:
                    session = self._turn(user_id=user_id, message=message, model_id=model.id, session=session)
        if session is not None:
            session.refresh_from_db()
            self.stdout.write(
                session_totals(
                    session_id=session.pk,
                    total_tokens=session.total_tokens,
                    cost_cents=session.total_cost_cents,
                    metadata=session.metadata,
                )
            )

    def _turn(
        self, *, user_id: uuid.UUID, message: str, model_id: str, session: AgentSession | None
    ) -> AgentSession | None:
        try:
            result = run_turn(
                user_id=user_id,
                message=message,
                session_id=session.pk if session is not None else None,
                model=model_id,
            )
        except TurnError as exc:
            self.stderr.write(f"The model could not answer ({exc.kind}): {exc.message}")
            return get_session_for_user(user_id=user_id, session_id=exc.session_id)
        self._show(result.response)
        return get_session_for_user(user_id=user_id, session_id=result.session_id)

    def _show(self, response: dict[str, Any]) -> None:
        """The client response: messages, the delivered workout as a numbered list, a pending question."""
        for text in response.get("messages") or []:
            self.stdout.write(f"coach> {text}")
        exercises = response.get("exercises") or []
        for number, exercise in enumerate(exercises, start=1):
            self.stdout.write(f"  {number}. {describe_exercise(exercise)}")
        question = response.get("question")
        if question:
            self.stdout.write(f"coach? {question.get('question', '')}")
            for number, option in enumerate(question.get("options") or [], start=1):
                self.stdout.write(f"  {number}) {option}")

    @contextmanager
    def _console_log_to_stdout(self) -> Iterator[None]:
        """Route agent.console to this command's stdout for the session, instead of its usual handlers."""
        handler = _OutputHandler(self.stdout)
        previous = (console_logger.handlers[:], console_logger.level, console_logger.propagate)
        console_logger.handlers = [handler]
        console_logger.setLevel(logging.INFO)
        console_logger.propagate = False
        try:
            yield
        finally:
            console_logger.handlers, level, console_logger.propagate = previous[0], previous[1], previous[2]
            console_logger.setLevel(level)
