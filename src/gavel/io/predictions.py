"""Reading a predictions file: one :class:`~gavel.records.Prediction` per line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec

from gavel.errors import DataError
from gavel.io.jsonl import HashingReader, decode_line
from gavel.records import Prediction

_DECODER = msgspec.json.Decoder(Prediction)


class PredictionReader:
    """Streams predictions, rejecting empty or duplicate ids with their line numbers."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._reader = HashingReader(self.path)
        self.count = 0

    def __iter__(self) -> Iterator[Prediction]:
        first_line: dict[str, int] = {}
        for number, line in self._reader:
            prediction = decode_line(_DECODER, self.path, number, line, Prediction)
            if not prediction.id:
                raise DataError(self.path, number, "id", "empty id")
            if prediction.id in first_line:
                raise DataError(
                    self.path,
                    number,
                    "id",
                    f"duplicate prediction for id {prediction.id!r} "
                    f"(first on line {first_line[prediction.id]})",
                )
            first_line[prediction.id] = number
            self.count += 1
            yield prediction

    @property
    def sha256(self) -> str:
        return self._reader.sha256
