"""Locating the example data shipped with gavel (installed wheel or source checkout)."""

from __future__ import annotations

from pathlib import Path

from gavel.errors import GavelError

_PACKAGE = Path(__file__).resolve().parent


def example_dir(name: str = "photos") -> Path:
    """The folder of a built-in example set."""
    for candidate in (_PACKAGE / "_examples" / name, _PACKAGE.parents[1] / "examples" / name):
        if (candidate / "gavel.jsonl").is_file():
            return candidate
    raise GavelError(f"built-in example set {name!r} not found; reinstall gavel")
