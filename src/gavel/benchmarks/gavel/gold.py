"""The gold side of a GAVEL run as compact columns, not one record per sample.

Scoring needs little of a sample: its id, verdict, Table 1 column, image size and boxes. Kept as
typed arrays (a byte for the verdict, one for the column, eight for each side of the image and
32 per box) they take a small fraction of the memory of a million :class:`GavelSample` records
with their captions and explanations, and a prediction finds its sample through the loader's
own index of ids (the one its duplicate check keeps anyway).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

import msgspec
import numpy as np

from gavel.benchmarks.gavel.data import GavelLoader
from gavel.errors import DataError
from gavel.geometry import Box
from gavel.io.id_index import IdIndex, id_index
from gavel.records import CATEGORY_COLUMNS, GavelSample

_COLUMN_CODE = {name: code for code, name in enumerate(CATEGORY_COLUMNS)}


class Gold(msgspec.Struct, gc=False):
    """What scoring reads of one sample (a :class:`GavelSample` has the same attributes)."""

    id: str
    column: str
    hallucinated: bool
    boxes: list[Box]
    width: int
    height: int


class GoldParts(NamedTuple):
    """:class:`GoldColumns` as plain buffers: what a process that read part of a file sends."""

    truth: bytes
    column: bytes
    width: bytes
    height: bytes
    box_start: bytes
    boxes: bytes


class GoldColumns:
    """Every sample of a data file, in file order, as columns; ``ids`` are their ids (the
    loader's index: ``position(id)`` finds a sample)."""

    def __init__(self, ids: IdIndex):
        self.ids = ids
        self.position = ids.get
        self._truth = bytearray()
        self._column = array("b")
        self._width = array("i")  # sides are at most 2**31 - 1 (gavel.geometry.MAX_SIDE)
        self._height = array("i")
        self._box_start = array("q", [0])
        self._boxes = array("d")

    def extend(self, samples: Iterable[GavelSample]) -> None:
        """Add the samples whose ids come next in ``ids`` (a loop with every append bound
        once: it runs a million times for a million samples)."""
        truth, column, code = self._truth.append, self._column.append, _COLUMN_CODE
        width, height, starts = self._width.append, self._height.append, self._box_start.append
        boxes = self._boxes
        add_box = boxes.extend
        for sample in samples:
            truth(sample.hallucinated)
            column(code[sample.column])
            width(sample.width)
            height(sample.height)
            for box in sample.boxes:
                add_box(box)
            starts(len(boxes) >> 2)

    def __len__(self) -> int:
        return len(self._truth)

    def parts(self) -> GoldParts:
        """The columns as buffers (for :meth:`joined`, e.g. from a forked process)."""
        return GoldParts(
            bytes(self._truth),
            self._column.tobytes(),
            self._width.tobytes(),
            self._height.tobytes(),
            self._box_start.tobytes(),
            self._boxes.tobytes(),
        )

    @classmethod
    def joined(cls, ids: IdIndex, parts: Sequence[GoldParts]) -> GoldColumns:
        """The columns of consecutive pieces of a file, one after another; ``ids`` holds the
        ids of them all, in the same order."""
        gold = cls(ids)
        for part in parts:
            boxes_before = len(gold._boxes) >> 2
            gold._truth += part.truth
            gold._column.frombytes(part.column)
            gold._width.frombytes(part.width)
            gold._height.frombytes(part.height)
            starts = np.frombuffer(part.box_start, dtype=np.int64)[1:] + boxes_before
            gold._box_start.frombytes(starts.tobytes())
            gold._boxes.frombytes(part.boxes)
        return gold

    def golds(
        self, positions: Sequence[int], known: Sequence[str | None] | None = None
    ) -> list[Gold]:
        """The samples at ``positions`` as scoring reads them. ``known``: each one's id where
        the caller has it already (a prediction found by it; None: not known), so it is not
        decoded again from the index."""
        ids, names, column, truth = self.ids, CATEGORY_COLUMNS, self._column, self._truth
        width, height, starts, boxes = self._width, self._height, self._box_start, self._boxes
        given = known if known is not None else [None] * len(positions)
        found = []
        for position, sample_id in zip(positions, given, strict=True):
            start, stop = starts[position] << 2, starts[position + 1] << 2
            if stop - start == 4:  # the usual: one box (or none, for a clean caption)
                sample_boxes = [tuple(boxes[start:stop])]
            elif start == stop:
                sample_boxes = []
            else:
                values = iter(boxes[start:stop])
                sample_boxes = list(zip(values, values, values, values, strict=True))
            found.append(
                Gold(
                    ids[position] if sample_id is None else sample_id,
                    names[column[position]],
                    truth[position] == 1,
                    sample_boxes,  # type: ignore[arg-type]
                    width[position],
                    height[position],
                )
            )
        return found

    # --- columns of the samples at some positions (numpy views; no copy of everything) ----

    def truth(self, positions: np.ndarray) -> np.ndarray:
        return np.frombuffer(self._truth, dtype=np.bool_)[positions]

    def columns(self, positions: np.ndarray) -> np.ndarray:
        """Each sample's Table 1 column as its index in CATEGORY_COLUMNS."""
        return np.frombuffer(self._column, dtype=np.int8)[positions].astype(np.int16)

    def box_counts(self, positions: np.ndarray) -> np.ndarray:
        return np.diff(np.frombuffer(self._box_start, dtype=np.int64))[positions]

    def boxes_of(self, positions: np.ndarray) -> np.ndarray:
        """``(n, 4)`` gold boxes of the samples at ``positions``, in their order."""
        flat = np.frombuffer(self._boxes, dtype=np.float64).reshape(-1, 4)
        if len(positions) == len(self) and (positions == np.arange(len(self))).all():
            return flat
        starts = np.frombuffer(self._box_start, dtype=np.int64)
        first, counts = starts[positions], np.diff(starts)[positions]
        rows = np.repeat(first - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
        return flat[rows]


def load_gold(
    path: str | Path, image_root: str | Path | None = None
) -> tuple[GoldColumns, GavelLoader]:
    """Read and check every line of a GAVEL data file (the loader's rules, its errors) into
    columns; the loader is returned for its hash and report."""
    loader = GavelLoader(path, image_root)
    gold = GoldColumns(loader.ids)
    gold.extend(loader)
    if not len(gold):
        raise DataError(path, None, None, "no samples in file")
    return gold, loader


def gold_of(samples: Sequence[GavelSample]) -> GoldColumns:
    """Columns of samples already loaded (one answer scored at a time, a test)."""
    ids = id_index([sample.id for sample in samples])
    if len(ids) != len(samples):
        raise ValueError("samples with the same id")
    gold = GoldColumns(ids)
    gold.extend(samples)
    return gold
