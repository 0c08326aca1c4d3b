"""One chunk of a GAVEL run scored: its answers read, its overlaps computed, its scores
encoded as JSON lines and their numbers gathered. The same in this process and in a worker
(:mod:`~gavel.benchmarks.gavel.workers`), which the run (:mod:`~gavel.benchmarks.gavel.streaming`)
hands chunks to."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import msgspec
import numpy as np

from gavel.benchmarks.gavel.columns import RunColumns
from gavel.benchmarks.gavel.gold import GoldColumns
from gavel.benchmarks.gavel.scorer import GavelScorer, ScoringTally
from gavel.errors import ConfigError
from gavel.records import Prediction


@dataclass
class ChunkScores:
    """One chunk's scores: their JSON lines (one buffer and each line's length), their
    numbers, what was counted; or the ConfigError that stopped it."""

    lines: bytes
    lengths: np.ndarray
    columns: RunColumns
    tally: ScoringTally
    refused: ConfigError | None = None
    #: The slot of each line, where the lines were put in another order than the chunk's
    #: (:meth:`sort_lines`); None: the chunk's own slots, in its order.
    line_slots: np.ndarray | None = None

    def sort_lines(self, slots: Sequence[int]) -> None:
        """Put the lines in the order of ``slots`` (the chunk's, one a score), so that the
        spool holds them mostly in the data's order and copies them out in long runs rather
        than line by line (predictions come in the order an async run answered them)."""
        order = np.argsort(np.asarray(slots, dtype=np.int64), kind="stable")
        ends = np.cumsum(self.lengths)
        starts = (ends - self.lengths)[order].tolist()
        view = memoryview(self.lines)
        self.lines = b"".join(
            [view[a:b] for a, b in zip(starts, ends[order].tolist(), strict=True)]
        )
        self.lengths = self.lengths[order]
        self.line_slots = np.asarray(slots, dtype=np.int64)[order]


def score_chunk(scorer: GavelScorer, gold: GoldColumns, positions: Sequence[int],
                predictions: Sequence[Prediction | None]) -> ChunkScores:  # fmt: skip
    """Score the samples at data ``positions`` with their predictions (None: missing)."""
    scorer.tally = tally = ScoringTally()
    # A prediction was found by its sample's id: the same text, so not decoded again.
    samples = gold.golds(positions, [None if p is None else p.id for p in predictions])
    try:
        scores = [scorer.score(s, p) for s, p in zip(samples, predictions, strict=True)]
    except ConfigError as error:
        return ChunkScores(b"", np.zeros(0, dtype=np.int64), RunColumns(0), tally, error)
    scorer.fill_overlaps(samples, scores)
    columns = RunColumns(len(scores))
    columns.fill(range(len(scores)), scores, [p.model if p else None for p in predictions])
    lines = _ENCODER.encode_lines(scores)
    # JSON holds no raw line end (one in a string is escaped), so each one ends a score's line.
    ends = np.flatnonzero(np.frombuffer(lines, dtype=np.uint8) == _LINE_END) + 1
    return ChunkScores(lines, np.diff(ends, prepend=0), columns, tally)


_ENCODER = msgspec.json.Encoder()
_LINE_END = ord("\n")
