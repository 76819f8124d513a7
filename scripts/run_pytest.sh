#!/usr/bin/env bash
# Run the test suite in parallel; "no tests collected" (exit 5) is a failure, not a pass.
set -u
cd "$(dirname "$0")/.."
DEBUG=1 .venv/bin/python -c 'import django, os; os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings"); django.setup(); from django.db import connection; connection.ensure_connection(); print("database:", connection.vendor, connection.Database.__name__, ".".join(map(str, connection.Database.sqlite_version_info)) if connection.vendor == "sqlite" else connection.cursor().connection.info.server_version)'
workers=${PYTEST_WORKERS:-auto}
.venv/bin/pytest -n "$workers" --dist loadgroup "$@"
rc=$?
if [ "$rc" -eq 5 ]; then echo "error: no tests were collected" >&2; exit 1; fi
exit $rc
