"""The one way a name that comes from data becomes a path.

A dataset card, a row of a Parquet file, a state file or a flag is written by someone else, and
a name in it (a config, a split, an image's path) must never make gavel write or read outside
the folder it was pointed at. Every such name passes through one of these checks first:

- :func:`safe_component`: one file or folder name (no separator, not ``.`` or ``..``);
- :func:`safe_relative`: a relative path that stays inside its root once normalized;
- :func:`path_inside`: that path joined to a root, also checked after symlinks are followed;
- :func:`read_inside`: an existing file whose real location (symlinks followed) is inside a
  folder, for what is read.

Each raises :class:`UnsafePath` with a message naming the value, for the caller to turn into
an error that names the file, line and field it came from.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path

#: Characters no name from data may hold: NUL and the other control characters (a newline in
#: a file name breaks every listing that shows it).
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
#: A Windows drive (``C:``): absolute there, whatever the platform reading the data.
_DRIVE = re.compile(r"^[A-Za-z]:")
#: Already normal: no ``..``, ``.``, empty part, backslash, colon or leading ``/``.
_PLAIN_RELATIVE = re.compile(r"(?:[^/\\.:][^/\\:]*/)*[^/\\.:][^/\\:]*")


class UnsafePath(ValueError):
    """A name from data that would lead outside the folder it must stay in."""


def safe_component(name: object, what: str = "name") -> str:
    """``name`` as one file or folder name: non-empty, no ``/`` or ``\\``, no control
    characters, not ``.`` or ``..``; else :class:`UnsafePath`."""
    if not isinstance(name, str) or not name.strip() or _CONTROL.search(name):
        raise UnsafePath(f"{what} {name!r} is empty or holds control characters")
    if name in (".", "..") or "/" in name or "\\" in name:
        raise UnsafePath(f"{what} {name!r} is not a single file or folder name")
    return name


def safe_relative(name: object, what: str = "path", root: str = "the data root") -> str:
    """``name`` normalized as a relative POSIX path that cannot leave its root; else
    :class:`UnsafePath`. A backslash counts as a separator (data written on Windows)."""
    if not isinstance(name, str) or not name or _CONTROL.search(name):
        raise UnsafePath(f"empty or invalid {what}")
    if _PLAIN_RELATIVE.fullmatch(name):
        return name
    candidate = name.replace("\\", "/")
    if candidate.startswith("/") or _DRIVE.match(candidate):
        raise UnsafePath(f"absolute {what} {name!r} is not allowed; give it relative to {root}")
    normalized = posixpath.normpath(candidate)
    if normalized in (".", "..") or normalized.startswith("../"):
        raise UnsafePath(f"{what} {name!r} escapes {root}")
    return normalized


def _within(path: Path, folder: Path) -> bool:
    real, bound = os.path.realpath(path), os.path.realpath(folder)
    return real == bound or real.startswith(bound.rstrip(os.sep) + os.sep)


def path_inside(root: Path, name: object, what: str = "path") -> Path:
    """``root / name`` for a ``name`` that :func:`safe_relative` accepts and whose target,
    symlinks followed as far as they exist, is still inside ``root``."""
    path = root / safe_relative(name, what, f"{root}")
    if not _within(path, root):
        raise UnsafePath(f"{what} {name!r} leads outside {root} (through a symbolic link)")
    return path


def read_inside(path: Path, folder: Path, what: str = "file") -> Path:
    """``path`` when its real location (symlinks followed) is inside ``folder``; a file that
    links out of the dataset is refused rather than read."""
    if not _within(path, folder):
        raise UnsafePath(
            f"{what} {str(path)!r} is a symbolic link to {os.path.realpath(path)!r}, outside "
            f"{folder}"
        )
    return path
