"""What one annotation says, and the server-side check of every submitted one.

The browser's checks are for convenience only: the server validates every saved annotation
against the item's image size, because whatever the client sends (a modified page, a script,
a stale tab) ends up in the exported data.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec

from gavel.records import Category

CORRECT, HALLUCINATED, UNUSABLE = "correct", "hallucinated", "unusable"
VERDICTS = (CORRECT, HALLUCINATED, UNUSABLE)
CATEGORIES = tuple(c.value for c in Category)
MAX_EXPLANATION = 2000
MAX_NOTE = 1000
MAX_BOXES = 50
#: Boxes are stored to 1/100 pixel: finer is noise from the mouse, coarser loses small boxes.
DECIMALS = 2


class Annotation(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The full annotation of an item; every version stores one whole (never a diff).

    ``boxes`` are ``[x, y, w, h]`` in pixels of the original image, as in GAVEL files.
    ``note`` is an optional remark of the reviewer or checker (not exported).
    """

    verdict: str
    explanation: str = ""
    category: str | None = None
    boxes: list[list[float]] = msgspec.field(default_factory=list)
    note: str = ""


class PayloadError(ValueError):
    """A submitted annotation is not acceptable; the message says which field and why."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field


_DECODER = msgspec.json.Decoder(Annotation)


def parse_annotation(value: Any, width: int, height: int) -> Annotation:
    """Validate a submitted annotation (decoded JSON) for an image of ``width`` x ``height``."""
    try:
        annotation = msgspec.convert(value, Annotation)
    except msgspec.ValidationError as error:
        raise PayloadError("annotation", str(error)) from None
    if annotation.verdict not in VERDICTS:
        raise PayloadError("verdict", f"expected one of {', '.join(VERDICTS)}")
    annotation.explanation = annotation.explanation.strip()
    annotation.note = annotation.note.strip()
    if len(annotation.explanation) > MAX_EXPLANATION:
        raise PayloadError("explanation", f"longer than {MAX_EXPLANATION} characters")
    if len(annotation.note) > MAX_NOTE:
        raise PayloadError("note", f"longer than {MAX_NOTE} characters")
    if annotation.verdict == HALLUCINATED:
        if annotation.category not in CATEGORIES:
            raise PayloadError("category", f"pick one of {', '.join(CATEGORIES)}")
        if not annotation.explanation:
            raise PayloadError("explanation", "say what is wrong and what the image shows")
        if not annotation.boxes:
            raise PayloadError("boxes", "draw at least one box around the region showing the error")
    else:
        annotation.category = None
        annotation.boxes = []  # a correct or unusable pair has no error to locate
    if len(annotation.boxes) > MAX_BOXES:
        raise PayloadError("boxes", f"at most {MAX_BOXES} boxes")
    annotation.boxes = [_box(i, box, width, height) for i, box in enumerate(annotation.boxes)]
    return annotation


def _box(index: int, box: list[float], width: int, height: int) -> list[float]:
    """A box clipped to the image; refused when it is not a real box inside the image."""
    where = f"boxes[{index}]"
    if len(box) != 4 or not all(math.isfinite(v) for v in box):
        raise PayloadError(where, "expected four finite numbers [x, y, w, h]")
    x, y, w, h = box
    if w <= 0 or h <= 0:
        raise PayloadError(where, "width and height must be positive")
    x1, y1 = max(x, 0.0), max(y, 0.0)
    x2, y2 = min(x + w, float(width)), min(y + h, float(height))
    if x2 - x1 < 1 or y2 - y1 < 1:
        raise PayloadError(where, f"the box lies outside the {width}x{height} image")
    return [round(v, DECIMALS) for v in (x1, y1, x2 - x1, y2 - y1)]


def encode(annotation: Annotation) -> str:
    return msgspec.json.encode(annotation).decode()


def decode(text: str) -> Annotation:
    return _DECODER.decode(text)


def to_builtins(annotation: Annotation) -> dict[str, Any]:
    return msgspec.to_builtins(annotation)
