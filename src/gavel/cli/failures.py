"""Turning an exception that escaped a command into one line for the user.

gavel's own errors (:class:`~gavel.errors.GavelError`) already carry their message. What is left
is what the operating system says (a read-only folder, a full disk, a file-size limit, a path
that is a folder) and what nobody expected. The first kind is the user's to fix, so it gets a
message naming the path and no traceback. The second is a bug: it still gets one line, with the
exception's type, and ``GAVEL_DEBUG=1`` shows the traceback to report it.
"""

from __future__ import annotations

import errno
import os
import sqlite3

import click

#: Set (to anything but "" or "0") to see the traceback of an unexpected error.
DEBUG_VARIABLE = "GAVEL_DEBUG"

#: Exit status of an operating-system error and of an unexpected error (a bug).
OS_ERROR_EXIT = 2
BUG_EXIT = 3

_HINTS = {
    errno.ENOSPC: "the disk is full",
    errno.EFBIG: "the file-size limit was reached",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EISDIR: "it is a folder, not a file",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.ENOENT: "no such file or folder",
    errno.EEXIST: "it already exists",
    errno.ENAMETOOLONG: "the name is too long",
    errno.EDQUOT: "the disk quota is exceeded",
}


def debugging() -> bool:
    return os.environ.get(DEBUG_VARIABLE, "") not in ("", "0")


def os_error_message(error: OSError) -> str:
    """``cannot write out/results.json: the disk is full (No space left on device)``."""
    reason = error.strerror or str(error) or type(error).__name__
    hint = _HINTS.get(error.errno) if error.errno is not None else None
    text = f"{hint} ({reason})" if hint and hint.lower() != reason.lower() else reason
    paths = [p for p in (error.filename, error.filename2) if p is not None]
    if not paths:
        return text
    return " -> ".join(os.fsdecode(p) for p in paths) + f": {text}"


def report_failure(error: Exception) -> int:
    """Print one line for an exception no command handled; the exit status to use.

    Re-raises the exception itself when ``GAVEL_DEBUG`` is set and the error is unexpected.
    """
    if isinstance(error, OSError):
        _say(f"error: {os_error_message(error)}")
        return OS_ERROR_EXIT
    if isinstance(error, MemoryError):
        _say("error: out of memory")
        return OS_ERROR_EXIT
    if isinstance(error, sqlite3.DatabaseError):
        _say(f"error: database: {error}")
        return OS_ERROR_EXIT
    if debugging():
        raise error
    text = str(error).splitlines()[0][:300] if str(error) else ""
    _say(
        f"error: internal error ({type(error).__name__}{': ' + text if text else ''}); "
        f"this is a bug in gavel: rerun with {DEBUG_VARIABLE}=1 to see the traceback and "
        "please report it"
    )
    return BUG_EXIT


def _say(line: str) -> None:
    """Print an error line, never with the password of a URL in it."""
    from gavel.manifest import redact_userinfo

    click.echo(redact_userinfo(line), err=True)
