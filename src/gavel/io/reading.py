"""Opening a user's input file: regular files only, and small files with a size limit.

``Path.read_text`` waits forever on a FIFO nobody writes to, and reads ``/dev/zero`` until
memory runs out. So inputs are opened without blocking (a FIFO opens at once then) and checked
with ``fstat`` on the open descriptor (no race with a rename): anything but a regular file (a
FIFO, a device, a socket) is refused, naming the file. A file that is small by nature (a config
file, an id list) is also refused beyond a size limit, before it is read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from gavel.errors import DataError

#: Config files (TOML/YAML): flags and their values.
CONFIG_BYTES = 1 << 20
#: ``--sample-id @FILE`` lists: a million ids of 60 characters fit.
ID_LIST_BYTES = 64 << 20
#: One line of a JSONL file (a sample, a prediction, a batch output line): a model's longest
#: reply is a few hundred kilobytes, so a longer line is damage or an attack, not data.
LINE_BYTES = 64 << 20

_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
    stat.S_IFSOCK: "a socket",
}


def open_regular(path: str | Path) -> BinaryIO:
    """``path`` opened for binary reading; DataError when it is not a regular file.

    OS errors (not found, a folder, no permission) are raised as they are, for the caller to
    phrase.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(21, "Is a directory", str(path))
        if not stat.S_ISREG(mode):
            kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
            raise DataError(path, None, None, f"is {kind}: gavel reads regular files only")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_small(path: str | Path, limit: int, what: str) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (``what`` names the kind of
    file in the refusal)."""
    with open_regular(path) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise DataError(path, None, None, f"larger than {limit // 1024} KiB, too large for {what}")
    return data


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
