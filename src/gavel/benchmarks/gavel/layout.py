"""GAVEL rows (a Hub dataset, ``gavel data convert``'s Parquet) as the loader's JSONL and images.

``data.jsonl`` + the images under ``images/``, at the paths the rows name (a path that does not
start with ``images/`` is placed under it). The writer only places records and files; checking
them stays with the loader (:class:`~gavel.benchmarks.gavel.data.GavelLoader`), which then
reads the result exactly as it reads local data.
"""

from __future__ import annotations

from pathlib import Path

from gavel.benchmarks.layout.files import LineFile, MediaFiles, content_name
from gavel.benchmarks.layout.media import Media, read_media
from gavel.benchmarks.layout.row import Row
from gavel.errors import DataError
from gavel.io.jsonl import parse_json
from gavel.io.safe_paths import UnsafePath, safe_relative

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


def image_name(media: Media) -> str:
    """Where a GAVEL image goes: its own path under ``images/`` (``images/x.png`` as it is,
    ``x.png`` as ``images/x.png``), else a name from its content. Nothing but ``images/`` is
    ever written beside the data file, whatever names the rows give (``.ssh/…``, ``bin/…``)."""
    try:
        relative = safe_relative(media.name)
    except UnsafePath:
        return content_name(media, IMAGES)
    return relative if relative.startswith(f"{IMAGES}/") else f"{IMAGES}/{relative}"


class GavelLayout:
    """``data.jsonl`` and its images, as ``gavel data convert`` and the GAVEL loader expect."""

    def __init__(
        self, out: Path, root: Path, bound: Path | None = None, data_name: str = "data.jsonl"
    ):
        self.out, self.root, self.bound = out, root, bound
        self.files = MediaFiles(out)
        self.lines = LineFile(out / data_name)

    def add(self, row: Row) -> None:
        values = dict(row.values)
        media = read_media(row, "image", self.root, self.bound)
        if media is None:
            raise row.fail("image", "no image")
        relative = image_name(media)
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
        self.lines.write(record, row)

    def finish(self) -> tuple[Path, Path]:
        self.lines.close()
        return self.lines.path, self.out

    def abort(self) -> None:
        self.lines.close()


def check(data: Path, image_root: Path) -> None:
    """Load the written copy as the GAVEL commands will (every line checked)."""
    from gavel.benchmarks.gavel.data import GavelLoader

    for _ in GavelLoader(data, image_root):
        pass
