"""What a client asks of a turn: the body of `POST /agent/chat` and `POST /agent/stream` once validated.

The HTTP body is validated (and documented) by one serializer, `trainer_agent.api.chat.TurnRequestSerializer`;
the rules it shares with the OpenAPI schema live here, once: the message's length and the control characters
it may not hold.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any

MAX_MESSAGE_CHARS = 8000
# C0 control characters other than tab, newline and carriage return (and DEL) have no place in a message;
# PostgreSQL's jsonb also refuses U+0000. One character class: the check below and the documented pattern.
CONTROL_CHARACTER_CLASS = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f"
CONTROL_CHARS = re.compile(f"[{CONTROL_CHARACTER_CLASS}]")
# The message as the OpenAPI schema states it: not blank, and none of those control characters.
MESSAGE_PATTERN = (
    f"^[^{CONTROL_CHARACTER_CLASS}]*[^\\s{CONTROL_CHARACTER_CLASS}][^{CONTROL_CHARACTER_CLASS}]*$"
)


@dataclass(frozen=True)
class TurnRequest:
    message: str
    session_id: uuid.UUID | None
    current_workout: dict[str, Any] | None
    model: str | None
    # Whether the client wants preview frames (docs/contracts.md §7.2): only `POST /agent/stream` sends them.
    preview: bool = True
