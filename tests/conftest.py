"""Shared fixtures: where the real benchmark data lives when it is available."""

from __future__ import annotations

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
