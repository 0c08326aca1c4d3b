from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.fixture
def gavel():
    """Run the real command line in a subprocess; returns the completed process."""

    def run(*args: str, cwd=None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "gavel", *map(str, args)],
            capture_output=True,
            text=True,
            cwd=cwd,
            timeout=120,
        )

    return run
