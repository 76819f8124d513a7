"""Routes of the streaming endpoints and the demo chat page."""

from django.urls import URLPattern, path

from trainer_agent.api.chat import AgentChatApi
from trainer_agent.demo_views import demo_chat
from trainer_agent.streaming import agent_chat, agent_stream, session_events

# drf-spectacular documents a route through its callback's `cls` (see trainer_agent/api/chat.py).
agent_chat.cls = AgentChatApi  # type: ignore[attr-defined]
agent_chat.initkwargs = {}  # type: ignore[attr-defined]

urlpatterns: list[URLPattern] = [
    path("agent/chat", agent_chat, name="agent-chat"),
    path("agent/stream", agent_stream, name="agent-stream"),
    # <str:…>, not <uuid:…>: a malformed id gets the API's JSON 404, not Django's HTML one.
    path("agent/sessions/<str:session_id>/events", session_events, name="agent-session-events"),
    path("demo/", demo_chat, name="demo-chat"),
]
