"""Errors a user can act on: each names the file, the line and the field."""

from __future__ import annotations

from pathlib import Path


class GavelError(Exception):
    """Base class for errors reported to the user without a traceback."""


class DataError(GavelError):
    """A problem in an input file, located precisely enough to fix it."""

    def __init__(self, path: str | Path, line: int | None, field: str | None, message: str):
        self.path = str(path)
        self.line = line
        self.field = field
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path
        if self.line is not None:
            where += f", line {self.line}"
        if self.field:
            where += f", field '{self.field}'"
        return f"{where}: {self.message}"


class ConfigError(GavelError):
    """Options that cannot work together (for example no box format declared)."""


class UsageError(ConfigError):
    """A setting refused the way the command line refuses a flag (shown as its usage error):
    settings that need each other, or a value that does not fit what else was given."""
