"""The neutral table record: a title, headers, rows of text and notes.

Benchmarks build one from their results and the report renders it in every output format, so
neither needs the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Table:
    title: str
    headers: list[str]
    rows: list[list[str]]
    notes: list[str]
    #: What every output format must show beside the rows, not only the terminal table's
    #: notes: that the numbers describe part of the data (``--limit``, ``--sample-id``).
    caveats: list[str] = field(default_factory=list)


def fmt(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:.{digits}f}"
