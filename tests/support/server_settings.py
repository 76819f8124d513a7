"""The settings of the daphne and worker processes that tests and benchmarks start with a scripted model
(`live_server.server_env(scripts=...)`): production's (`config.settings`) plus the test-only app that installs
the scripted models of $AGENT_TEST_SCRIPTS (`tests.support.scripted_models`).

Production's settings never list that app, so no deployment serves a scripted model or the `scripted_note`
tool, whatever its environment; import-linter's contracts keep the production packages from importing `tests`.
"""

from config.settings import *  # noqa: F403
from config.settings import INSTALLED_APPS as PRODUCTION_APPS

INSTALLED_APPS = [*PRODUCTION_APPS, "tests.support.apps.ScriptedModelsConfig"]
