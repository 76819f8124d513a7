"""ASGI entry point (daphne): Django's own handler for everything, the streaming views included."""

import os

from django.core.asgi import get_asgi_application

from config.daphne_requests import install as install_daphne_requests
from trainer_agent.startup_heap import freeze_startup_objects

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
install_daphne_requests()
application = get_asgi_application()
freeze_startup_objects()  # out of every full collection of the requests' garbage
