"""Scoring a GAVEL run chunk by chunk, so that memory does not grow with the run.

Predictions are read in the file's order and scored :data:`CHUNK` at a time: each answer is
read (verdict, explanation, boxes), the chunk's overlaps are computed in numpy groups, each score
is encoded as its JSON line into a spool on disk (``gavel.io.spool``) and its numbers go into
:class:`~gavel.benchmarks.gavel.columns.RunColumns`. Nothing of a prediction outlives its chunk.
Samples without a prediction are scored last. The scores come back in the data's order.

A sample's score depends on that sample alone (the overlap groups are per-sample arithmetic),
so scoring in chunks gives the same numbers, bit for bit, as scoring the run at once.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from gavel.benchmarks.gavel.chunks import ChunkScores, score_chunk
from gavel.benchmarks.gavel.columns import RunColumns
from gavel.benchmarks.gavel.gold import GoldColumns
from gavel.benchmarks.gavel.scorer import GavelScorer, GavelSettings, ScoringTally
from gavel.errors import ConfigError
from gavel.io.spool import LineSpool, SpooledRecords
from gavel.records import GavelScore, Prediction

if TYPE_CHECKING:
    from gavel.benchmarks.gavel.workers import Workers

#: Predictions scored together: large enough for numpy groups to pay, small enough that a
#: chunk's records (responses, scores) stay a few MB.
CHUNK = 4096
#: Ids shown in a warning.
SHOWN = 5


@dataclass
class UnknownIds:
    """Predictions for ids the data does not have: how many, and the first few."""

    count: int = 0
    shown: list[str] = field(default_factory=list)

    def add(self, prediction_id: str) -> None:
        self.count += 1
        if len(self.shown) < SHOWN:
            self.shown.append(prediction_id)


@dataclass
class ScoredRun:
    """A scored run: the per-sample scores (on disk, in data order), their numbers, what was
    counted on the way, and the predictions for ids the data does not have."""

    scores: SpooledRecords[GavelScore]
    columns: RunColumns
    tally: ScoringTally
    unknown: UnknownIds


class Slots:
    """Which data positions are scored (a selection may keep some), and the line each
    position's prediction was on: the duplicate check in a few bytes a sample."""

    def __init__(self, gold: GoldColumns, chosen: np.ndarray):
        self.gold = gold
        self.chosen = chosen
        slot = np.full(len(gold), -1, dtype=np.int64)
        slot[chosen] = np.arange(len(chosen))
        #: Each data position's slot among the scored samples (-1: not scored).
        self.slot_of = array("q", slot.tobytes())
        self._line = array("q", [0]) * len(gold)
        self._unknown_line: dict[str, int] = {}
        self._last: tuple[str | None, int | None] = (None, None)

    def position(self, prediction_id: str) -> int | None:
        """The data position of ``prediction_id`` (None: not in the data); the reader has just
        asked :meth:`seen` about the same id, whose answer is kept."""
        last_id, position = self._last
        return position if prediction_id is last_id else self.gold.position(prediction_id)

    def seen_all(self, positions: np.ndarray, lines: np.ndarray) -> tuple[int, int] | None:
        """:meth:`seen` for predictions of known ids at once (data ``positions`` and their
        ``lines``, in line order): None, or the first repeat as ``(its index, the line its id
        was first on)``, in which case nothing is recorded."""
        first_lines = np.frombuffer(self._line, dtype=np.int64)
        before = first_lines[positions]
        order = np.argsort(positions, kind="stable")  # a repeat sorts after its first
        ordered = positions[order]
        again = np.zeros(len(positions), dtype=bool)
        again[order[1:]] = ordered[1:] == ordered[:-1]
        repeated = (before != 0) | again
        if repeated.any():
            index = int(np.argmax(repeated))
            first = int(before[index]) or int(lines[np.argmax(positions == positions[index])])
            return index, first
        first_lines[positions] = lines
        return None

    def seen_unknown(self, prediction_id: str, line: int) -> int:
        """:meth:`seen` for an id not in the data."""
        return self._unknown_line.setdefault(prediction_id, line)

    def seen(self, prediction_id: str, line: int) -> int:
        """The line ``prediction_id`` was first on (``line`` if it is new)."""
        position = self.gold.position(prediction_id)
        self._last = (prediction_id, position)
        if position is None:
            return self._unknown_line.setdefault(prediction_id, line)
        first = self._line[position]
        if not first:
            self._line[position] = first = line
        return first


def score_run(
    gold: GoldColumns,
    chosen: np.ndarray,
    predictions: Iterable[tuple[int, Prediction]] | None,
    settings: GavelSettings,
    slots: Slots | None = None,
    workers: int = 1,
) -> ScoredRun:
    """Score the samples at ``chosen`` (data positions, in order) with ``predictions``
    (``(line, prediction)``, in any order; a prediction for a sample not chosen is set aside,
    one for an id not in the data is counted as unknown).

    ``workers`` above 1 scores the chunks in that many processes forked from this one
    (``gavel.benchmarks.gavel.workers``), the predictions still read here, in order; the
    scores are the same, in the same order.

    A prediction that needs a box format and has none is a :class:`ConfigError`, raised once
    the whole file has been read, so that a damaged line anywhere is still reported first."""
    from gavel.benchmarks.gavel.workers import Workers

    slots = slots or Slots(gold, chosen)
    position_of, slot_of = slots.position, slots.slot_of
    run = Gathered(gold, len(chosen), GavelScorer(settings))
    unknown = UnknownIds()
    chunk_slots: list[int] = []
    chunk_positions: list[int] = []
    chunk: list[Prediction | None] = []
    try:
        with Workers(workers, gold, settings) as pool:
            run.pool = pool
            for _, prediction in predictions or ():
                position = position_of(prediction.id)
                if position is None:
                    unknown.add(prediction.id)
                    continue
                slot = slot_of[position]
                if slot < 0 or run.refused is not None:
                    continue
                chunk_slots.append(slot)
                chunk_positions.append(position)
                chunk.append(prediction)
                if len(chunk) >= CHUNK:
                    run.submit(chunk_slots, chunk_positions, chunk)
                    chunk_slots, chunk_positions, chunk = [], [], []
            run.submit(chunk_slots, chunk_positions, chunk)
            run.finish(chosen)
    except BaseException:
        run.spool.close()
        raise
    return run.scored(unknown)


class Gathered:
    """The chunks' scores gathered in the order the chunks were given (here or in workers):
    lines into the spool, numbers into the run's columns, counts into its tally."""

    def __init__(self, gold: GoldColumns, size: int, scorer: GavelScorer):
        self.gold, self.scorer = gold, scorer
        self.spool = LineSpool(size)
        self.columns = RunColumns(size)
        self.tally = ScoringTally()
        self.refused: ConfigError | None = None
        self.pool: Workers | None = None
        self._pending: deque[tuple[list[int], Any]] = deque()

    def submit(self, slots: list[int], positions: list[int],
               predictions: list[Prediction | None]) -> None:  # fmt: skip
        if not slots or self.refused is not None:
            return
        if self.pool is None or not self.pool.running:
            self.absorb(slots, score_chunk(self.scorer, self.gold, positions, predictions))
            return
        self._pending.append((slots, self.pool.submit(positions, predictions)))
        while len(self._pending) > self.pool.in_flight:
            self.absorb(*self._take())

    def drain(self) -> None:
        while self._pending:
            self.absorb(*self._take())

    def finish(self, chosen: np.ndarray) -> None:
        """Once every prediction is in: the refusal met, if any, raised; else the samples
        without a prediction scored (as missing)."""
        self.drain()
        if self.refused is not None:
            raise self.refused
        missing = self.spool.missing()
        for start in range(0, len(missing), CHUNK):
            part = missing[start : start + CHUNK]
            self.submit(part.tolist(), chosen[part].tolist(), [None] * len(part))
        self.drain()

    def scored(self, unknown: UnknownIds) -> ScoredRun:
        return ScoredRun(SpooledRecords(self.spool, GavelScore), self.columns, self.tally, unknown)

    def _take(self) -> tuple[list[int], ChunkScores]:
        slots, waiting = self._pending.popleft()
        return slots, waiting.get()

    def absorb(self, slots: list[int], scored: ChunkScores) -> None:
        """Take a chunk's scores (the chunks in the order they were given)."""
        if scored.refused is not None:
            self.refused = self.refused or scored.refused
            return
        if self.refused is not None:
            return
        line_slots = slots if scored.line_slots is None else scored.line_slots
        self.spool.put_lines(line_slots, scored.lines, scored.lengths)
        self.columns.take(slots, scored.columns)
        self.tally.add(scored.tally)
