"""A large JSONL file cut into pieces at line starts, so that processes can read it together.

Each piece is read as :class:`~gavel.io.jsonl.HashingReader` reads the whole file (non-blank
lines, numbered as in the file, a line longer than the limit refused naming it), so a reader of
pieces finds the same lines with the same numbers. The file's hash is computed apart
(:func:`file_sha256`): a hash runs through the file in order.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator
from pathlib import Path

from gavel.errors import DataError
from gavel.io.reading import LINE_BYTES, bounded_lines, open_regular

#: Bytes read at a time where a piece is read whole (hashing, counting lines).
BLOCK = 1 << 20


def piece_bounds(path: Path, pieces: int) -> list[int] | None:
    """Offsets that cut ``path`` into about ``pieces`` equal pieces, each at a line start
    (the first 0, the last the file's size); None when a line near a cut is longer than the
    line limit (the caller reads the file in one piece, which refuses that line by number)."""
    try:
        handle = open_regular(path)
    except OSError:
        return None  # read in one piece, whose reader names the problem
    with handle:
        size = handle.seek(0, 2)
        bounds = [0]
        for piece in range(1, pieces):
            target = max(size * piece // pieces, bounds[-1] + 1)
            handle.seek(target - 1)
            rest = handle.readline(LINE_BYTES + 1)
            if len(rest) > LINE_BYTES:
                return None
            cut = target - 1 + len(rest)
            if cut >= size:
                break
            if cut > bounds[-1]:
                bounds.append(cut)
        bounds.append(size)
    return bounds


def newlines_between(path: Path, start: int, stop: int) -> int:
    """The line ends in bytes ``start`` to ``stop`` (the lines a piece holds)."""
    count = 0
    with open_regular(path) as handle:
        handle.seek(start)
        left = stop - start
        while left > 0 and (block := handle.read(min(BLOCK, left))):
            count += block.count(b"\n")
            left -= len(block)
    return count


def lines_between(path: Path, start: int, stop: int, first: int) -> Iterator[tuple[int, bytes]]:
    """``(line number, bytes)`` of the non-blank lines from offset ``start`` (a line start,
    whose line is number ``first``) up to ``stop``."""
    with open_regular(path) as handle:
        handle.seek(start)
        position = start
        for number, line in enumerate(bounded_lines(handle, path, first=first), start=first):
            if line.strip():
                yield number, line
            position += len(line)
            if position >= stop:
                return


def file_sha256(path: Path, stop: int | None = None) -> str:
    """The SHA-256 of ``path``'s bytes, or of its first ``stop`` bytes (the pieces read of a
    file that may still grow); hashlib lets other threads run meanwhile."""
    digest = hashlib.sha256()
    remaining = math.inf if stop is None else stop
    try:
        with open_regular(path) as handle:
            while remaining > 0 and (block := handle.read(int(min(BLOCK, remaining)))):
                digest.update(block)
                remaining -= len(block)
    except OSError as error:
        raise DataError(path, None, None, f"cannot read ({error.strerror or error})") from None
    return digest.hexdigest()
