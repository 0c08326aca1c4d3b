"""The published DetailVerifyBench rows (``zyxhhnkh/DetailVerifyBench``) as the loader's JSONL
and image folder.

``data.jsonl`` (every field but ``image``, as published) + the images at
``images/<category>/<filename>`` (real_test) or ``images/<name of image_path>``
(synthetic_test), where the loader looks for them. A row without an image cell finds its image
in the repository (:attr:`DetailVerifyLayout.IMAGE_FOLDERS`).
"""

from __future__ import annotations

import posixpath
from pathlib import Path

from gavel.benchmarks.layout.files import LineFile, MediaFiles, plain
from gavel.benchmarks.layout.media import Media, dataset_file, read_media
from gavel.benchmarks.layout.row import Row

#: The folder the images are written under, beside ``data.jsonl``.
IMAGES = "images"


class DetailVerifyLayout:
    """The published DetailVerifyBench rows as the loader's JSONL and image folder."""

    #: Where a row without an image cell may find its image in the repository.
    IMAGE_FOLDERS = ("", "test", "images", "image")

    def __init__(self, out: Path, root: Path, bound: Path | None = None):
        self.out, self.root, self.bound = out, root, bound or root
        self.images = out / IMAGES
        self.files = MediaFiles(self.images)
        self.lines = LineFile(out / "data.jsonl")

    def _target(self, row: Row) -> str:
        values = row.values
        if values.get("filename") is not None or values.get("GT_description") is not None:
            filename, category = values.get("filename"), values.get("category")
            if not plain(filename):
                raise row.fail("filename", f"not a plain file name: {filename!r}")
            if not plain(category):
                raise row.fail("category", f"not a plain folder name: {category!r}")
            return f"{category}/{filename}"
        if values.get("image_path") is not None:
            path = values["image_path"]
            base = posixpath.basename(str(path).replace("\\", "/"))
            if not plain(base):
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
        self.lines.write({k: v for k, v in row.values.items() if k != "image"}, row)

    def _image_in_repository(self, row: Row, target: str) -> Media:
        for folder in self.IMAGE_FOLDERS:
            candidate = self.root / folder / target
            if candidate.is_file():
                return Media(target, source=dataset_file(candidate, self.bound, row, "image"))
        raise row.fail("image", f"no image cell, and no file {target!r} in the repository")

    def finish(self) -> tuple[Path, Path]:
        self.lines.close()
        return self.lines.path, self.images

    def abort(self) -> None:
        self.lines.close()


def check(data: Path, image_root: Path) -> None:
    """Load the written copy as the DetailVerifyBench commands will (every line checked)."""
    from gavel.benchmarks.detailverify.data import DetailVerifyLoader

    for _ in DetailVerifyLoader(data):
        pass
