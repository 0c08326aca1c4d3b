"""Procedural scenes: a few shapes on a plain background, one per cell of a 3x3 grid.

Every object sits well inside its grid cell, so its place ("in the top left") is never
ambiguous, and its bounding box is known exactly from the geometry it was drawn with.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from gavel.synth.difficulty import Difficulty
from gavel.synth.vocabulary import CLOSE_COLORS, COLORS, COLUMNS, KINDS, PATTERNS, ROWS, SIZES


@dataclass(frozen=True)
class SceneObject:
    kind: str
    color: str
    size: str
    pattern: str
    state: str
    row: str
    column: str
    center: tuple[float, float]
    side: float
    rgb: tuple[int, int, int]

    @property
    def box(self) -> tuple[float, float, float, float]:
        """Exact bounding box (x1, y1, x2, y2) of the drawn shape."""
        return shape_box(self.kind, self.center, self.side)

    @property
    def cell(self) -> tuple[str, str]:
        return (self.row, self.column)


@dataclass(frozen=True)
class Occluder:
    """A grey bar drawn over part of an object (``hard`` only)."""

    box: tuple[float, float, float, float]


@dataclass
class Scene:
    width: int
    height: int
    objects: list[SceneObject]
    clutter: list[tuple[float, float, float]] = field(default_factory=list)
    occluders: list[Occluder] = field(default_factory=list)


def star_points(cx: float, cy: float, radius: float) -> list[tuple[float, float]]:
    """Five-pointed star, first point straight up; inner radius 0.45 of the outer."""
    points = []
    for i in range(10):
        r = radius if i % 2 == 0 else radius * 0.45
        angle = -math.pi / 2 + i * math.pi / 5
        points.append((cx + r * math.cos(angle), cy + r * math.sin(angle)))
    return points


def shape_polygon(kind: str, center: tuple[float, float], side: float) -> list[tuple[float, float]]:
    """Vertices of a polygonal kind, fitted in a ``side`` x ``side`` square around ``center``."""
    cx, cy = center
    h = side / 2
    if kind == "square":
        return [(cx - h, cy - h), (cx + h, cy - h), (cx + h, cy + h), (cx - h, cy + h)]
    if kind == "triangle":
        return [(cx, cy - h), (cx + h, cy + h), (cx - h, cy + h)]
    if kind == "star":
        # Scale the star so its bounding box is as tall as ``side``.
        raw = star_points(0, 0, 1.0)
        ys = [p[1] for p in raw]
        scale = side / (max(ys) - min(ys))
        offset = -(max(ys) + min(ys)) / 2 * scale
        return [(cx + x * scale, cy + y * scale + offset) for x, y in raw]
    if kind == "cross":
        t = side / 6
        return [
            (cx - t, cy - h), (cx + t, cy - h), (cx + t, cy - t), (cx + h, cy - t),
            (cx + h, cy + t), (cx + t, cy + t), (cx + t, cy + h), (cx - t, cy + h),
            (cx - t, cy + t), (cx - h, cy + t), (cx - h, cy - t), (cx - t, cy - t),
        ]  # fmt: skip
    raise ValueError(f"not a polygon kind: {kind}")


def shape_box(
    kind: str, center: tuple[float, float], side: float
) -> tuple[float, float, float, float]:
    if kind == "circle":
        cx, cy = center
        return (cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2)
    points = shape_polygon(kind, center, side)
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return (min(xs), min(ys), max(xs), max(ys))


def _pick(rng: np.random.Generator, options):
    return options[int(rng.integers(len(options)))]


def sample_object(
    rng: np.random.Generator,
    width: int,
    height: int,
    cell: tuple[int, int],
    difficulty: Difficulty,
    kind: str,
    color: str,
) -> SceneObject:
    """An object of the given kind and colour with random size, look and position in ``cell``."""
    r, c = cell
    short = min(width, height)
    size = "small" if rng.random() < difficulty.small_share else _pick(rng, ("medium", "large"))
    low, high = SIZES[size]
    side = float(rng.uniform(low, high) * short)
    state = "outlined" if rng.random() < 0.3 else "filled"
    pattern = "plain" if state == "outlined" else _pick(rng, PATTERNS)
    cell_w, cell_h = width / 3, height / 3
    slack_x = max(0.0, min((cell_w - side) / 2 - 2, 0.18 * cell_w))
    slack_y = max(0.0, min((cell_h - side) / 2 - 2, 0.18 * cell_h))
    cx = (c + 0.5) * cell_w + float(rng.uniform(-slack_x, slack_x))
    cy = (r + 0.5) * cell_h + float(rng.uniform(-slack_y, slack_y))
    palette = CLOSE_COLORS if difficulty.close_colors and rng.random() < 0.5 else COLORS
    return SceneObject(
        kind=kind,
        color=color,
        size=size,
        pattern=pattern,
        state=state,
        row=ROWS[r],
        column=COLUMNS[c],
        center=(cx, cy),
        side=side,
        rgb=palette[color],
    )


def sample_scene(
    rng: np.random.Generator, difficulty: Difficulty, group: tuple[str, str, int] | None = None
) -> Scene:
    """A random scene. ``group`` = (colour, kind, k) places k objects sharing colour and kind.

    Outside that group every object has its own (colour, kind) pair, so a description by colour,
    kind and place always picks out one object.
    """
    width = int(rng.integers(10, 21)) * 32
    height = int(rng.integers(10, 21)) * 32
    low, high = difficulty.objects
    n = int(rng.integers(low, high + 1))
    n = max(n, group[2] + 1) if group else n
    cells = [(int(i) // 3, int(i) % 3) for i in rng.permutation(9)[:n]]
    pairs = [(col, kind) for col in COLORS for kind in KINDS]
    taken = set()
    objects = []
    for index, cell in enumerate(cells):
        if group and index < group[2]:
            color, kind = group[0], group[1]
        else:
            while True:
                color, kind = _pick(rng, pairs)
                if (color, kind) not in taken and (not group or (color, kind) != group[:2]):
                    break
        taken.add((color, kind))
        objects.append(sample_object(rng, width, height, cell, difficulty, kind, color))
    scene = Scene(width, height, objects)
    for _ in range(difficulty.clutter):
        scene.clutter.append(
            (
                float(rng.uniform(0, width)),
                float(rng.uniform(0, height)),
                float(rng.uniform(1, 2.5)),
            )
        )
    for obj in objects:
        if rng.random() < difficulty.occlusion:
            x1, y1, x2, y2 = obj.box
            bar = float(rng.uniform(0.15, 0.3)) * (x2 - x1)
            left = float(rng.uniform(x1, x2 - bar))
            scene.occluders.append(Occluder((left, y1 - 4, left + bar, y2 + 4)))
    return scene
