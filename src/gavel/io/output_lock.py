"""One writer per output file: an advisory lock beside it, held while a run writes it.

Two runs appending to one predictions file would both skip the ids they read at their start
and both ask the rest, writing every such sample twice; two scorings renaming their files
into one folder could leave a results.json beside another run's per-sample scores. So every
writer of an output (a generation, a scoring, each runner) holds :func:`exclusive` on it, and
a second process is refused at once, naming the file and the process that holds it.

Why this way:

- **A lock file beside the output** (``pred.jsonl`` -> ``.pred.jsonl.lock``), not a lock on the
  output itself: outputs are replaced by renaming a new file over them (error lines taken out,
  results.json staged), and a lock on the old file would not hold the new one.
- **flock**, which the kernel releases when the holder's last descriptor closes, however it
  ends: a run killed with SIGKILL (or a machine that restarted) blocks nobody, and the next run
  needs no cleanup. The file only says who holds it (pid, host, since when), for the message;
  what it says is never trusted to decide anything.
- **The holder removes the file when done**, so a finished run leaves nothing behind. A process
  that opened the file just before it was removed may then lock a file no one else can find:
  after locking, it checks that the path still names the file it locked, and tries again if not.
- **Re-entrant within a process**: a generation holds the lock of its predictions file and the
  runner it calls takes it again, as a scoring's judge does under it. Threads of one process are
  one writer.
"""

from __future__ import annotations

import errno
import functools
import inspect
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from gavel.errors import GavelError

log = logging.getLogger(__name__)

#: Errors of a file system that has no locks (some network and FUSE file systems).
_NO_LOCKS = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL}
#: How long a refused process waits for the holder to have written who it is.
_RECORD_WAIT_S = 0.5


class OutputBusy(GavelError):
    """Another process holds the output's lock; ``holder`` is what its lock file says."""

    def __init__(self, path: Path, holder: dict[str, object]):
        self.path = path
        self.holder = holder
        super().__init__(
            f"{path} is being written by another gavel process ({describe(holder)}); two "
            "writers would mix their lines. Wait for it to finish (or stop it), or write to "
            "another file; nothing was written"
        )


def describe(holder: dict[str, object]) -> str:
    """``pid 4242 on node1, since 2025-06-01 12:00:03 UTC``, as far as the record tells."""
    if not holder.get("pid"):
        return "which one it has not recorded yet"
    text = f"pid {holder['pid']}"
    if holder.get("host"):
        text += f" on {holder['host']}"
    if holder.get("since"):
        text += f", since {holder['since']}"
    return text


def lock_path(path: str | Path) -> Path:
    """``runs/pred.jsonl`` -> ``runs/.pred.jsonl.lock``."""
    path = Path(path)
    return path.parent / f".{path.name}.lock"


@dataclass
class _Held:
    fd: int | None  # None: the file system has no locks, nothing is held
    depth: int = 1
    made: list[Path] = field(default_factory=list)


_held: dict[str, _Held] = {}
_guard = threading.Lock()


@contextmanager
def exclusive(path: str | Path) -> Iterator[None]:
    """Hold the lock of the output ``path`` for the block; :class:`OutputBusy` when another
    process holds it. The folder is made when missing (and removed again, when the block
    leaves it empty); an OS error naming that folder when it cannot be written."""
    path = Path(path)
    key = _key(path)
    with _guard:
        held = _held.get(key)
        if held is not None:
            held.depth += 1
        else:
            made = _make_folders(path.parent)
            try:
                fd = _acquire(path)
            except BaseException:
                _remove_empty(made)
                raise
            held = _held[key] = _Held(fd, made=made)
    try:
        yield
    finally:
        with _guard:
            held.depth -= 1
            if held.depth == 0:
                del _held[key]
                _release(path, held)


Writer = TypeVar("Writer", bound=Callable[..., Any])


def writes_output(parameter: str) -> Callable[[Writer], Writer]:
    """Decorate a function (or coroutine function) that writes the file its argument
    ``parameter`` names: the call holds :func:`exclusive` on it, so each runner refuses a
    second process however it is called (from a generation, which holds the lock already, or
    directly from Python)."""

    def decorate(function: Writer) -> Writer:
        signature = inspect.signature(function)

        def output(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Path:
            return Path(signature.bind_partial(*args, **kwargs).arguments[parameter])

        if inspect.iscoroutinefunction(function):

            @functools.wraps(function)
            async def locked_async(*args: Any, **kwargs: Any) -> Any:
                with exclusive(output(args, kwargs)):
                    return await function(*args, **kwargs)

            return cast(Writer, locked_async)

        @functools.wraps(function)
        def locked(*args: Any, **kwargs: Any) -> Any:
            with exclusive(output(args, kwargs)):
                return function(*args, **kwargs)

        return cast(Writer, locked)

    return decorate


def _key(path: Path) -> str:
    return os.path.join(os.path.realpath(path.parent), path.name)


def _make_folders(folder: Path) -> list[Path]:
    """Make ``folder`` and its missing parents; the ones made, outermost first. A folder that
    cannot be made is left for opening the lock file to name."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    made = []
    for each in reversed(missing):
        try:
            each.mkdir()
        except FileExistsError:
            continue  # made by another process meanwhile (or a file: named below)
        except OSError:
            break
        made.append(each)
    return made


def _remove_empty(made: list[Path]) -> None:
    for folder in reversed(made):
        try:
            folder.rmdir()
        except OSError:  # something was written there: kept
            return


def _acquire(path: Path) -> int | None:
    import fcntl

    lock = lock_path(path)
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except OSError as error:  # a read-only folder, a file where a folder goes: the folder
            raise OSError(error.errno, error.strerror, str(path.parent)) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise OutputBusy(path, holder) from None
        except OSError as error:
            os.close(fd)
            if error.errno not in _NO_LOCKS:
                raise OSError(error.errno, error.strerror, str(lock)) from None
            log.warning("%s: the file system cannot lock files (%s); a second run into this "
                        "file at the same time would not be stopped", lock, error.strerror)  # fmt: skip
            _unlink_if_ours(lock, None)
            return None
        if _names(lock, fd):
            break
        os.close(fd)  # the holder removed it as we opened it: take the file now there
    _record(fd)
    return fd


def _names(lock: Path, fd: int) -> bool:
    """Whether ``lock`` still names the open file ``fd``."""
    try:
        named = os.stat(lock)
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


def _record(fd: int) -> None:
    """Write who holds the lock; a full disk only leaves the record empty (the lock is held
    all the same)."""
    since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    record = {"pid": os.getpid(), "host": socket.gethostname(), "since": since}
    with suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(record).encode() + b"\n", 0)


def _read_holder(fd: int) -> dict[str, object]:
    deadline = time.monotonic() + _RECORD_WAIT_S
    while True:
        data = os.pread(fd, 4096, 0)
        try:
            holder = json.loads(data)
        except ValueError:  # not written yet (or being rewritten)
            holder = None
        if isinstance(holder, dict):
            return holder
        if time.monotonic() >= deadline:
            return {}
        time.sleep(0.02)


def _unlink_if_ours(lock: Path, fd: int | None) -> None:
    if fd is not None and not _names(lock, fd):
        return
    with suppress(OSError):  # a folder made read-only meanwhile: the next run takes it over
        lock.unlink()


def _release(path: Path, held: _Held) -> None:
    if held.fd is not None:
        _unlink_if_ours(lock_path(path), held.fd)  # while still locked: see the module's notes
        os.close(held.fd)
    _remove_empty(held.made)
