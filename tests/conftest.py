"""Shared fixtures: the real benchmark data when available, and the command line as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

#: Real data shipped beside the repository (never copied into it).
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    """The folder of real benchmark data; tests that need it skip with a clear reason if absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real benchmark data not found at ../shared/data (looked in {SHARED_DATA})")
    return SHARED_DATA


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
