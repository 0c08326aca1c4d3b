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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import msgspec
import numpy as np

from gavel.benchmarks.gavel.columns import RunColumns
from gavel.benchmarks.gavel.gold import GoldColumns
from gavel.benchmarks.gavel.scorer import GavelScorer, GavelSettings, ScoringTally
from gavel.errors import ConfigError
from gavel.io.spool import LineSpool, SpooledRecords
from gavel.records import GavelScore, Prediction

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
) -> ScoredRun:
    """Score the samples at ``chosen`` (data positions, in order) with ``predictions``
    (``(line, prediction)``, in any order; a prediction for a sample not chosen is set aside,
    one for an id not in the data is counted as unknown).

    A prediction that needs a box format and has none is a :class:`ConfigError`, raised once
    the whole file has been read, so that a damaged line anywhere is still reported first."""
    slots = slots or Slots(gold, chosen)
    position_of, slot_of = slots.position, slots.slot_of
    spool = LineSpool(len(chosen))
    columns = RunColumns(len(chosen))
    scorer = GavelScorer(settings)
    chunk = _Chunk(scorer, gold, spool, columns)
    unknown = UnknownIds()
    refused: ConfigError | None = None
    try:
        for _, prediction in predictions or ():
            position = position_of(prediction.id)
            if position is None:
                unknown.add(prediction.id)
                continue
            slot = slot_of[position]
            if slot < 0 or refused is not None:
                continue
            chunk.add(slot, position, prediction)
            if len(chunk.slots) >= CHUNK:
                refused = chunk.score()
        refused = refused or chunk.score()
        if refused is not None:
            raise refused
        for missing in _pieces(spool.missing()):
            for slot in missing.tolist():
                chunk.add(slot, int(chosen[slot]), None)
            chunk.score()
    except BaseException:
        spool.close()
        raise
    return ScoredRun(SpooledRecords(spool, GavelScore), columns, scorer.tally, unknown)


def _pieces(values: np.ndarray) -> Iterator[np.ndarray]:
    for start in range(0, len(values), CHUNK):
        yield values[start : start + CHUNK]


class _Chunk:
    """The predictions of one chunk, then their scores: lines into the spool, numbers into
    the columns."""

    def __init__(self, scorer: GavelScorer, gold: GoldColumns, spool: LineSpool,
                 columns: RunColumns):  # fmt: skip
        self.scorer, self.gold, self.spool, self.columns = scorer, gold, spool, columns
        self.encode = msgspec.json.Encoder().encode
        self.slots: list[int] = []
        self.positions: list[int] = []
        self.predictions: list[Prediction | None] = []

    def __len__(self) -> int:
        return len(self.slots)

    def add(self, slot: int, position: int, prediction: Prediction | None) -> None:
        self.slots.append(slot)
        self.positions.append(position)
        self.predictions.append(prediction)

    def score(self) -> ConfigError | None:
        """Score what was added (then forget it); a prediction without a box format is
        returned, not raised (see :func:`score_run`)."""
        if not self.slots:
            return None
        scorer, predictions = self.scorer, self.predictions
        samples = self.gold.golds(self.positions)
        try:
            scores = [scorer.score(s, p) for s, p in zip(samples, predictions, strict=True)]
        except ConfigError as error:
            return error
        finally:
            slots, self.slots, self.positions, self.predictions = self.slots, [], [], []
        scorer.fill_overlaps(samples, scores)
        encode = self.encode
        self.spool.put(slots, [encode(score) + b"\n" for score in scores])
        models = [p.model if p is not None else None for p in predictions]
        self.columns.fill(slots, scores, models)
        return None
