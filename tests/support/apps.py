"""The test-only app of the test servers' settings (`tests.support.server_settings`)."""

from __future__ import annotations

from django.apps import AppConfig


class ScriptedModelsConfig(AppConfig):
    """Installs the scripted models (and the `scripted_note` tool) of $AGENT_TEST_SCRIPTS when the server starts,
    after every production app is ready (it is listed last)."""

    name = "tests.support"
    label = "test_support"
    verbose_name = "Scripted models (tests)"

    def ready(self) -> None:
        # Here, not at the top: the module registers models and a tool, which needs the apps loaded.
        from tests.support.scripted_models import install_from_env

        install_from_env()
