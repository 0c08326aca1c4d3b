"""Reading a user's input file: regular files only, small files with a size limit, and lines
of a bounded length.

Files are opened by ``gavel.regular_files`` (re-exported here): a FIFO, a device or a socket is
refused, naming the file, rather than waited on or read forever. A file that is small by nature
(a config file, an id list) is also refused beyond a size limit, before it is read, and a line
longer than :data:`LINE_BYTES` is refused without reading it whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from gavel.errors import DataError
from gavel.regular_files import open_regular, read_small

__all__ = [
    "CONFIG_BYTES",
    "ID_LIST_BYTES",
    "LINE_BYTES",
    "bounded_lines",
    "open_regular",
    "read_regular",
    "read_small",
]

#: Config files (TOML/YAML): flags and their values.
CONFIG_BYTES = 1 << 20
#: ``--sample-id @FILE`` lists: a million ids of 60 characters fit.
ID_LIST_BYTES = 64 << 20
#: One line of a JSONL file (a sample, a prediction, a batch output line): a model's longest
#: reply is a few hundred kilobytes, so a longer line is damage or an attack, not data.
LINE_BYTES = 64 << 20


def read_regular(path: str | Path) -> bytes:
    """The bytes of a regular file (no size limit: for data files, read whole by their
    readers); DataError for a FIFO, a device or a socket."""
    with open_regular(path) as handle:
        return handle.read()


def bounded_lines(
    handle: BinaryIO, path: str | Path, limit: int | None = None, first: int = 1
) -> Iterator[bytes]:
    """The lines of ``handle`` as iterating it gives them, except that a line longer than
    ``limit`` bytes (default :data:`LINE_BYTES`) is refused, naming the file and line, after
    reading at most ``limit`` bytes of it: memory never grows with the length of a line.
    ``first``: the number of the handle's first line (a piece of a file read from its middle)."""
    most = LINE_BYTES if limit is None else limit
    number = first - 1
    while line := handle.readline(most + 1):
        number += 1
        if len(line) > most and not line.endswith(b"\n"):
            raise DataError(
                path, number, None, f"line longer than {_size(most)}: one line holds one record"
            )
        yield line


def _size(count: int) -> str:
    return f"{count >> 20} MiB" if count >= 1 << 20 else f"{count} bytes"
