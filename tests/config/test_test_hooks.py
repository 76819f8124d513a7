"""The scripted models of the live tests and benchmarks are test-only: production's settings never install them,
whatever the environment says; the test servers' settings do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.live_server import BASE_DIR, SCRIPTED_SETTINGS, write_scripts

PROBE = """
import json, django
django.setup()
from tools_app.registry import UnknownToolError, get_tool
from trainer_agent.llm.models import UnknownModel, get_model
def known(lookup, name, missing):
    try:
        lookup(name)
    except missing:
        return False
    return True
print(json.dumps({
    "tool": known(get_tool, "scripted_note", UnknownToolError),
    "model": known(get_model, "scripted-probe", UnknownModel),
}))
"""


def _probe(settings_module: str, scripts: Path) -> dict[str, bool]:
    """What a fresh process with these settings and $AGENT_TEST_SCRIPTS set has registered."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST_", "OPENAI_"))}
    env.update({"DEBUG": "1", "DJANGO_SETTINGS_MODULE": settings_module, "AGENT_TEST_SCRIPTS": str(scripts)})
    completed = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    found: dict[str, bool] = json.loads(completed.stdout.strip().splitlines()[-1])
    return found


def test_production_settings_never_install_the_scripted_models(tmp_path: Path) -> None:
    scripts = write_scripts(
        tmp_path, {"models": {"scripted-probe": {"steps": [{"tool": "idle", "args": {"reason": "done"}}]}}}
    )
    assert _probe("config.settings", scripts) == {"tool": False, "model": False}
    assert _probe(SCRIPTED_SETTINGS, scripts) == {"tool": True, "model": True}
