"""One row of a dataset (a Hub dataset, Parquet or JSON Lines files), as a layout is fed it.

The rows are read by :mod:`gavel.sources.rows`; a benchmark's layout only sees this record: the
row's values by column, and where it came from, so that anything wrong with it is an error
naming the dataset's file and the row (or line), never the copy gavel writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gavel.errors import DataError


@dataclass(frozen=True)
class Row:
    """One record of a data file and where it came from (for error messages)."""

    file: Path
    number: int
    values: dict[str, Any]
    #: Whether ``number`` is a line of a text file (else a row of a Parquet file).
    is_line: bool = False

    def fail(self, field_name: str | None, message: str) -> DataError:
        """The error naming this row's file, row (or line) and ``field_name``."""
        if self.is_line:
            return DataError(self.file, self.number, field_name, message)
        return DataError(self.file, None, field_name, f"row {self.number}: {message}")
