from django.urls import path
from drf_spectacular.views import SpectacularAPIView
from rest_framework.permissions import AllowAny

from trainer_agent.api import schema  # noqa: F401 - registers the Bearer scheme extension
from trainer_agent.api.docs import api_docs
from trainer_agent.api.exercises import (
    DistributionForUserRetrieveApi,
    DistributionRetrieveApi,
    WorkoutHistoryForUserListApi,
    WorkoutHistoryListApi,
)
from trainer_agent.api.sessions import SessionListCreateApi, SessionRetrieveDeleteApi
from trainer_agent.api.user_settings import UserSettingsRetrieveUpdateApi
from trainer_agent.api.whoami import WhoAmIApi

urlpatterns = [
    path("agent/whoami", WhoAmIApi.as_view(), name="agent-whoami"),
    path("agent/sessions", SessionListCreateApi.as_view(), name="agent-sessions"),
    # <str:…>, not <uuid:…>: a malformed id must get the API's JSON 404, not Django's HTML one.
    path("agent/sessions/<str:session_id>", SessionRetrieveDeleteApi.as_view(), name="agent-session"),
    path("user-settings", UserSettingsRetrieveUpdateApi.as_view(), name="user-settings"),
    path("exercises/history", WorkoutHistoryListApi.as_view(), name="exercises-history"),
    path(
        "exercises/history/<str:user_id>",
        WorkoutHistoryForUserListApi.as_view(),
        name="exercises-history-for-user",
    ),
    path("exercises/distribution", DistributionRetrieveApi.as_view(), name="exercises-distribution"),
    path(
        "exercises/distribution/<str:user_id>",
        DistributionForUserRetrieveApi.as_view(),
        name="exercises-distribution-for-user",
    ),
    path(
        "api/schema/",
        SpectacularAPIView.as_view(authentication_classes=[], permission_classes=[AllowAny]),
        name="api-schema",
    ),
    path("api/docs/", api_docs, name="api-docs"),
]
