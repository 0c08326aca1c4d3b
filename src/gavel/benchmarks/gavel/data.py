"""Loading and validating GAVEL data files (docs/data-format.md describes the format).

Every line is decoded and checked as it is read; nothing but the set of ids seen so far is
kept, so validating a file of any length takes bounded memory. The first problem raises a
:class:`~gavel.errors.DataError` naming file, line and field; :func:`validate_file` instead
collects every problem.
"""

from __future__ import annotations

import math
import os
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import msgspec

from gavel.errors import DataError
from gavel.geometry import MAX_SIDE, clip_box, is_degenerate
from gavel.io.id_index import IdIndex
from gavel.io.jsonl import HashingReader, decode_line
from gavel.io.safe_paths import UnsafePath, safe_relative
from gavel.records import Category, GavelSample

CATEGORIES = {c.value for c in Category}
MAX_TEXT = 20_000
#: Gold boxes one sample may have: scoring a sample costs time in the square of its boxes
#: (gavel.overlap), and no caption's error has anywhere near this many objects.
MAX_BOXES = 500


class GavelLine(msgspec.Struct, kw_only=True, gc=False):
    """A line as written in the file (boxes as ``x, y, w, h``; size may be absent)."""

    id: str
    image: str
    caption: str
    hallucinated: bool
    category: str | None = None
    explanation: str = ""
    boxes: list[list[float]] = msgspec.field(default_factory=list)
    width: int | None = None
    height: int | None = None
    source: str | None = None
    split: str | None = None


_DECODER = msgspec.json.Decoder(GavelLine)


def safe_relative_path(image: str) -> tuple[str | None, str | None]:
    """Normalize an image path that must stay inside the data root: ``(path, error)``."""
    try:
        return safe_relative(image, "image path"), None
    except UnsafePath as error:
        return None, str(error)


@dataclass
class LoadReport:
    """What the loader fixed or looked up on the way, for the result's warnings."""

    samples: int = 0
    clipped_boxes: int = 0
    sizes_read_from_images: int = 0


class GavelLoader:
    """Iterate a GAVEL JSONL file as validated :class:`GavelSample` records."""

    def __init__(
        self,
        path: str | Path,
        image_root: str | Path | None = None,
        lines: Iterable[tuple[int, bytes]] | None = None,
        *,
        find_repeats: bool = True,
    ):
        """``lines``: ``(line number, bytes)`` of a piece of the file to read instead of all of
        it (its line numbers the file's own); the file's hash is then not computed.
        ``find_repeats=False`` leaves repeated ids to a caller that joins pieces' ids
        (``IdIndex.joined`` finds them), which costs less than looking each one up here."""
        self.path = Path(path)
        self.image_root = Path(image_root) if image_root is not None else self.path.parent
        self.report = LoadReport()
        self._reader: Iterable[tuple[int, bytes]] = (
            HashingReader(self.path) if lines is None else lines
        )
        #: Each id read, by position among the samples (their order in the file), and each
        #: position's line: what the duplicate check needs, kept compact so scoring can use
        #: it to find a prediction's sample (gavel.io.id_index).
        self._ids = IdIndex(lookups=find_repeats)
        self._lines = array("q")

    @property
    def sha256(self) -> str:
        assert isinstance(self._reader, HashingReader), "a piece of a file has no hash"
        return self._reader.sha256

    def __iter__(self) -> Iterator[GavelSample]:
        for number, line in self._reader:
            yield self.parse(number, line)

    def lines(self) -> Iterator[tuple[int, bytes]]:
        return iter(self._reader)

    def fail(self, line: int, field_name: str | None, message: str) -> DataError:
        return DataError(self.path, line, field_name, message)

    def parse(self, number: int, line: bytes) -> GavelSample:
        raw = decode_line(_DECODER, self.path, number, line, GavelLine)
        self._check_id(number, raw.id)
        try:
            image = safe_relative(raw.image, "image path")
        except UnsafePath as error:
            raise self.fail(number, "image", str(error)) from None
        self._check_text(number, raw)
        self._check_category(number, raw)
        width, height = self._size(number, raw, image)
        boxes = self._boxes(number, raw, width, height)
        self.report.samples += 1
        return GavelSample(
            id=raw.id,
            image=image,
            caption=raw.caption,
            hallucinated=raw.hallucinated,
            category=raw.category,
            explanation=raw.explanation,
            boxes=boxes,
            width=width,
            height=height,
            source=raw.source,
            split=raw.split,
        )

    @property
    def ids(self) -> IdIndex:
        """Every id read, in file order: ``ids.get(id)`` is its sample's position (0 for the
        first). Scoring finds predictions' samples here, not in a second index of every id."""
        return self._ids

    @property
    def line_numbers(self) -> array:
        """The line of each id in :attr:`ids`, by position."""
        return self._lines

    def _check_id(self, number: int, sample_id: str) -> None:
        if not sample_id.strip():
            raise self.fail(number, "id", "empty id")
        first = self._ids.add(sample_id)
        if first is not None:
            raise self.fail(
                number, "id", f"duplicate id {sample_id!r} (first on line {self._lines[first]})"
            )
        self._lines.append(number)

    def _check_text(self, number: int, raw: GavelLine) -> None:
        if not raw.caption.strip():
            raise self.fail(number, "caption", "empty caption")
        if len(raw.caption) > MAX_TEXT:
            raise self.fail(number, "caption", f"longer than {MAX_TEXT} characters")
        if len(raw.explanation) > MAX_TEXT:
            raise self.fail(number, "explanation", f"longer than {MAX_TEXT} characters")

    def _check_category(self, number: int, raw: GavelLine) -> None:
        if raw.hallucinated:
            if raw.category not in CATEGORIES:
                allowed = ", ".join(c.value for c in Category)
                got = "missing" if raw.category is None else f"unknown category {raw.category!r}"
                raise self.fail(number, "category", f"{got}; expected one of: {allowed}")
        else:
            if raw.category is not None:
                raise self.fail(number, "category", "must be null when hallucinated is false")
            if raw.boxes:
                raise self.fail(number, "boxes", "must be empty when hallucinated is false")

    def _size(self, number: int, raw: GavelLine, image: str) -> tuple[int, int]:
        if raw.width is not None and raw.height is not None:
            if 0 < raw.width <= MAX_SIDE and 0 < raw.height <= MAX_SIDE:
                return raw.width, raw.height
            for name, value in (("width", raw.width), ("height", raw.height)):
                if value <= 0:
                    raise self.fail(number, name, f"must be a positive integer, got {value}")
                if value > MAX_SIDE:
                    raise self.fail(
                        number, name, f"{value:.3g} pixels: no image has a side that long "
                        f"(at most {MAX_SIDE:,})",
                    )  # fmt: skip
            return raw.width, raw.height
        path = self.image_root / image
        root = os.path.realpath(self.image_root)
        if os.path.commonpath([root, os.path.realpath(path)]) != root:
            raise self.fail(number, "image", f"image path {raw.image!r} escapes the data root")
        if not path.is_file():
            raise self.fail(
                number,
                "width",
                f"width/height absent and image {image!r} not found under the data root",
            )
        try:
            from PIL import Image

            from gavel.media.pixels import apply_pixel_limit, too_many_pixels

            apply_pixel_limit()  # above GAVEL_MAX_IMAGE_PIXELS: refused here, naming the line
            with Image.open(path) as img:
                width, height = img.size
        except Image.DecompressionBombError as error:
            raise self.fail(number, "image", too_many_pixels(error)) from None
        except Exception as error:  # Pillow raises many types for unreadable files
            raise self.fail(number, "image", f"cannot read image size ({error})") from None
        self.report.sizes_read_from_images += 1
        return width, height

    def _boxes(
        self, number: int, raw: GavelLine, width: int, height: int
    ) -> list[tuple[float, float, float, float]]:
        if len(raw.boxes) > MAX_BOXES:
            raise self.fail(
                number, "boxes", f"{len(raw.boxes):,} boxes; a sample may have at most {MAX_BOXES}"
            )
        boxes = []
        for index, box in enumerate(raw.boxes):
            if len(box) != 4:
                raise self.fail(
                    number, f"boxes[{index}]", f"expected [x, y, w, h], got {len(box)} numbers"
                )
            x, y, w, h = box
            # The usual box: a positive size, inside the image (and so finite).
            if w > 0 and h > 0 and x >= 0 and y >= 0 and x + w <= width and y + h <= height:
                boxes.append((x, y, x + w, y + h))
                continue
            if not (w > 0 and h > 0 and all(math.isfinite(v) for v in box)):
                raise self.fail(number, f"boxes[{index}]", _box_problem(box))
            xyxy = (x, y, x + w, y + h)
            if x < 0 or y < 0 or x + w > width or y + h > height:
                xyxy, _ = clip_box(xyxy, width, height)
                if is_degenerate(xyxy):
                    raise self.fail(
                        number,
                        f"boxes[{index}]",
                        f"box {box} lies outside the {width}x{height} image",
                    )
                self.report.clipped_boxes += 1
            boxes.append(xyxy)
        return boxes


def _box_problem(box: list[float]) -> str:
    if not all(math.isfinite(v) for v in box):
        return "non-finite number (NaN or Infinity)"
    if box[2] < 0 or box[3] < 0:
        return f"negative width or height in {box}"
    return f"zero-size box {box}"


def load_samples(
    path: str | Path, image_root: str | Path | None = None
) -> tuple[list[GavelSample], GavelLoader]:
    """All samples of a file (the loader is returned for its hash and report)."""
    loader = GavelLoader(path, image_root)
    samples = list(loader)
    if not samples:
        raise DataError(path, None, None, "no samples in file")
    return samples, loader


def validate_file(
    path: str | Path, image_root: str | Path | None = None, *, max_errors: int = 50
) -> tuple[LoadReport, list[DataError]]:
    """Check every line, collecting up to ``max_errors`` problems instead of stopping."""
    loader = GavelLoader(path, image_root)
    errors: list[DataError] = []
    try:
        for number, line in loader.lines():
            try:
                loader.parse(number, line)
            except DataError as error:
                errors.append(error)
                if len(errors) >= max_errors:
                    break
    except DataError as error:  # the file itself cannot be read
        errors.append(error)
    if not errors and loader.report.samples == 0:
        errors.append(DataError(path, None, None, "no samples in file"))
    return loader.report, errors
