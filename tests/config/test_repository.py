"""What the repository holds: source, not built packages (dependencies come from pyproject.toml)."""

from __future__ import annotations

import subprocess

from tests.support.live_server import BASE_DIR

PACKAGE_PATTERNS = ("*.whl", "*.egg", "*.tar.gz", "*.tgz")


def test_no_built_package_is_committed() -> None:
    """A wheel or sdist in the tree (a py-spy wheel once sat at the root) is installed by nothing and only
    weighs every clone down: tools come from pyproject.toml."""
    tracked = subprocess.run(
        ["git", "ls-files", "--", *PACKAGE_PATTERNS],
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert tracked == []
