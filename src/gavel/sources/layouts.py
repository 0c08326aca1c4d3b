"""Rows of a dataset written out in the layout a benchmark's loader reads.

One writer per benchmark, each fed rows one at a time and keeping only names and hashes of
what it wrote, so memory stays flat however many rows and images pass through:

- ``gavel``: ``data.jsonl`` + the images under ``images/``, at the paths the rows name (a path
  that does not start with ``images/`` is placed under it);
- ``detailverify``: ``data.jsonl`` (every field but ``image``, as published) + the images at
  ``images/<category>/<filename>`` (real_test) or ``images/<name of image_path>``
  (synthetic_test), where the loader looks for them;
- ``videohallucer``: the release layout, ``<category>/<category>.json`` + ``<category>/videos/``.

The writers only place records and files; checking them stays with the loaders, which then
read the result exactly as they read local data. Every name a row gives becomes a path through
:mod:`gavel.io.safe_paths`, so nothing is written outside the output folder, and a file a row
names is read only when it is really inside the dataset (``bound``).
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from pathlib import Path
from typing import Any, TextIO

from gavel.benchmarks.videohallucer.data import CATEGORIES as VIDEOHALLUCER_CATEGORIES
from gavel.benchmarks.videohallucer.data import SIDES as PAIR_SIDES
from gavel.errors import DataError
from gavel.io.jsonl import parse_json
from gavel.io.safe_paths import UnsafePath, path_inside, safe_component, safe_relative
from gavel.sources.media import Media, dataset_file, read_media
from gavel.sources.rows import Row

#: The fields of a GAVEL line, in the order they are written; ``category`` is written even
#: when null (a clean sample), the others are left out when null.
GAVEL_FIELDS = (
    "id",
    "image",
    "caption",
    "hallucinated",
    "category",
    "explanation",
    "boxes",
    "width",
    "height",
    "source",
    "split",
)
#: A Parquet column holding, as JSON text, the fields of a line that gavel does not know.
EXTRA = "extra"
#: The folder every image of a GAVEL layout is written under, beside ``data.jsonl``.
IMAGES = "images"


def _json_line(record: dict[str, Any], row: Row) -> str:
    try:
        return json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n"
    except (TypeError, ValueError) as error:
        raise row.fail(None, f"cannot be written as JSON ({error})") from None


class _Files:
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


def _content_name(media: Media, folder: str) -> str:
    """A name for a file the row gives no usable name for: its content's hash."""
    if media.data is not None:
        digest = hashlib.sha256(media.data).hexdigest()[:20]
    else:
        digest = hashlib.sha256(str(media.source).encode()).hexdigest()[:20]
    return f"{folder}/{digest}{media.suffix()}"


def _image_name(media: Media) -> str:
    """Where a GAVEL image goes: its own path under ``images/`` (``images/x.png`` as it is,
    ``x.png`` as ``images/x.png``), else a name from its content. Nothing but ``images/`` is
    ever written beside the data file, whatever names the rows give (``.ssh/…``, ``bin/…``)."""
    try:
        relative = safe_relative(media.name)
    except UnsafePath:
        return _content_name(media, IMAGES)
    return relative if relative.startswith(f"{IMAGES}/") else f"{IMAGES}/{relative}"


class GavelLayout:
    """``data.jsonl`` and its images, as ``gavel data convert`` and the GAVEL loader expect."""

    def __init__(
        self, out: Path, root: Path, bound: Path | None = None, data_name: str = "data.jsonl"
    ):
        self.out, self.root, self.bound = out, root, bound
        self.data = out / data_name
        self.files = _Files(out)
        out.mkdir(parents=True, exist_ok=True)
        self._handle: TextIO = self.data.open("w", encoding="utf-8")

    def add(self, row: Row) -> None:
        values = dict(row.values)
        media = read_media(row, "image", self.root, self.bound)
        if media is None:
            raise row.fail("image", "no image")
        relative = _image_name(media)
        self.files.place(media, relative, row, "image")
        record = {}
        for name in GAVEL_FIELDS:
            value = relative if name == "image" else values.pop(name, None)
            if value is not None or name == "category":
                record[name] = value
        values.pop("image", None)
        extra = values.pop(EXTRA, None)
        if isinstance(extra, str) and extra:
            try:  # parse_json refuses deep nesting, long integers and lone surrogates
                fields = parse_json(extra, row.file)
            except DataError as error:
                raise row.fail(EXTRA, error.message) from None
            if not isinstance(fields, dict):
                raise row.fail(EXTRA, "not a JSON object")
            record.update(fields)
        record.update({k: v for k, v in values.items() if v is not None})
        self._handle.write(_json_line(record, row))

    def finish(self) -> tuple[Path, Path]:
        self._handle.close()
        return self.data, self.out

    def abort(self) -> None:
        self._handle.close()


def _plain(name: Any) -> bool:
    """Whether ``name`` may be one file or folder name (:func:`safe_component`)."""
    try:
        safe_component(name)
    except UnsafePath:
        return False
    return True


class DetailVerifyLayout:
    """The published DetailVerifyBench rows as the loader's JSONL and image folder."""

    #: Where a row without an image cell may find its image in the repository.
    IMAGE_FOLDERS = ("", "test", "images", "image")

    def __init__(self, out: Path, root: Path, bound: Path | None = None):
        self.out, self.root, self.bound = out, root, bound or root
        self.data = out / "data.jsonl"
        self.images = out / IMAGES
        self.files = _Files(self.images)
        out.mkdir(parents=True, exist_ok=True)
        self._handle: TextIO = self.data.open("w", encoding="utf-8")

    def _target(self, row: Row) -> str:
        values = row.values
        if values.get("filename") is not None or values.get("GT_description") is not None:
            filename, category = values.get("filename"), values.get("category")
            if not _plain(filename):
                raise row.fail("filename", f"not a plain file name: {filename!r}")
            if not _plain(category):
                raise row.fail("category", f"not a plain folder name: {category!r}")
            return f"{category}/{filename}"
        if values.get("image_path") is not None:
            path = values["image_path"]
            base = posixpath.basename(str(path).replace("\\", "/"))
            if not _plain(base):
                raise row.fail("image_path", f"no file name in {path!r}")
            return base
        raise row.fail(
            None,
            "neither layout: real_test rows have 'filename' and 'GT_description', "
            "synthetic_test rows have 'image_path'",
        )

    def add(self, row: Row) -> None:
        target = self._target(row)
        media = read_media(row, "image", self.root, self.bound)
        if media is None:
            media = self._image_in_repository(row, target)
        self.files.place(media, target, row, "image")
        record = {k: v for k, v in row.values.items() if k != "image"}
        self._handle.write(_json_line(record, row))

    def _image_in_repository(self, row: Row, target: str) -> Media:
        for folder in self.IMAGE_FOLDERS:
            candidate = self.root / folder / target
            if candidate.is_file():
                return Media(target, source=dataset_file(candidate, self.bound, row, "image"))
        raise row.fail("image", f"no image cell, and no file {target!r} in the repository")

    def finish(self) -> tuple[Path, Path]:
        self._handle.close()
        return self.data, self.images

    def abort(self) -> None:
        self._handle.close()


_VH_FIELDS = ("video", "question", "answer", "explanation")


def pair_side(values: dict[str, Any], side: str) -> dict[str, Any] | None:
    """One question of a VideoHallucer pair row: its struct (``basic: {video, ...}``), or its
    flat columns (``basic_video``, ...); None when the side is neither (a value of another
    kind). The layout below and lmms-eval's documents read rows through this."""
    nested = values.get(side)
    if isinstance(nested, dict):
        return nested
    if nested is not None:
        return None
    return {name: values.get(f"{side}_{name}") for name in _VH_FIELDS}


class VideoHallucerLayout:
    """Rows of pairs as the release folder: one JSON list per category, videos beside it.

    A row is one pair, either nested as the release's JSON (``basic`` and ``hallucination``
    structs of ``video``, ``question``, ``answer``) or flat (``basic_video``,
    ``basic_question``, …), with ``category`` and an optional ``type``.
    """

    def __init__(self, out: Path, root: Path, bound: Path | None = None):
        self.out, self.root, self.bound = out, root, bound
        self.files = _Files(out)
        self._handles: dict[str, TextIO] = {}
        out.mkdir(parents=True, exist_ok=True)

    def _side(self, row: Row, side: str) -> dict[str, Any]:
        found = pair_side(row.values, side)
        if found is None:
            raise row.fail(side, "expected a struct of video, question and answer")
        return found

    def add(self, row: Row) -> None:
        category = row.values.get("category")
        if category not in VIDEOHALLUCER_CATEGORIES:
            raise row.fail(
                "category", f"{category!r} is not one of: {', '.join(VIDEOHALLUCER_CATEGORIES)}"
            )
        pair: dict[str, Any] = {}
        for side in PAIR_SIDES:
            values = self._side(row, side)
            nested = isinstance(row.values.get(side), dict)
            field_name = f"{side}.video" if nested else f"{side}_video"
            cell_row = Row(row.file, row.number, {field_name: values.get("video")}, row.is_line)
            media = read_media(cell_row, field_name, self.root, self.bound)
            if media is None:
                raise row.fail(field_name, "no video")
            name = posixpath.basename(media.name or "")
            relative = f"{category}/videos/{name}" if _plain(name) else None
            if relative is None:
                relative = _content_name(media, f"{category}/videos")
            self.files.place(media, relative, row, field_name)
            question: dict[str, Any] = {"video": posixpath.basename(relative)}
            question |= {k: values.get(k) for k in ("question", "answer")}
            if values.get("explanation") is not None:
                question["explanation"] = values["explanation"]
            pair[side] = question
        if row.values.get("type") is not None:
            pair["type"] = row.values["type"]
        self._write(str(category), pair, row)

    def _write(self, category: str, pair: dict[str, Any], row: Row) -> None:
        handle = self._handles.get(category)
        if handle is None:
            path = self.out / category / f"{category}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = self._handles[category] = path.open("w", encoding="utf-8")
            handle.write("[\n")
        else:
            handle.write(",\n")
        handle.write(_json_line(pair, row).rstrip("\n"))

    def finish(self) -> tuple[Path, Path]:
        for handle in self._handles.values():
            handle.write("\n]\n")
            handle.close()
        return self.out, self.out

    def abort(self) -> None:
        for handle in self._handles.values():
            handle.close()


LAYOUTS = {
    "gavel": GavelLayout,
    "detailverify": DetailVerifyLayout,
    "videohallucer": VideoHallucerLayout,
}
