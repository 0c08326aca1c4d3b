"""Per-sample records kept on disk while a run is scored, not in memory.

A million per-sample scores held as Python objects take gigabytes. Scoring instead encodes each
score as its JSON line as soon as it is made and appends it to an unnamed temporary file (gone
when closed, or when the process ends however it ends), remembering where each line lies: 12
bytes per sample. The lines come out in the order of their positions (the data's order) however
they went in (the predictions file's order), to be copied into results.scores.jsonl or decoded
one at a time.
"""

from __future__ import annotations

import mmap
import tempfile
import weakref
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Generic, TypeVar, overload

import msgspec
import numpy as np

T = TypeVar("T")

#: Bytes gathered before one write or one block handed on.
BLOCK = 1 << 20
#: Bytes read from the mapped spool before its pages are let go (see ``_release``).
RELEASE = 8 << 20
_DONTNEED = getattr(mmap, "MADV_DONTNEED", None)


class LineSpool:
    """Lines (each ending in a newline) put at positions ``0 .. size - 1`` in any order, each
    position once, and read back in position order."""

    def __init__(self, size: int, directory: str | Path | None = None):
        # The spool owns its file until close() (or until it is collected).
        self._file = tempfile.TemporaryFile(dir=directory, prefix="gavel-scores-")  # noqa: SIM115
        # Closed when the spool is collected or the interpreter exits, whichever comes first,
        # without a ResourceWarning: results keep their scores' spool for as long as they live.
        self._closer = weakref.finalize(self, self._file.close)
        self._start = np.full(size, -1, dtype=np.int64)
        self._length = np.zeros(size, dtype=np.int64)
        self._end = 0
        self._map: mmap.mmap | None = None

    def __len__(self) -> int:
        return len(self._start)

    def put(self, positions: Sequence[int] | np.ndarray, lines: Sequence[bytes]) -> None:
        """Append ``lines`` (newline-terminated), ``lines[i]`` for ``positions[i]``."""
        lengths = np.fromiter(map(len, lines), dtype=np.int64, count=len(lines))
        self.put_lines(positions, b"".join(lines), lengths)

    def put_lines(self, positions: Sequence[int] | np.ndarray, lines: bytes,
                  lengths: np.ndarray) -> None:  # fmt: skip
        """Append lines given as one buffer and each one's length, in ``positions``' order."""
        if self._map is not None:
            raise ValueError("the spool is being read; it takes no more lines")
        where = np.asarray(positions, dtype=np.int64)
        if (self._start[where] >= 0).any():
            raise ValueError("a position was given a line twice")
        self._start[where] = self._end + np.cumsum(lengths) - lengths
        self._length[where] = lengths
        self._file.write(lines)
        self._end += len(lines)

    def missing(self) -> np.ndarray:
        """The positions without a line yet."""
        return np.flatnonzero(self._start < 0)

    def _view(self) -> mmap.mmap | bytes:
        if self.missing().size:
            raise ValueError(f"{self.missing().size} position(s) have no line")
        if self._end == 0:
            return b""
        if self._map is None:
            self._file.flush()
            self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
        return self._map

    def line(self, position: int) -> bytes:
        view = self._view()
        start = int(self._start[position])
        return bytes(view[start : start + int(self._length[position])])

    def blocks(self) -> Iterator[bytes]:
        """Every line in position order, joined into blocks of about :data:`BLOCK` bytes.

        Lines that lie one after the other in the file (predictions in the data's order) are
        copied as one run."""
        view = self._view()
        if not len(self):
            return
        start, length = self._start, self._length
        breaks = np.flatnonzero(start[1:] != start[:-1] + length[:-1]) + 1
        firsts = np.concatenate([[0], breaks])
        lasts = np.concatenate([breaks, [len(start)]]) - 1
        begins = start[firsts].tolist()
        ends = (start[lasts] + length[lasts]).tolist()
        pending: list[bytes] = []
        size = read = 0
        for begin, end in zip(begins, ends, strict=True):
            for offset in range(begin, end, BLOCK):
                piece = view[offset : min(end, offset + BLOCK)]
                pending.append(piece)
                size += len(piece)
                if size >= BLOCK:
                    yield b"".join(pending)
                    pending, size = [], 0
                    read += BLOCK
                    if read >= RELEASE:
                        self._release()
                        read = 0
        if pending:
            yield b"".join(pending)
        self._release()

    def lines(self) -> Iterator[bytes]:
        """Every line in position order, one at a time."""
        view = self._view()
        read = 0
        for start, length in zip(self._start.tolist(), self._length.tolist(), strict=True):
            yield view[start : start + length]
            read += length
            if read >= RELEASE:
                self._release()
                read = 0
        self._release()

    def _release(self) -> None:
        """Let go of the pages read so far: a mapped file's pages count as the process's
        memory until released (they stay in the system's cache)."""
        if self._map is not None and _DONTNEED is not None:
            self._map.madvise(_DONTNEED)

    def close(self) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None
        self._closer()


class SpooledRecords(Sequence[T], Generic[T]):
    """A sequence of records whose JSON lines are in a :class:`LineSpool`: each is decoded when
    asked for, so holding a million of them costs the spool's 12 bytes each."""

    def __init__(self, spool: LineSpool, kind: type[T]):
        self.spool = spool
        self.kind = kind
        self._decoder = msgspec.json.Decoder(kind)

    def __len__(self) -> int:
        return len(self.spool)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("record index out of range")
        return self._decoder.decode(self.spool.line(index))

    def __iter__(self) -> Iterator[T]:
        decode = self._decoder.decode
        for line in self.spool.lines():
            yield decode(line)

    def blocks(self) -> Iterator[bytes]:
        """The records' JSON lines in order, in blocks (for writing them out)."""
        return self.spool.blocks()

    def __repr__(self) -> str:
        return f"<{len(self)} spooled records>"
