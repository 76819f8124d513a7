"""Live daphne fixtures (tests/support/live_server.py) for the streaming tests."""

from tests.support.live_server import (  # noqa: F401 - pytest fixtures
    live_database,
    live_scripts,
    live_server_pair,
    live_server_process,
)
