"""Boxes and their overlap.

Inside gavel a box is always ``(x1, y1, x2, y2)`` in float pixels of the *original* image, with
``x1 <= x2`` and ``y1 <= y2``. Conversions from other conventions happen once, at the edges (the
data loader and the response parser), so nothing here needs to know where a box came from.

Union areas are computed exactly by coordinate compression rather than by rasterizing: a raster
rounds sub-pixel boxes and its cost grows with the image, while the compressed grid has at most
``2k x 2k`` cells for ``k`` boxes and gives the area to floating-point precision.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

Box = tuple[float, float, float, float]


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


def union_area(boxes: Sequence[Box]) -> float:
    """Exact area of the union of axis-aligned boxes.

    Coordinate compression: between consecutive distinct x edges each box either spans the slab
    or misses it, so the covered length of the slab is a union of y intervals. Pure Python for
    the handful of boxes a sample has (numpy's per-call overhead dominates at that size); a
    vectorized grid for larger sets.
    """
    k = len(boxes)
    if k == 0:
        return 0.0
    if k == 1:
        return area(boxes[0])
    if k == 2:
        a, b = boxes
        overlap = intersection(a, b)
        return area(a) + area(b) - (area(overlap) if overlap else 0.0)
    if k > _SWEEP_LIMIT:
        return _union_area_grid(boxes)
    xs = sorted({v for b in boxes for v in (b[0], b[2])})
    total = 0.0
    for left, right in itertools.pairwise(xs):
        spans = sorted(
            (b[1], b[3]) for b in boxes if b[0] <= left and b[2] >= right and b[3] > b[1]
        )
        covered, top = 0.0, -math.inf
        for low, high in spans:
            if high <= top:
                continue
            covered += high - max(low, top)
            top = high
        total += covered * (right - left)
    return total


_SWEEP_LIMIT = 16


def _union_area_grid(boxes: Sequence[Box]) -> float:
    arr = np.asarray(boxes, dtype=np.float64)
    xs = np.unique(arr[:, [0, 2]])
    ys = np.unique(arr[:, [1, 3]])
    mid_x = (xs[:-1] + xs[1:]) / 2.0
    mid_y = (ys[:-1] + ys[1:]) / 2.0
    in_x = (arr[:, 0, None] < mid_x) & (mid_x < arr[:, 2, None])
    in_y = (arr[:, 1, None] < mid_y) & (mid_y < arr[:, 3, None])
    covered = np.einsum("kx,ky->xy", in_x.astype(np.uint8), in_y.astype(np.uint8)) > 0
    return float(np.diff(xs) @ covered @ np.diff(ys))


def union_intersection_area(pred: Sequence[Box], gold: Sequence[Box]) -> float:
    """Area of (union of pred) ∩ (union of gold): the union of all pairwise intersections."""
    pieces = [p for a in pred for b in gold if (p := intersection(a, b)) is not None]
    return union_area(pieces)


def union_iou(pred: Sequence[Box], gold: Sequence[Box]) -> float:
    """IoU of the region covered by the predicted boxes with the region covered by the gold.

    Adding a box can only enlarge the predicted region, so spraying boxes over the image
    lowers this score once the extra boxes miss the gold: it cannot be gamed by quantity.
    """
    if not pred or not gold:
        return 0.0
    if len(pred) == 1 and len(gold) == 1:
        return iou(pred[0], gold[0])
    inter = union_intersection_area(pred, gold)
    denominator = union_area(pred) + union_area(gold) - inter
    return inter / denominator if denominator > 0 else 0.0


def paired_iou(pred: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """IoU of boxes in the last axis, broadcast over the others (the vectorized path)."""
    ix = np.clip(
        np.minimum(pred[..., 2], gold[..., 2]) - np.maximum(pred[..., 0], gold[..., 0]), 0, None
    )
    iy = np.clip(
        np.minimum(pred[..., 3], gold[..., 3]) - np.maximum(pred[..., 1], gold[..., 1]), 0, None
    )
    inter = ix * iy
    area_p = (pred[..., 2] - pred[..., 0]) * (pred[..., 3] - pred[..., 1])
    area_g = (gold[..., 2] - gold[..., 0]) * (gold[..., 3] - gold[..., 1])
    denominator = area_p + area_g - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, inter / denominator, 0.0)


def iou_matrix(pred: Sequence[Box], gold: Sequence[Box]) -> np.ndarray:
    """Pairwise IoU, shape ``(len(pred), len(gold))``."""
    p = np.asarray(pred, dtype=np.float64).reshape(-1, 4)
    g = np.asarray(gold, dtype=np.float64).reshape(-1, 4)
    return paired_iou(p[:, None, :], g[None, :, :])
