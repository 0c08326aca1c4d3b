"""Writing result files so that a crash never leaves a half-written one behind."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _read_umask() -> int:
    mask = os.umask(0)  # the only way to read it; done once, at import, before any threads
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def plain_mode(fd: int) -> None:
    """Give a temporary file (0600) the mode a newly created file gets (0666 less the umask),
    so a file renamed into place is as readable as one written directly."""
    os.fchmod(fd, 0o666 & ~_UMASK)


def atomic_write_bytes(path: str | Path, payload: bytes) -> None:
    """Write to a temporary file in the same folder, then rename over the target.

    The file gets the usual permissions (0666 less the umask), not the 0600 of a temporary file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        plain_mode(fd)
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def atomic_write_lines(path: str | Path, lines) -> None:
    atomic_write_bytes(path, b"".join(line + b"\n" for line in lines))
