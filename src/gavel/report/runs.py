"""Which runs a list of paths names: a folder of runs stands for every run found below it."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from gavel.errors import GavelError


def expand_runs(paths: Iterable[Path]) -> list[Path]:
    """A folder without its own results.json stands for every run found below it, so a whole
    sweep is reported by naming its folder; one with none below it is a mistake, named."""
    runs: list[Path] = []
    for path in paths:
        if path.is_dir() and not (path / "results.json").is_file():
            found = sorted(path.rglob("results.json"))
            if not found:
                raise GavelError(f"{path}: no results.json in it or below it")
            runs.extend(found)
        else:
            runs.append(path)
    return runs
