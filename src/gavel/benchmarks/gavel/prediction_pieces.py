"""A large predictions file read and scored in pieces by the scoring workers.

Read in order, a predictions file costs this process a few microseconds a line (decoding it,
finding its sample, handing it to a worker), and with two cores that serial part sets the pace
of a large run. Here the file is cut at line starts (``gavel.io.line_ranges``) into pieces of a
few MB, and each worker reads its piece by the predictions reader's own rules, finds each
prediction's sample in the data it shares with this process, and scores it. This process only
checks the ids for repeats across pieces (a few vectorized operations a piece), hashes the file
meanwhile, and gathers the scores, in the file's order.

The outcome is the one reading the file in order gives, errors included: each piece stops at
its first problem and sends back the ids read up to it, so a repeated id on an earlier line (or
on the same line, as the reader checks the id first) is the one raised; a refusal for a missing
box format still waits until the whole file has been read.
"""

from __future__ import annotations

import itertools
from array import array
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import numpy as np

from gavel.benchmarks.gavel.chunks import ChunkScores, score_chunk
from gavel.benchmarks.gavel.gold import GoldColumns
from gavel.benchmarks.gavel.scorer import GavelScorer, GavelSettings
from gavel.benchmarks.gavel.streaming import Gathered, ScoredRun, Slots, UnknownIds
from gavel.benchmarks.gavel.workers import Workers, forked
from gavel.errors import DataError
from gavel.io.formats import read_in_place
from gavel.io.line_ranges import file_sha256, lines_between, newlines_between, piece_bounds
from gavel.io.predictions import check_prediction, read_line
from gavel.records import Prediction

#: The most bytes of predictions a worker reads and scores at once: its replies and scores
#: stay a few tens of MB however large the file.
PIECE_BYTES = 2 << 20
#: The least: below, a piece costs more to hand out than it saves.
MIN_PIECE_BYTES = 256 << 10


def prediction_bounds(path: str | Path, workers: int) -> list[int] | None:
    """Offsets that cut the predictions file into pieces for ``workers`` processes, or None
    where it is read in order here: one worker, a small file, another framework's log (whose
    lines are not predictions lines as they are), a file that cannot be read (its reader
    names the problem), or a line longer than the limit near a cut."""
    path = Path(path)
    if workers < 2:
        return None
    try:
        size = path.stat().st_size
    except OSError:
        return None
    pieces = max(min(size // MIN_PIECE_BYTES, 4 * workers), -(-size // PIECE_BYTES))
    if pieces < 2 or not read_in_place(path):
        return None
    bounds = piece_bounds(path, pieces)
    return bounds if bounds is not None and len(bounds) >= 3 else None


class _Piece(NamedTuple):
    """What a worker sends back of its piece; line numbers count from the piece's first."""

    #: The line ends in the piece (to number the next piece's lines).
    lines: int
    #: The data positions of the predictions for known ids, and their lines (int64 buffers).
    positions: bytes
    numbers: bytes
    #: ``(line, id)`` of each prediction for an id the data does not have.
    unknown: list[tuple[int, str]]
    #: The problem that stopped the piece: ``(line, field, message)``.
    problem: tuple[int | None, str | None, str] | None
    #: The slots of the scored predictions, and their scores (None: nothing scored).
    slots: list[int]
    scored: ChunkScores | None


def score_in_pieces(
    gold: GoldColumns,
    chosen: np.ndarray,
    path: str | Path,
    bounds: list[int],
    settings: GavelSettings,
    slots: Slots,
    workers: int,
) -> tuple[ScoredRun, str]:
    """Score the samples at ``chosen`` with the predictions file cut at ``bounds``
    (:func:`prediction_bounds`) in ``workers`` processes: the scored run, as
    :func:`~gavel.benchmarks.gavel.streaming.score_run` gives it, and the file's SHA-256."""
    path = Path(path)
    run = Gathered(gold, len(chosen), GavelScorer(settings))
    unknown = UnknownIds()
    try:
        with (
            Workers(workers, gold, settings, slots.slot_of) as pool,
            ThreadPoolExecutor(1, thread_name_prefix="gavel-hash") as hashing,
        ):
            run.pool = pool
            # The bytes cut into pieces, not more: a file still being written has grown since.
            digest = hashing.submit(file_sha256, path, bounds[-1])
            waiting: deque = deque()
            before = 0  # the lines of the pieces gathered so far
            for start, stop in itertools.pairwise(bounds):
                waiting.append(pool.apply(_read_piece, (path, start, stop)))
                while len(waiting) > pool.in_flight:
                    before = _gather(path, waiting.popleft().get(), before, run, slots, unknown)
            while waiting:
                before = _gather(path, waiting.popleft().get(), before, run, slots, unknown)
            run.finish(chosen)
            sha256 = digest.result()
    except BaseException:
        run.spool.close()
        raise
    return run.scored(unknown), sha256


def _gather(
    path: Path,
    piece: _Piece,
    before: int,
    run: Gathered,
    slots: Slots,
    unknown: UnknownIds,
) -> int:
    """Check a piece's ids against the pieces before it, raise the first problem a reading
    in order meets there, else take its scores; the lines gathered so far."""
    problem_line = None
    if piece.problem is not None and piece.problem[0] is not None:
        problem_line = piece.problem[0] + before
    numbers = np.frombuffer(piece.numbers, dtype=np.int64) + before
    positions = np.frombuffer(piece.positions, dtype=np.int64)
    repeats = []
    known = slots.seen_all(positions, numbers)
    if known is not None:
        index, first = known
        repeats.append((int(numbers[index]), slots.gold.ids[int(positions[index])], first))
    for number, prediction_id in piece.unknown:
        line = number + before
        first = slots.seen_unknown(prediction_id, line)
        if first != line:
            repeats.append((line, prediction_id, first))
            break
        unknown.add(prediction_id)
    if repeats:
        line, prediction_id, first = min(repeats)
        if problem_line is None or line <= problem_line:  # on its line, the id comes first
            raise DataError(
                path, line, "id",
                f"duplicate prediction for id {prediction_id!r} (first on line {first})",
            )  # fmt: skip
    if piece.problem is not None:
        _, field, message = piece.problem
        raise DataError(path, problem_line, field, message)
    if piece.scored is not None:
        run.absorb(piece.slots, piece.scored)
    return before + piece.lines


def _read_piece(path: Path, start: int, stop: int) -> _Piece:
    """In a worker: one piece read by the predictions reader's rules up to its first problem,
    each prediction's sample found, and the chosen ones scored."""
    state, scorer = forked()
    position_of, slot_of = state.gold.position, state.slot_of
    positions, numbers = array("q"), array("q")
    unknown: list[tuple[int, str]] = []
    slots: list[int] = []
    chosen_positions: list[int] = []
    chosen: list[Prediction | None] = []
    problem = None
    try:
        for number, line in lines_between(path, start, stop, 1):
            prediction = read_line(path, number, line)
            position = position_of(prediction.id)
            if position is None:
                unknown.append((number, prediction.id))
            else:
                positions.append(position)
                numbers.append(number)
            check_prediction(path, number, prediction)
            if position is not None and (slot := slot_of[position]) >= 0:
                slots.append(slot)
                chosen_positions.append(position)
                chosen.append(prediction)
        lines = newlines_between(path, start, stop)
    except DataError as error:
        problem, lines = (error.line, error.field, error.message), 0
    except OSError as error:  # the file went away or changed since it was cut
        problem, lines = (None, None, f"cannot read ({error.strerror or error})"), 0
    scored = None
    if problem is None and chosen:
        scored = score_chunk(scorer, state.gold, chosen_positions, chosen)
        if scored.refused is None:
            scored.sort_lines(slots)
    return _Piece(lines, positions.tobytes(), numbers.tobytes(), unknown, problem, slots, scored)
