"""What the metrics of a GAVEL run reduce, one small numpy value per sample.

The per-sample scores go to disk as they are made (``gavel.io.spool``); the numbers the
metrics, counts and bootstrap need stay here, in the data's order: the IoU and log2 area ratio
(8 bytes each), the verdict, the outcome, the box status, format and model as small codes, the
number of boxes scored, and whether the cap on boxes applied: 31 bytes a sample.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gavel.records import GavelScore, Outcome

#: Outcomes in a fixed order, for counting them as small integer codes.
OUTCOMES = list(Outcome)
_OUTCOME_CODE = {outcome: code for code, outcome in enumerate(OUTCOMES)}


class Codes:
    """Small integer codes for the few distinct texts of a column (box statuses, box formats,
    model names), given in order of first use; -1 for none."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._code: dict[str, int] = {}

    def code(self, name: str | None) -> int:
        if not name:
            return -1
        code = self._code.get(name)
        if code is None:
            code = self._code[name] = len(self.names)
            self.names.append(name)
        return code

    def counts(self, codes: np.ndarray) -> dict[str, int]:
        """How many samples have each text, in the order the samples first show it (as a
        Counter filled in that order lists them)."""
        return first_seen_counts(codes, self.names)


def first_seen_counts(codes: np.ndarray, names: Sequence[object]) -> dict[str, int]:
    """Counts of the codes ``>= 0``, keyed by name, in order of first appearance."""
    present, first, counts = np.unique(codes, return_index=True, return_counts=True)
    order = [i for i in np.argsort(first, kind="stable") if present[i] >= 0]
    return {str(names[present[i]]): int(counts[i]) for i in order}


class RunColumns:
    """One entry per scored sample (positions ``0 .. n - 1`` in the data's order)."""

    def __init__(self, n: int):
        self.iou = np.zeros(n)
        self.area_log2 = np.full(n, np.nan)
        #: 1: hallucinated, 0: clean, -1: no verdict.
        self.verdict = np.full(n, -1, dtype=np.int8)
        self.outcome = np.full(n, -1, dtype=np.int8)
        self.n_pred_boxes = np.zeros(n, dtype=np.int32)
        self.box_status = np.full(n, -1, dtype=np.int16)
        self.box_format = np.full(n, -1, dtype=np.int16)
        self.model = np.full(n, -1, dtype=np.int32)
        self.capped = np.zeros(n, dtype=np.bool_)
        self.statuses, self.formats, self.models = Codes(), Codes(), Codes()

    def __len__(self) -> int:
        return len(self.iou)

    def fill(
        self,
        slots: Sequence[int],
        scores: Sequence[GavelScore],
        models: Sequence[str | None],
    ) -> None:
        """Record the scores of the samples at ``slots`` (and the model each answer names)."""
        n = len(scores)
        where = np.asarray(slots, dtype=np.int64)
        self.iou[where] = np.fromiter((s.iou or 0.0 for s in scores), np.float64, n)
        self.area_log2[where] = np.fromiter(
            (np.nan if s.area_log2 is None else s.area_log2 for s in scores), np.float64, n
        )
        self.verdict[where] = np.fromiter(
            (-1 if s.verdict_pred is None else int(s.verdict_pred) for s in scores), np.int8, n
        )
        self.outcome[where] = np.fromiter((_OUTCOME_CODE[s.outcome] for s in scores), np.int8, n)
        self.n_pred_boxes[where] = np.fromiter((s.n_pred_boxes for s in scores), np.int32, n)
        status, form = self.statuses.code, self.formats.code
        self.box_status[where] = np.fromiter((status(s.box_status) for s in scores), np.int16, n)
        self.box_format[where] = np.fromiter((form(s.box_format) for s in scores), np.int16, n)
        self.model[where] = np.fromiter(map(self.models.code, models), np.int32, n)
        self.capped[where] = np.fromiter((s.boxes_given is not None for s in scores), np.bool_, n)

    def take(self, slots: Sequence[int], other: RunColumns) -> None:
        """Copy another run's columns (one chunk's, maybe from another process) into
        ``slots``; its texts' codes are renumbered as this run's."""
        where = np.asarray(slots, dtype=np.int64)
        for name in ("iou", "area_log2", "verdict", "outcome", "n_pred_boxes", "capped"):
            getattr(self, name)[where] = getattr(other, name)
        for name, codes in (("box_status", "statuses"), ("box_format", "formats"),
                            ("model", "models")):  # fmt: skip
            mine, theirs = getattr(self, codes), getattr(other, codes)
            renumbered = np.array([mine.code(text) for text in theirs.names] + [-1])
            getattr(self, name)[where] = renumbered[getattr(other, name)]
