"""Images and videos as the Hub stores them, turned into files the loaders can open.

A cell of an ``Image`` or ``Video`` feature is a struct ``{bytes, path}``: the file's bytes
embedded in the Parquet file, or a path to a file of the repository (relative to the data
file's folder, else to the repository's root), or both (the path then only gives the name).
A JSON Lines file may also give the path as a plain string. A path is looked up only inside
the dataset: one that climbs out, or names a symbolic link leading out, is refused.
"""

from __future__ import annotations

import os
import posixpath
import shutil
from dataclasses import dataclass
from pathlib import Path

from gavel.benchmarks.layout.row import Row
from gavel.io.safe_paths import UnsafePath, read_inside, safe_relative

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", ".png"),
    (b"\xff\xd8\xff", ".jpg"),
    (b"GIF8", ".gif"),
    (b"BM", ".bmp"),
    (b"\x1aE\xdf\xa3", ".webm"),  # Matroska too: the video decoder reads both
    (b"\x00\x00\x01\xba", ".mpg"),  # an MPEG program stream
    (b"\x00\x00\x01\xb3", ".mpg"),  # an MPEG-1 video stream
    (b"II*\x00", ".tiff"),
    (b"MM\x00*", ".tiff"),
)
#: The atoms a QuickTime file without an ``ftyp`` may open with.
_QUICKTIME_ATOMS = frozenset({b"moov", b"mdat", b"wide", b"free", b"skip"})


@dataclass(frozen=True)
class Media:
    """One image or video: embedded bytes, or a file to copy; ``name`` is the cell's path."""

    name: str | None
    data: bytes | None = None
    source: Path | None = None

    def suffix(self) -> str:
        """The cell's own suffix, else the one its first bytes say (the loaders tell a video
        from an image by it); ``.bin`` when they say nothing known."""
        if self.name and posixpath.splitext(self.name)[1]:
            return posixpath.splitext(self.name)[1]
        head = self.data[:16] if self.data is not None else _head(self.source)
        if head[4:8] == b"ftyp":
            return ".mov" if head[8:12] == b"qt  " else ".mp4"
        if head[:4] == b"RIFF":
            return {b"WEBP": ".webp", b"AVI ": ".avi"}.get(head[8:12], ".bin")
        known = next((s for magic, s in _MAGIC if head.startswith(magic)), None)
        if known is not None:
            return known
        # An older QuickTime file opens with another atom (checked last: four bytes at an
        # offset say less than a signature at the start).
        return ".mov" if head[4:8] in _QUICKTIME_ATOMS else ".bin"

    def write(self, target: Path) -> None:
        """Put the file at ``target``: the bytes, or a hard link to (else a copy of) the source."""
        target.parent.mkdir(parents=True, exist_ok=True)
        if self.data is not None:
            target.write_bytes(self.data)
            return
        assert self.source is not None
        try:
            os.link(os.path.realpath(self.source), target)
        except OSError:
            shutil.copyfile(self.source, target)


def _head(path: Path | None) -> bytes:
    if path is None:
        return b""
    with open(path, "rb") as handle:
        return handle.read(16)


def dataset_file(path: Path, bound: Path, row: Row, field_name: str) -> Path:
    """``path``, a file a row names, once it is known to be really inside the dataset."""
    try:
        return read_inside(path, bound)
    except UnsafePath as error:
        raise row.fail(field_name, str(error)) from None


def read_media(row: Row, field_name: str, root: Path, bound: Path | None = None) -> Media | None:
    """The image or video in ``row[field_name]`` (None when the cell is empty); a file it
    names must be really inside ``bound`` (default: ``root``)."""
    cell = row.values.get(field_name)
    if cell is None:
        return None
    if isinstance(cell, str):
        cell = {"bytes": None, "path": cell}
    if not isinstance(cell, dict) or not set(cell) <= {"bytes", "path"}:
        raise row.fail(field_name, "expected an Image/Video cell: a struct of bytes and path")
    data, name = cell.get("bytes"), cell.get("path")
    if data is not None and not isinstance(data, bytes):
        raise row.fail(f"{field_name}.bytes", "expected binary data")
    if name is not None and not isinstance(name, str):
        raise row.fail(f"{field_name}.path", "expected a string")
    if data is not None:
        return Media(name or None, data=data)
    if not name:
        raise row.fail(field_name, "neither bytes nor a path")
    try:
        relative = safe_relative(name)
    except UnsafePath as error:
        raise row.fail(f"{field_name}.path", str(error)) from None
    for base in (row.file.parent, root):
        path = base / relative
        if path.is_file():
            source = dataset_file(path, bound or root, row, f"{field_name}.path")
            return Media(relative, source=source)
    raise row.fail(
        f"{field_name}.path",
        f"no bytes embedded and no file {relative!r} in the dataset (looked beside the data "
        "file and at the repository's root)",
    )
