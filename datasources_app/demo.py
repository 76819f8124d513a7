"""Identity of the demo user that `manage.py seed_demo` creates and `manage.py demo_token` signs for."""

import uuid

DEMO_USER_ID = uuid.UUID("00000000-0000-4000-8000-00000000de00")
DEMO_USER_EMAIL = "demo@example.com"
