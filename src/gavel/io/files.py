"""Writing result files so that a crash never leaves a half-written one behind."""

from __future__ import annotations

import errno
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any


def _read_umask() -> int:
    mask = os.umask(0)  # the only way to read it; done once, at import, before any threads
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def plain_mode(fd: int) -> None:
    """Give a temporary file (0600) the mode a newly created file gets (0666 less the umask),
    so a file renamed into place is as readable as one written directly."""
    os.fchmod(fd, 0o666 & ~_UMASK)


def _named(error: OSError, path: Path) -> OSError:
    """The same error naming the file it was about (a failed ``write`` names none)."""
    if error.filename is not None:
        return error
    return OSError(error.errno, error.strerror or str(error), str(path))


def stage_bytes(path: str | Path, payload: bytes) -> Path:
    """Write ``payload`` to a temporary file beside ``path`` (flushed to disk) and return it.

    Everything that can fail for lack of room or rights fails here, before the target is
    touched; :func:`commit` then only renames. OS errors name ``path``.
    """
    return stage_chunks(path, (payload,))[0]


def stage_chunks(path: str | Path, chunks: Iterable[bytes]) -> tuple[Path, str]:
    """:func:`stage_bytes` for a payload given piece by piece, so that it is never whole in
    memory (a million per-sample scores); returns the temporary file and the SHA-256 of what
    it holds, which a summary written after it can name."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise _named(error, path) from None
    try:
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as error:  # a read-only folder: named, not the temporary name it refused
        raise OSError(error.errno, error.strerror or str(error), str(path.parent)) from None
    digest = hashlib.sha256()
    try:
        plain_mode(fd)
        with os.fdopen(fd, "wb") as handle, _Hashing(digest) as hashing:
            for chunk in chunks:
                hashing.update(chunk)
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException as error:
        Path(temp).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise _named(error, path) from None
        raise
    return Path(temp), digest.hexdigest()


class _Hashing:
    """A digest updated chunk by chunk while the chunk before is written: from the second
    chunk on, in a thread of its own (hashlib and a file's write both let other threads run),
    so a file of hundreds of MB costs the slower of the two, not their sum. A payload of one
    chunk is hashed here, without a thread."""

    def __init__(self, digest: Any):
        self._digest = digest
        self._thread: ThreadPoolExecutor | None = None
        self._pending: Future[None] | None = None
        self._hashed_first = False

    def update(self, chunk: bytes) -> None:
        if not self._hashed_first:
            self._digest.update(chunk)
            self._hashed_first = True
            return
        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix="gavel-digest")
        if self._pending is not None:
            self._pending.result()  # one chunk at a time: the digest takes them in order
        self._pending = self._thread.submit(self._digest.update, chunk)

    def __enter__(self) -> _Hashing:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        if self._thread is not None:
            self._thread.shutdown(wait=True)  # the last chunk hashed, even after an error
        if self._pending is not None and kind is None:
            self._pending.result()


def commit(staged: Sequence[tuple[Path, Path]]) -> None:
    """Rename each staged ``(temporary, target)`` over its target, in order."""
    for done, (temp, path) in enumerate(staged):
        try:
            os.replace(temp, path)
        except OSError as error:  # named by the target: the temporary name means nothing
            discard(staged[done:])
            raise OSError(error.errno, error.strerror or str(error), str(path)) from None


def discard(staged: Sequence[tuple[Path, Path]]) -> None:
    for temp, _ in staged:
        temp.unlink(missing_ok=True)


class StagedFiles:
    """Files staged one at a time and renamed into place as one change: the steps of
    :func:`write_together`, for a caller whose last file names the SHA-256 of the ones staged
    before it. Use it as a context manager: leaving the block by an exception discards
    everything staged, and nothing is renamed until :meth:`commit`."""

    def __init__(self, targets: Sequence[str | Path]):
        for path in targets:  # the one thing a rename could still trip over, checked first
            if Path(path).is_dir():
                raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        self._staged: list[tuple[Path, Path]] = []

    def add(self, path: str | Path, payload: bytes) -> None:
        self._staged.append((stage_bytes(path, payload), Path(path)))

    def add_chunks(self, path: str | Path, chunks: Iterable[bytes]) -> str:
        """Stage a file given piece by piece; its SHA-256."""
        temp, sha256 = stage_chunks(path, chunks)
        self._staged.append((temp, Path(path)))
        return sha256

    def commit(self, before_commit: Callable[[], None] | None = None) -> None:
        """Run ``before_commit`` (its failure changes nothing), then rename every staged file
        in the order staged."""
        if before_commit is not None:
            before_commit()
        staged, self._staged = self._staged, []
        commit(staged)

    def __enter__(self) -> StagedFiles:
        return self

    def __exit__(self, kind: object, *rest: object) -> None:
        discard(self._staged)
        self._staged = []


def write_together(
    files: Sequence[tuple[str | Path, bytes]], before_commit: Callable[[], None] | None = None
) -> None:
    """Replace several files as one change, as far as a file system allows.

    Every file is staged first, so a full disk, a file-size limit or a read-only folder leaves
    all of them as they were; ``before_commit`` (say, appending to a ledger) runs after that,
    and its failure also changes nothing. Then the files are renamed in the order given: put
    the per-sample files first and the summary that names their SHA-256 last, so that even a
    crash between two renames leaves a pair readers can tell apart.
    """
    with StagedFiles([path for path, _ in files]) as staged:
        for path, payload in files:
            staged.add(path, payload)
        staged.commit(before_commit)


def atomic_write_bytes(path: str | Path, payload: bytes) -> None:
    """Write to a temporary file in the same folder, then rename over the target.

    The file gets the usual permissions (0666 less the umask), not the 0600 of a temporary file.
    """
    write_together([(path, payload)])


def atomic_write_lines(path: str | Path, lines) -> None:
    atomic_write_bytes(path, b"".join(line + b"\n" for line in lines))


def append_line(path: str | Path, line: bytes) -> None:
    """Append one line to a log file; a failed write cuts the file back to where it was, so a
    full disk never leaves half a line behind (nor an empty file it had just made)."""
    path = Path(path)
    payload = line + b"\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        made = not path.exists()
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    except OSError as error:
        raise _named(error, path) from None
    try:
        start = os.lseek(fd, 0, os.SEEK_END)
        try:
            written = 0
            while written < len(payload):
                written += os.write(fd, payload[written:])
        except OSError as error:
            os.ftruncate(fd, start)
            if made and start == 0:
                path.unlink(missing_ok=True)
            raise _named(error, path) from None
    finally:
        os.close(fd)


class AppendFile:
    """A log file opened for appending whose OS errors name it.

    A failed ``write`` or ``fsync`` says only "No space left on device"; the runners append
    answers as they arrive, and the user needs to know which file could not take them.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self._handle = self.path.open("ab")
        except OSError as error:
            raise _named(error, self.path) from None

    def write(self, payload: bytes) -> None:
        try:
            self._handle.write(payload)
        except OSError as error:
            raise _named(error, self.path) from None

    def flush(self) -> None:
        try:
            self._handle.flush()
        except OSError as error:
            raise _named(error, self.path) from None

    def sync(self) -> None:
        """Flush and fsync: the lines written so far survive a crash."""
        self.flush()
        try:
            os.fsync(self._handle.fileno())
        except OSError as error:
            raise _named(error, self.path) from None

    def close(self) -> None:
        try:
            self._handle.close()
        except OSError as error:
            raise _named(error, self.path) from None

    def __enter__(self) -> AppendFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def close_synced(handle: AppendFile) -> OSError | None:
    """Sync and close an appended file; the error (naming it), if any, returned rather than
    raised, so a caller cleaning up after another error neither skips the rest of its cleanup
    nor hides that first error behind this one."""
    try:
        handle.sync()
    except OSError as error:
        failed: OSError | None = error
    else:
        failed = None
    try:
        handle.close()
    except OSError as error:
        failed = failed or error
    return failed
