"""Seeing the synthetic scenes from pixels alone: segment, then classify each object.

The background is the median colour of the image border. Object pixels differ from it and are
saturated (the pattern ink, the clutter and the occluders are grey or white, so they are not).
Connected components of object pixels, with their holes filled, are the objects; tiny ones are
clutter. Kind comes from two shape numbers of the filled silhouette (extent: area over
bounding-box area; solidity: area over convex-hull area), state and pattern from the holes
inside it, colour from the mean of the object pixels, size and place from the bounding box.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage
from scipy.spatial import ConvexHull, QhullError

from gavel.synth.vocabulary import CLOSE_COLORS, COLORS, COLUMNS, ROWS

#: Minimum difference from the background (max over channels) for an object pixel.
DIFFERENCE = 45
#: Minimum saturation (max - min channel) for an object pixel.
SATURATION = 45
#: Components smaller than this share of the image are clutter.
MIN_AREA_SHARE = 0.0012

_PALETTE = [(name, np.array(rgb, dtype=float)) for name, rgb in COLORS.items()] + [
    (name, np.array(rgb, dtype=float)) for name, rgb in CLOSE_COLORS.items()
]


@dataclass(frozen=True)
class SeenObject:
    kind: str
    color: str
    size: str
    pattern: str
    state: str
    row: str
    column: str
    box: tuple[float, float, float, float]


def object_mask(pixels: np.ndarray) -> np.ndarray:
    border = np.concatenate([pixels[0], pixels[-1], pixels[:, 0], pixels[:, -1]])
    background = np.median(border, axis=0).astype(np.int16)
    # Channel by channel: element-wise maxima are far faster than reducing the last axis.
    r, g, b = (pixels[:, :, i] for i in range(3))
    difference = np.maximum(
        np.maximum(
            np.abs(r.astype(np.int16) - background[0]), np.abs(g.astype(np.int16) - background[1])
        ),
        np.abs(b.astype(np.int16) - background[2]),
    )
    saturation = np.maximum(np.maximum(r, g), b) - np.minimum(np.minimum(r, g), b)
    return (difference > DIFFERENCE) & (saturation > SATURATION)


def classify_kind(filled: np.ndarray) -> str:
    area = float(filled.sum())
    height, width = filled.shape
    extent = area / (height * width)
    edge = filled & ~ndimage.binary_erosion(filled)
    points = np.argwhere(edge).astype(float)
    try:
        hull_area = ConvexHull(points).volume if len(points) >= 3 else area
    except QhullError:
        hull_area = area
    solidity = area / max(hull_area, 1.0)
    if solidity < 0.86:
        return "star" if dominant_symmetry(points) == 5 else "cross"
    if extent > 0.9:
        return "square"
    if extent > 0.66:
        return "circle"
    return "triangle"


def dominant_symmetry(edge_points: np.ndarray, bins: int = 72) -> int:
    """4 for a cross, 5 for a star: the strongest of the 4- and 5-fold harmonics of the outline's
    distance from its centre as a function of angle. Unlike solidity (a star and a cross both
    lose their sharp corners to blur and end near 0.7), the symmetry survives blur."""
    centre = edge_points.mean(axis=0)
    dy, dx = (edge_points - centre).T
    angle = ((np.arctan2(dy, dx) + np.pi) / (2 * np.pi) * bins).astype(int) % bins
    radius = np.zeros(bins)
    np.maximum.at(radius, angle, np.hypot(dx, dy))
    filled = radius > 0
    if filled.sum() < bins // 3:
        return 0
    radius = np.interp(np.arange(bins), np.flatnonzero(filled), radius[filled], period=bins)
    spectrum = np.abs(np.fft.rfft(radius - radius.mean()))
    return 5 if spectrum[5] > spectrum[4] else 4


def classify_look(mask: np.ndarray, filled: np.ndarray) -> tuple[str, str]:
    """(state, pattern) from the holes inside the silhouette."""
    holes = filled & ~mask
    labels, count = ndimage.label(holes)
    if count == 0:
        return "filled", "plain"
    sizes = np.bincount(labels.ravel())[1:]
    total = float(filled.sum())
    if sizes.max() > 0.2 * total:
        return "outlined", "plain"
    significant = [i + 1 for i, s in enumerate(sizes) if s > max(3, 0.004 * total)]
    if len(significant) < 2:
        return "filled", "plain"
    elongations = []
    for index, region in enumerate(ndimage.find_objects(labels), start=1):
        if index in significant and region is not None:
            h = region[0].stop - region[0].start
            w = region[1].stop - region[1].start
            elongations.append(w / max(h, 1))
    return "filled", "striped" if np.median(elongations) > 2.2 else "dotted"


def classify_color(pixels: np.ndarray) -> str:
    mean = pixels.reshape(-1, 3).astype(float).mean(axis=0)
    return min(_PALETTE, key=lambda entry: float(np.sum((entry[1] - mean) ** 2)))[0]


def classify_size(side: float, short: int) -> str:
    share = side / short
    if share < 0.13:
        return "small"
    return "medium" if share < 0.205 else "large"


def perceive(image: np.ndarray) -> list[SeenObject]:
    """Every object visible in an RGB image (H, W, 3 uint8), in reading order."""
    height, width = image.shape[:2]
    mask = object_mask(image)
    labels, _ = ndimage.label(mask)
    min_area = MIN_AREA_SHARE * height * width
    seen = []
    for index, region in enumerate(ndimage.find_objects(labels), start=1):
        if region is None:
            continue
        component = labels[region] == index
        if component.sum() < min_area:
            continue
        filled = ndimage.binary_fill_holes(component)
        ys, xs = region
        box = (float(xs.start), float(ys.start), float(xs.stop), float(ys.stop))
        state, pattern = classify_look(component, filled)
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        seen.append(
            SeenObject(
                kind=classify_kind(filled),
                color=classify_color(image[region][component]),
                size=classify_size(max(box[2] - box[0], box[3] - box[1]), min(height, width)),
                pattern=pattern,
                state=state,
                row=ROWS[min(2, int(3 * cy / height))],
                column=COLUMNS[min(2, int(3 * cx / width))],
                box=box,
            )
        )
    return sorted(seen, key=lambda o: (ROWS.index(o.row), COLUMNS.index(o.column)))
