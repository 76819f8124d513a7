"""Routes of the streaming endpoints and the demo chat page."""

from django.urls import URLPattern, path

from trainer_agent.demo_views import demo_chat
from trainer_agent.streaming import agent_stream, session_events

urlpatterns: list[URLPattern] = [
    path("agent/stream", agent_stream, name="agent-stream"),
    # <str:…>, not <uuid:…>: a malformed id gets the API's JSON 404, not Django's HTML one.
    path("agent/sessions/<str:session_id>/events", session_events, name="agent-session-events"),
    path("demo/", demo_chat, name="demo-chat"),
]
