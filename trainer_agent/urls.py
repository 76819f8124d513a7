from django.urls import include, path

urlpatterns = [
    path("", include("trainer_agent.api.urls")),
    path("", include("trainer_agent.streaming_urls")),
]
