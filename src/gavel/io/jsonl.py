"""Streaming JSONL with precise error locations.

Files are read line by line in binary, so memory stays flat however long the file is, and the
SHA-256 of the exact bytes is computed on the way for the manifest.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from gavel.errors import DataError

T = TypeVar("T")

_FIELD_AT = re.compile(r"at `\$\.?([^`]*)`")
_MISSING = re.compile(r"missing required field `([^`]+)`")


class HashingReader:
    """Iterates the non-blank lines of a file as ``(line_number, bytes)``, hashing every byte."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._sha = hashlib.sha256()
        self.lines_read = 0

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        try:
            handle = self.path.open("rb")
        except FileNotFoundError:
            raise DataError(self.path, None, None, "file not found") from None
        except IsADirectoryError:
            raise DataError(self.path, None, None, "is a folder, not a JSONL file") from None
        with handle:
            for number, line in enumerate(handle, start=1):
                self._sha.update(line)
                self.lines_read = number
                if line.strip():
                    yield number, line

    @property
    def sha256(self) -> str:
        return self._sha.hexdigest()


def field_of(error: msgspec.ValidationError) -> str | None:
    """The dotted field path named in a msgspec validation message."""
    text = str(error)
    if match := _MISSING.search(text):
        return match.group(1)
    if match := _FIELD_AT.search(text):
        return match.group(1) or None
    return None


def decode_line(
    decoder: msgspec.json.Decoder[T], path: Path, number: int, line: bytes, kind: type[T]
) -> T:
    """Decode one line into ``kind``; any problem becomes a located :class:`DataError`."""
    try:
        return decoder.decode(line)
    except msgspec.ValidationError as error:
        message = str(error).split(" - at ")[0]
        raise DataError(path, number, field_of(error), message) from None
    except msgspec.DecodeError:
        pass
    # msgspec follows strict JSON; Python's json also reads NaN/Infinity, which we then reject
    # with a message about the value rather than a generic syntax error.
    try:
        value: Any = json.loads(line)
    except (ValueError, UnicodeDecodeError) as error:
        raise DataError(path, number, None, f"not valid JSON ({error})") from None
    try:
        return msgspec.convert(value, kind)
    except msgspec.ValidationError as error:
        message = str(error).split(" - at ")[0]
        if "Expected" in message and _has_non_finite(value):
            message = "non-finite number (NaN or Infinity)"
        raise DataError(path, number, field_of(error), message) from None


def _has_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return value != value or value in (float("inf"), float("-inf"))
    if isinstance(value, dict):
        return any(_has_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_non_finite(v) for v in value)
    return False


def write_jsonl(path: str | Path, records: Any) -> None:
    """Write structs or dicts as JSONL (one object per line)."""
    encoder = msgspec.json.Encoder()
    with Path(path).open("wb") as handle:
        for record in records:
            handle.write(encoder.encode(record))
            handle.write(b"\n")
