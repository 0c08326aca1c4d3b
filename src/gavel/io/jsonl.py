"""Streaming JSONL with precise error locations.

Files are read line by line in binary, so memory stays flat however long the file is, and the
SHA-256 of the exact bytes is computed on the way for the manifest.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from gavel.errors import DataError
from gavel.io.reading import bounded_lines, open_regular

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
            handle = open_regular(self.path)  # a FIFO or /dev/zero is refused, not read
        except FileNotFoundError:
            raise DataError(self.path, None, None, "file not found") from None
        except IsADirectoryError:
            raise DataError(self.path, None, None, "is a folder, not a JSONL file") from None
        with handle:
            for number, line in enumerate(bounded_lines(handle, self.path), start=1):
                self._sha.update(line)
                self.lines_read = number
                if line.strip():
                    yield number, line

    @property
    def sha256(self) -> str:
        return self._sha.hexdigest()


#: A ``\\uD800``..``\\uDFFF`` escape: only valid as half of a surrogate pair.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")


def parse_json(
    text: bytes | str,
    path: str | Path,
    line: int | None = None,
    *,
    object_pairs_hook: Any = None,
) -> Any:
    """``json.loads`` for a user's file, every failure a located :class:`DataError`.

    Beyond syntax this refuses what Python's reader accepts but nothing after it can handle:
    nesting deep enough to exhaust the stack, integers too long to convert, and lone
    surrogates (``"\\udfff"``, not Unicode text: no writer can encode them).
    """
    try:
        value = json.loads(text, object_pairs_hook=object_pairs_hook)
    except RecursionError:
        raise DataError(path, line, None, "JSON nested too deeply") from None
    except UnicodeDecodeError:
        raise DataError(path, line, None, "not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise DataError(path, line, None, f"not valid JSON ({error})") from None
    except ValueError as error:
        if "integer string conversion" not in str(error):
            raise  # raised by object_pairs_hook: the caller's own check
        raise DataError(
            path, line, None, "not valid JSON (a number with too many digits)"
        ) from None
    raw = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    if _SURROGATE_ESCAPE.search(raw) or (isinstance(text, str) and _has_surrogate(text)):
        where = surrogate_field(value)
        if where is not None:
            raise DataError(path, line, where or None, "lone surrogate escape (not Unicode text)")
    return value


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def surrogate_field(value: Any, where: str = "") -> str | None:
    """The dotted path of the first string (or key) holding a lone surrogate; None if none."""
    return _first_field(value, lambda v: isinstance(v, str) and _has_surrogate(v), where)


def non_finite_field(value: Any) -> str | None:
    """The dotted path of the first NaN or infinity (which Python's reader accepts and
    standard JSON has not); None if none."""
    return _first_field(value, lambda v: isinstance(v, float) and not math.isfinite(v), "")


def refuse_non_finite(value: Any, path: str | Path) -> None:
    """A DataError naming the field when a results file holds NaN or infinity: every reader
    of results files refuses them alike (a metric that is not a number compares as nothing)."""
    where = non_finite_field(value)
    if where is not None:
        raise DataError(path, None, where or None, "not standard JSON: NaN or Infinity")


def _first_field(value: Any, bad: Callable[[Any], bool], where: str) -> str | None:
    if bad(value):
        return where
    if isinstance(value, dict):
        for key, item in value.items():
            name = f"{where}.{key}" if where else str(key)
            if bad(key):
                return name.encode("utf-8", "backslashreplace").decode()
            found = _first_field(item, bad, name)
            if found is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _first_field(item, bad, f"{where}[{index}]")
            if found is not None:
                return found
    return None


def shown(value: Any, limit: int = 80) -> str:
    """A value of a user's file for an error message: JSON, cut short; never itself an error
    (a 5,000-digit integer cannot even be turned into text)."""
    try:
        text = json.dumps(value, ensure_ascii=True)
    except (ValueError, TypeError, RecursionError):
        if isinstance(value, int):
            return f"an integer of about {int(value.bit_length() * 0.30103)} digits"
        return f"a {type(value).__name__}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
    except RecursionError:
        raise DataError(path, number, None, "JSON nested too deeply") from None
    # msgspec follows strict JSON; Python's json also reads NaN/Infinity, which we then reject
    # with a message about the value rather than a generic syntax error (and lone surrogates,
    # which parse_json refuses naming the field).
    value: Any = parse_json(line, path, number)
    try:
        return msgspec.convert(value, kind)
    except msgspec.ValidationError as error:
        message = str(error).split(" - at ")[0]
        if "Expected" in message and non_finite_field(value) is not None:
            message = "non-finite number (NaN or Infinity)"
        raise DataError(path, number, field_of(error), message) from None


def write_jsonl(path: str | Path, records: Any) -> None:
    """Write structs or dicts as JSONL (one object per line)."""
    encoder = msgspec.json.Encoder()
    with Path(path).open("wb") as handle:
        for record in records:
            handle.write(encoder.encode(record))
            handle.write(b"\n")
