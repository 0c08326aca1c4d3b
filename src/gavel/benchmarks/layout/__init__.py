"""How a benchmark's rows become its files: what lets ``--data hf:OWNER/NAME`` (and Parquet
data) work for any benchmark, built-in or plugin.

A dataset on the Hub is rows (:class:`~gavel.benchmarks.layout.row.Row`); a benchmark's loader
reads files. A benchmark that gives a :class:`Layout` in its record
(:attr:`gavel.benchmarks.spec.Benchmark.layout`) says how the rows are written out: its
``writer`` is fed the rows one by one and writes the files its loader reads, into a folder of
gavel's cache (:mod:`gavel.sources.materialize`), which then loads them with ``check`` before
the copy is kept. The tools a writer needs are here too: :mod:`.media` (the ``Image`` and
``Video`` cells, turned into files) and :mod:`.files` (JSON lines, media placed once by name).
GAVEL, DetailVerifyBench and VideoHallucer give theirs in the same way (their ``layout.py``).

This module is light (no pyarrow, nothing of a benchmark): the Benchmark record imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from gavel.benchmarks.layout.row import Row


class RowWriter(Protocol):
    """Writes rows into one folder in a loader's layout."""

    def add(self, row: Row) -> None:
        """Write one row (its files placed, its record written); a row that cannot be written
        is ``row.fail(field, message)``, raised."""

    def finish(self) -> tuple[Path, Path]:
        """Close what is open; ``(data, image root)``: the path the loader is given (a file
        or a folder) and the folder its images or videos are relative to."""

    def abort(self) -> None:
        """Close what is open after a failure (the folder is then removed)."""


@dataclass(frozen=True)
class Layout:
    """How a benchmark's rows become the files its loader reads.

    ``writer(out, root, bound)`` makes a :class:`RowWriter` that writes into the folder ``out``;
    ``root`` is the dataset's folder (a path a row names is relative to the data file's folder,
    else to it) and ``bound`` the folder every file a row names must really be inside (None:
    ``root``), as :func:`gavel.benchmarks.layout.media.read_media` takes them.
    ``check(data, image_root)`` loads what was written as the benchmark's commands will, raising
    :class:`~gavel.errors.DataError` at the first problem, so a bad row fails before anything is
    kept; ``one_line_per_row``: the writer's data file has one line per row, in order, so an
    error naming its line N is reported as row N of the dataset's file.
    ``in_place(folder)``: when the repository already is in the loader's own layout, the
    annotation files read there (nothing is copied); None when it holds rows.
    ``version`` names the cache folder with the layout: change it when the files written
    change, so older copies are not reused.
    """

    writer: Callable[[Path, Path, Path | None], RowWriter]
    check: Callable[[Path, Path], object]
    one_line_per_row: bool = False
    in_place: Callable[[Path], Sequence[Path] | None] | None = None
    version: str = "1"
