"""What every layout does with the files it writes: records as JSON lines, media placed once
under a folder by name, names made from content when a row gives none.

Each keeps only names and hashes of what it wrote, so memory stays flat however many rows and
images pass through; every name a row gives becomes a path through
:mod:`gavel.io.safe_paths`, so nothing is written outside the layout's folder.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, TextIO

from gavel.benchmarks.layout.media import Media
from gavel.benchmarks.layout.row import Row
from gavel.io.safe_paths import UnsafePath, path_inside, safe_component


def json_line(record: dict[str, Any], row: Row) -> str:
    """``record`` as one JSON line; a value JSON cannot hold is an error naming ``row``."""
    try:
        return json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n"
    except (TypeError, ValueError) as error:
        raise row.fail(None, f"cannot be written as JSON ({error})") from None


class LineFile:
    """A JSON Lines file written one record at a time (a layout's data file)."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._handle: TextIO = path.open("w", encoding="utf-8")

    def write(self, record: dict[str, Any], row: Row) -> None:
        self._handle.write(json_line(record, row))

    def close(self) -> None:
        self._handle.close()


def plain(name: Any) -> bool:
    """Whether ``name`` may be one file or folder name (:func:`safe_component`)."""
    try:
        safe_component(name)
    except UnsafePath:
        return False
    return True


def content_name(media: Media, folder: str) -> str:
    """A name for a file the row gives no usable name for: its content's hash."""
    if media.data is not None:
        digest = hashlib.sha256(media.data).hexdigest()[:20]
    else:
        digest = hashlib.sha256(str(media.source).encode()).hexdigest()[:20]
    return f"{folder}/{digest}{media.suffix()}"


class MediaFiles:
    """Media written under a folder, once per name; the same name twice must be the same file."""

    def __init__(self, root: Path):
        self.root = root
        self._written: dict[str, str] = {}

    def place(self, media: Media, relative: str, row: Row, field_name: str) -> None:
        digest = (
            hashlib.sha256(media.data).hexdigest()
            if media.data is not None
            else f"file:{media.source}"
        )
        known = self._written.get(relative)
        if known is not None:
            if known != digest:
                raise row.fail(
                    field_name, f"{relative!r} is named by an earlier row with different content"
                )
            return
        try:
            target = path_inside(self.root, relative)
        except UnsafePath as error:
            raise row.fail(field_name, str(error)) from None
        media.write(target)
        self._written[relative] = digest
