"""The neutral table record: a title, headers, rows of text and notes.

Benchmarks build one from their results and the report renders it in every output format, so
neither needs the other.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Table:
    title: str
    headers: list[str]
    rows: list[list[str]]
    notes: list[str]


def fmt(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:.{digits}f}"
