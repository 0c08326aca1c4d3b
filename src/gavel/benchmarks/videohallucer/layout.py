"""VideoHallucer rows of pairs (a Hub dataset, Parquet) as the release's folders.

One row is one pair, either nested as the release's JSON (``basic`` and ``hallucination``
structs of ``video``, ``question``, ``answer``) or flat (``basic_video``, ``basic_question``,
…), with ``category`` and an optional ``type``; the videos are ``Video`` cells. Written as the
release lays out its files: ``<category>/<category>.json`` (the pairs in row order) beside
``<category>/videos/``. A repository already in that layout is read in place
(:func:`release_files`).
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from gavel.benchmarks.layout.files import MediaFiles, content_name, json_line, plain
from gavel.benchmarks.layout.media import read_media
from gavel.benchmarks.layout.row import Row
from gavel.benchmarks.videohallucer.data import CATEGORIES, SIDES
from gavel.errors import DataError

#: The two questions of a pair, as rows name them (``basic_video``, ``hallucination.video``).
PAIR_SIDES = SIDES
_FIELDS = ("video", "question", "answer", "explanation")


def pair_side(values: dict[str, Any], side: str) -> dict[str, Any] | None:
    """One question of a VideoHallucer pair row: its struct (``basic: {video, ...}``), or its
    flat columns (``basic_video``, ...); None when the side is neither (a value of another
    kind). The layout below and lmms-eval's documents read rows through this."""
    nested = values.get(side)
    if isinstance(nested, dict):
        return nested
    if nested is not None:
        return None
    return {name: values.get(f"{side}_{name}") for name in _FIELDS}


class VideoHallucerLayout:
    """Rows of pairs as the release folder: one JSON list per category, videos beside it."""

    def __init__(self, out: Path, root: Path, bound: Path | None = None):
        self.out, self.root, self.bound = out, root, bound
        self.files = MediaFiles(out)
        self._handles: dict[str, TextIO] = {}
        out.mkdir(parents=True, exist_ok=True)

    def _side(self, row: Row, side: str) -> dict[str, Any]:
        found = pair_side(row.values, side)
        if found is None:
            raise row.fail(side, "expected a struct of video, question and answer")
        return found

    def add(self, row: Row) -> None:
        category = row.values.get("category")
        if category not in CATEGORIES:
            raise row.fail("category", f"{category!r} is not one of: {', '.join(CATEGORIES)}")
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
            relative = f"{category}/videos/{name}" if plain(name) else None
            if relative is None:
                relative = content_name(media, f"{category}/videos")
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
        handle.write(json_line(pair, row).rstrip("\n"))

    def finish(self) -> tuple[Path, Path]:
        for handle in self._handles.values():
            handle.write("\n]\n")
            handle.close()
        return self.out, self.out

    def abort(self) -> None:
        for handle in self._handles.values():
            handle.close()


def check(data: Path, image_root: Path) -> None:
    """Load the written folder as the VideoHallucer commands will (an error names the category
    file and the pair: ``[index].side.field``)."""
    from gavel.benchmarks.videohallucer.data import load_dataset

    load_dataset(data)


def release_files(folder: Path) -> Sequence[Path] | None:
    """The annotation files when ``folder`` is in the release's own layout (``<category>/
    <category>.json`` beside ``<category>/videos/``), read in place; None when it holds rows."""
    from gavel.benchmarks.videohallucer.data import annotation_files

    try:
        return [path for _, path in annotation_files(folder)]
    except DataError:
        return None
