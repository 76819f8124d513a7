from django.urls import path

from trainer_agent.api.whoami import WhoAmIApi

urlpatterns = [
    path("agent/whoami", WhoAmIApi.as_view(), name="agent-whoami"),
]
