"""`manage.py worker` with persistent database connections: an experiment for the load benchmark, not a way
to run the service.

    .venv/bin/python benchmarks/worker_variant.py --threads 64     # same options as `manage.py worker`

The settings give every connection `CONN_MAX_AGE = 0`, so each idle worker loop, which calls
`close_old_connections()` before every claim, opens a new PostgreSQL connection every `--interval` (and on every
wake-up). This runs the same command with `CONN_MAX_AGE = None` in this process only (connections kept; an
unusable one is still replaced), to measure what those reconnects cost (`sse_load.py --persistent-workers`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
if str(BASE_DIR) not in sys.path:
    sys.path.insert(0, str(BASE_DIR))


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import execute_from_command_line

    settings.DATABASES["default"]["CONN_MAX_AGE"] = (
        None  # the dict each new connection reads its settings from
    )
    execute_from_command_line(["manage.py", "worker", *sys.argv[1:]])


if __name__ == "__main__":
    main()
