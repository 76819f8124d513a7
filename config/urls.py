from django.contrib import admin
from django.http import HttpRequest, HttpResponseRedirect
from django.templatetags.static import static
from django.urls import include, path

from config.health import healthz, livez
from trainer_agent.metrics_views import metrics_view

# Static files (the admin's CSS, the demo page's) are served by WhiteNoise's middleware in every mode.
admin.site.site_url = "/demo/"  # the admin's "View site": the service's one page


def favicon(request: HttpRequest) -> HttpResponseRedirect:
    """Browsers ask every page's origin for /favicon.ico; the admin and the API docs link none of their own."""
    return HttpResponseRedirect(static("demo/favicon.svg"))


urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("livez", livez, name="livez"),
    path("metrics", metrics_view, name="metrics"),
    path("favicon.ico", favicon),
    path("admin/", admin.site.urls),
    path("", include("trainer_agent.urls")),
]
