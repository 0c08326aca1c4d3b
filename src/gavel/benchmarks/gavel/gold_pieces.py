"""A large GAVEL data file read into gold columns by forked processes, a piece each.

Reading and checking a data line (decoding it, its id, path, text, category, size and boxes)
takes a few microseconds: five seconds for a million samples, all before the first prediction
is scored. Here the file is cut at line starts (``gavel.io.line_ranges``) and each piece is
read by the loader's own rules in a process forked from this one, while this one hashes the
file. The pieces' columns and ids are then joined in order.

The result is the one reading the file in order gives, errors included: each piece stops at its
first problem, an id repeated across pieces is found when the ids are joined, and the problem
on the earliest line is the one raised (a repeated id first on a line that has another problem
too, as the loader checks the id before the rest of the line).
"""

from __future__ import annotations

import itertools
import multiprocessing
from array import array
from pathlib import Path
from typing import NamedTuple

from gavel.benchmarks.gavel.data import GavelLoader, LoadReport
from gavel.benchmarks.gavel.gold import GoldColumns, GoldParts, load_gold
from gavel.benchmarks.gavel.workers import PARALLEL_FROM, ignore_interrupts, worker_count
from gavel.errors import DataError
from gavel.io.id_index import IdIndex
from gavel.io.line_ranges import file_sha256, lines_between, newlines_between, piece_bounds

#: Files from this size on are read in pieces (about 60,000 samples of the usual size).
PIECES_FROM = 16 << 20


class _Piece(NamedTuple):
    """What a process sends back of its piece: columns, ids and their lines, what the loader
    counted, and the problem that stopped it (line, field, message), if any."""

    gold: GoldParts
    ids: tuple[bytes, bytes, bytes]
    lines: bytes
    report: tuple[int, int, int]
    problem: tuple[int | None, str | None, str] | None


def load_gold_columns(
    path: str | Path, image_root: str | Path | None = None
) -> tuple[GoldColumns, str, LoadReport]:
    """Every sample of a GAVEL data file as columns, the file's SHA-256 and the load report;
    read in pieces by forked processes when the file is large and there are CPUs for it."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError:
        size = 0  # read in one piece, whose reader names the problem
    processes = worker_count(PARALLEL_FROM) if size >= PIECES_FROM else 1
    bounds = piece_bounds(path, processes) if processes > 1 else None
    if bounds is None or len(bounds) < 3:
        gold, loader = load_gold(path, image_root)
        return gold, loader.sha256, loader.report
    return _in_pieces(path, image_root, bounds)


def _in_pieces(
    path: Path, image_root: str | Path | None, bounds: list[int]
) -> tuple[GoldColumns, str, LoadReport]:
    spans = list(itertools.pairwise(bounds))
    context = multiprocessing.get_context("fork")
    with context.Pool(len(spans), initializer=ignore_interrupts) as pool:
        try:
            counts = pool.starmap(newlines_between, [(path, start, stop) for start, stop in spans])
        except OSError as error:  # the file went away or changed since it was measured
            raise DataError(path, None, None, f"cannot read ({error.strerror or error})") from None
        firsts = [1 + sum(counts[:index]) for index in range(len(spans))]
        tasks = [
            (path, image_root, *span, first) for span, first in zip(spans, firsts, strict=True)
        ]
        waiting = pool.starmap_async(_read_piece, tasks)
        sha256 = file_sha256(path)  # meanwhile, here
        pieces: list[_Piece] = waiting.get()
    ids, repeat = IdIndex.joined([piece.ids for piece in pieces])
    lines = array("q")
    for piece in pieces:
        lines.frombytes(piece.lines)
    _raise_first_problem(path, pieces, ids, lines, repeat)
    gold = GoldColumns.joined(ids, [piece.gold for piece in pieces])
    if not len(gold):
        raise DataError(path, None, None, "no samples in file")
    report = LoadReport(*(sum(column) for column in zip(*(p.report for p in pieces), strict=True)))
    return gold, sha256, report


def _raise_first_problem(
    path: Path,
    pieces: list[_Piece],
    ids: IdIndex,
    lines: array,
    repeat: tuple[int, int] | None,
) -> None:
    """The problem a reading in order meets first: a piece's, or an id repeated across
    pieces (on its line, the id is checked before anything else)."""
    problems = [piece.problem for piece in pieces if piece.problem is not None]
    first = min(problems, key=lambda problem: problem[0] or 0, default=None)
    if repeat is not None:
        later, earlier = repeat
        if first is None or lines[later] <= (first[0] or 0):
            raise DataError(
                path, lines[later], "id",
                f"duplicate id {ids[later]!r} (first on line {lines[earlier]})",
            )  # fmt: skip
    if first is not None:
        raise DataError(path, *first)


def _read_piece(
    path: Path, image_root: str | Path | None, start: int, stop: int, first: int
) -> _Piece:
    """In a forked process: one piece read by the loader's rules, up to its first problem."""
    lines = lines_between(path, start, stop, first)
    loader = GavelLoader(path, image_root, lines, find_repeats=False)  # found when joined
    gold = GoldColumns(loader.ids)
    problem = None
    try:
        gold.extend(loader)
    except DataError as error:
        problem = (error.line, error.field, error.message)
    except OSError as error:
        problem = (None, None, f"cannot read ({error.strerror or error})")
    report = loader.report
    return _Piece(
        gold.parts(),
        loader.ids.parts(),
        loader.line_numbers.tobytes(),
        (report.samples, report.clipped_boxes, report.sizes_read_from_images),
        problem,
    )
