from django.contrib import admin
from django.contrib.staticfiles.urls import staticfiles_urlpatterns
from django.urls import include, path

from config.health import healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("", include("trainer_agent.urls")),
]

# With DEBUG on, static files (the demo page's favicon, the admin's CSS) are served by staticfiles' finders, as
# runserver does, also under daphne, which has no static handler of its own. Empty with DEBUG off.
urlpatterns += staticfiles_urlpatterns()
