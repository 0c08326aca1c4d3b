"""Drawing a scene to pixels: 4x supersampled shapes, patterns, then the difficulty's damage."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from gavel.synth.difficulty import Difficulty
from gavel.synth.scenes import Scene, SceneObject, shape_polygon
from gavel.synth.vocabulary import BACKGROUND, PATTERN_INK

SUPERSAMPLE = 4
OCCLUDER_GREY = (150, 150, 150)


def _draw_shape(draw: ImageDraw.ImageDraw, kind, center, side, fill, scale) -> None:
    cx, cy = center[0] * scale, center[1] * scale
    s = side * scale
    if kind == "circle":
        draw.ellipse((cx - s / 2, cy - s / 2, cx + s / 2, cy + s / 2), fill=fill)
    else:
        draw.polygon(shape_polygon(kind, (cx, cy), s), fill=fill)


def _pattern_patch(obj: SceneObject, scale: int) -> tuple[tuple[int, int], Image.Image]:
    """White ink inside the shape (horizontal stripes or a grid of dots), as a mask over the
    object's bounding box only: its top-left corner and the mask."""
    x1, y1, x2, y2 = (v * scale for v in obj.box)
    left, top = int(x1), int(y1)
    size = (int(x2) - left + 2, int(y2) - top + 2)
    ink = Image.new("L", size, 0)
    draw = ImageDraw.Draw(ink)
    side = obj.side * scale
    x1, y1, x2, y2 = x1 - left, y1 - top, x2 - left, y2 - top
    if obj.pattern == "striped":
        period = side / 4.5
        y = y1 + period * 0.35
        while y < y2:
            draw.rectangle((x1, y, x2, y + period * 0.38), fill=255)
            y += period
    elif obj.pattern == "dotted":
        period = side / 4.0
        radius = period * 0.2
        y = y1 + period / 2
        while y < y2:
            x = x1 + period / 2
            while x < x2:
                draw.ellipse((x - radius, y - radius, x + radius, y + radius), fill=255)
                x += period
            y += period
    shape = Image.new("L", size, 0)
    center = (obj.center[0] - left / scale, obj.center[1] - top / scale)
    _draw_shape(ImageDraw.Draw(shape), obj.kind, center, obj.side * 0.9, 255, scale)
    return (left, top), Image.fromarray(np.minimum(np.asarray(ink), np.asarray(shape)))


def render(scene: Scene, difficulty: Difficulty, rng: np.random.Generator) -> Image.Image:
    """The scene as an RGB image of ``scene.width`` x ``scene.height``."""
    scale = SUPERSAMPLE
    size = (scene.width * scale, scene.height * scale)
    image = Image.new("RGB", size, BACKGROUND)
    draw = ImageDraw.Draw(image)
    for obj in scene.objects:
        _draw_shape(draw, obj.kind, obj.center, obj.side, obj.rgb, scale)
        if obj.state == "outlined":
            inner = obj.side * (0.62 if obj.kind in ("star", "cross", "triangle") else 0.76)
            center = obj.center
            if obj.kind == "triangle":  # keep the border even: the centroid sits low
                center = (center[0], center[1] + obj.side * 0.08)
            _draw_shape(draw, obj.kind, center, inner, BACKGROUND, scale)
        elif obj.pattern != "plain":
            (left, top), mask = _pattern_patch(obj, scale)
            image.paste(PATTERN_INK, (left, top, left + mask.width, top + mask.height), mask)
    for occluder in scene.occluders:
        draw.rectangle(tuple(v * scale for v in occluder.box), fill=OCCLUDER_GREY)
    for x, y, r in scene.clutter:
        shade = (110, 110, 110)
        draw.ellipse(
            ((x - r) * scale, (y - r) * scale, (x + r) * scale, (y + r) * scale), fill=shade
        )
    image = image.resize((scene.width, scene.height), Image.Resampling.BOX)
    return damage(image, difficulty, rng)


def damage(image: Image.Image, difficulty: Difficulty, rng: np.random.Generator) -> Image.Image:
    """Blur, noise and JPEG artefacts, as the difficulty asks."""
    if difficulty.blur:
        image = image.filter(ImageFilter.GaussianBlur(difficulty.blur))
    if difficulty.noise:
        pixels = np.asarray(image, dtype=np.float32)
        pixels += difficulty.noise * rng.standard_normal(pixels.shape, dtype=np.float32)
        image = Image.fromarray(np.clip(np.rint(pixels), 0, 255).astype(np.uint8))
    if difficulty.jpeg_quality:
        buffer = io.BytesIO()
        image.save(buffer, format="JPEG", quality=difficulty.jpeg_quality)
        buffer.seek(0)
        image = Image.open(buffer).convert("RGB")
    return image
