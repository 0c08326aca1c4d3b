"""Boxes and their overlap.

Inside gavel a box is always ``(x1, y1, x2, y2)`` in float pixels of the *original* image, with
``x1 <= x2`` and ``y1 <= y2``. Conversions from other conventions happen once, at the edges (the
data loader and the response parser), so nothing here needs to know where a box came from.

Unions of several boxes (exact areas, union IoU, many samples at once) live in
:mod:`gavel.overlap`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Box = tuple[float, float, float, float]


#: The longest side an image can have: PNG, the most permissive common format, stores sides
#: as 31-bit integers. A larger width or height is a mistake, not an image.
MAX_SIDE = 2**31 - 1


def xywh_to_xyxy(box: Sequence[float]) -> Box:
    """Annotation boxes are drawn as ``x, y, w, h``; convert to corners."""
    x, y, w, h = (float(v) for v in box)
    return (x, y, x + w, y + h)


def xyxy_to_xywh(box: Sequence[float]) -> tuple[float, float, float, float]:
    x1, y1, x2, y2 = (float(v) for v in box)
    return (x1, y1, x2 - x1, y2 - y1)


def order_corners(box: Sequence[float]) -> tuple[Box, bool]:
    """Return the box with ``x1 <= x2`` and ``y1 <= y2``, and whether corners were swapped."""
    x1, y1, x2, y2 = box
    if x1 <= x2 and y1 <= y2:
        return (float(x1), float(y1), float(x2), float(y2)), False
    return (float(min(x1, x2)), float(min(y1, y2)), float(max(x1, x2)), float(max(y1, y2))), True


def clip_box(box: Box, width: float, height: float) -> tuple[Box, bool]:
    """Clip to the image rectangle; report whether anything was cut off."""
    x1, y1, x2, y2 = box
    clipped = (
        min(max(x1, 0.0), width),
        min(max(y1, 0.0), height),
        min(max(x2, 0.0), width),
        min(max(y2, 0.0), height),
    )
    return clipped, clipped != box


def area(box: Sequence[float]) -> float:
    x1, y1, x2, y2 = box
    return max(0.0, x2 - x1) * max(0.0, y2 - y1)


def is_degenerate(box: Sequence[float]) -> bool:
    """A box with no area cannot ground anything."""
    return not (box[2] > box[0] and box[3] > box[1])


def is_finite_box(box: Sequence[float]) -> bool:
    return len(box) == 4 and all(math.isfinite(float(v)) for v in box)


def intersection(a: Box, b: Box) -> Box | None:
    x1, y1 = max(a[0], b[0]), max(a[1], b[1])
    x2, y2 = min(a[2], b[2]), min(a[3], b[3])
    if x2 <= x1 or y2 <= y1:
        return None
    return (x1, y1, x2, y2)


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two boxes; 0 when both are empty."""
    inter = intersection(a, b)
    inter_area = area(inter) if inter else 0.0
    denominator = area(a) + area(b) - inter_area
    return inter_area / denominator if denominator > 0 else 0.0
