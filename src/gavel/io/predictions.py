"""Reading a predictions file: one :class:`~gavel.records.Prediction` per line."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import msgspec

from gavel.errors import DataError
from gavel.geometry import MAX_SIDE
from gavel.io.formats import lines_of
from gavel.io.jsonl import decode_line, shown
from gavel.parsing.conventions import convention_names
from gavel.records import Prediction

_DECODER = msgspec.json.Decoder(Prediction)


def check_prediction(path: Path, number: int, prediction: Prediction) -> None:
    """What decoding cannot check: sizes that scale boxes, and a declared box format.

    A size of 0 would divide by zero when boxes are scaled back to the image, and an unknown
    box format could only fail later, without its line.
    """
    for name in ("sent_size", "input_size"):
        size = getattr(prediction, name)
        if size is None:
            continue
        if len(size) != 2 or not all(0 < side <= MAX_SIDE for side in size):
            raise DataError(
                path, number, name,
                f"expected [width, height] in pixels, each from 1 to {MAX_SIDE:,}, got "
                f"{shown(size)}",
            )  # fmt: skip
    if prediction.box_format is not None and prediction.box_format not in convention_names():
        raise DataError(
            path, number, "box_format",
            f"unknown box format {shown(prediction.box_format)}; known: "
            + ", ".join(convention_names()),
        )  # fmt: skip


def read_line(path: Path, number: int, line: bytes) -> Prediction:
    """One predictions line decoded, its id present (the checks before the duplicate check)."""
    prediction = decode_line(_DECODER, path, number, line, Prediction)
    if not prediction.id:
        raise DataError(path, number, "id", "empty id")
    return prediction


class PredictionReader:
    """Streams predictions, rejecting empty or duplicate ids with their line numbers.

    The file is read by its format (:mod:`gavel.io.formats`): an inspect_ai ``.eval`` log is
    read as the predictions file it stands for (one line per sample, numbered in the log's
    order; gavel.io.formats.inspect_log), and so is an lmms-eval sample log
    (gavel.io.formats.lmms_eval_log).
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._reader = lines_of(self.path)
        self.count = 0

    def __iter__(self) -> Iterator[Prediction]:
        for _, prediction in self.numbered():
            yield prediction

    def numbered(
        self, seen: Callable[[str, int], int | None] | None = None
    ) -> Iterator[tuple[int, Prediction]]:
        """``(line number, prediction)`` for every line.

        ``seen(id, line)`` records that ``id`` is on ``line`` and returns the line it was first
        on (``line`` itself, or None, when it is new; an earlier line is a duplicate, refused).
        By default a dict of every id does it; a caller that indexes the ids anyway can do it
        in a few bytes per id."""
        if seen is None:
            first_line: dict[str, int] = {}
            seen = first_line.setdefault
        for number, line in self._reader:
            prediction = read_line(self.path, number, line)
            first = seen(prediction.id, number)
            if first is not None and first != number:
                raise DataError(
                    self.path, number, "id",
                    f"duplicate prediction for id {prediction.id!r} (first on line {first})",
                )  # fmt: skip
            check_prediction(self.path, number, prediction)
            self.count += 1
            yield number, prediction

    @property
    def sha256(self) -> str:
        return self._reader.sha256
