"""Where answers of remote models are cached, unless a run names its own file."""

from __future__ import annotations

import os
from pathlib import Path


def default_cache() -> Path:
    """$GAVEL_CACHE_DIR/answers.sqlite, else ~/.cache/gavel/answers.sqlite."""
    root = os.environ.get("GAVEL_CACHE_DIR") or Path.home() / ".cache" / "gavel"
    return Path(root) / "answers.sqlite"


def ready(cache: Path | None) -> Path | None:
    """``cache`` with its folder made, so the first answer can be written into it."""
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
    return cache
