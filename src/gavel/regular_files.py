"""Opening a file gavel reads: regular files only, and small files with a size limit.

``Path.read_bytes`` waits forever on a FIFO nobody writes to, and reads ``/dev/zero`` until
memory runs out. So files are opened without blocking (a FIFO opens at once then) and checked
with ``fstat`` on the open descriptor (no race with a rename): anything but a regular file (a
FIFO, a device, a socket) is refused, naming the file. This sits below every package that reads
a user's files (``gavel.io.reading`` builds the readers of data files on it; images and videos
are checked here too, before a decoder opens them).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from gavel.errors import DataError

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
            raise DataError(path, None, None, f"is {_kind(mode)}: gavel reads regular files only")
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


def require_regular(path: str | Path) -> None:
    """DataError unless ``path`` is a regular file (for a library that opens the file itself,
    as a video decoder does); OS errors are raised as they are. ``stat`` does not block on a
    FIFO, as opening it for reading would."""
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise DataError(path, None, None, f"is {_kind(mode)}: gavel reads regular files only")


def _kind(mode: int) -> str:
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")
