"""The answer cache's file, made ready before the first answer is written into it."""

from __future__ import annotations

from pathlib import Path


def ready(cache: Path | None) -> Path | None:
    """``cache`` with its folder made, so the first answer can be written into it."""
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
    return cache
