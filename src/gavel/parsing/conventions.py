"""Box coordinate conventions: how four numbers in a model's answer map to original pixels.

A convention is always *declared* (by the preset, the adapter, the prediction record or
``--box-format``), never guessed from the numbers and never from the gold boxes: choosing the
convention that best matches the gold inflates scores.

Each convention knows the order of its four numbers and how to scale them. The token
conventions (``loc1000``, ``loc1024-yx``, ``coord-tokens``) also own their token syntax.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from gavel.geometry import Box


class ImageGeometry(msgspec.Struct, frozen=True, gc=False):
    """Sizes a convention may need: the original image, as sent, and as the model saw it.

    A frozen Struct rather than a frozen dataclass: one is made for every answer scored, and a
    frozen dataclass's ``__init__`` costs twenty times as much."""

    width: int
    height: int
    sent_size: tuple[int, int] | None = None
    input_size: tuple[int, int] | None = None


class ConventionError(ValueError):
    """The convention cannot be applied (for example a required size is unknown)."""


@dataclass(frozen=True)
class Convention:
    name: str
    description: str
    #: Maps the numbers of one box (``arity`` of them, four unless said otherwise), in the order
    #: the model wrote them, to (x1, y1, x2, y2) pixels. The numbers' type is left open: a
    #: converter takes a tuple of exactly ``arity`` floats, a length this field cannot name.
    to_pixels: Callable[[Any, ImageGeometry], Box]
    #: For token conventions: a regex whose group 1 is one coordinate's integer.
    token: re.Pattern[str] | None = None
    #: Allowed range of raw values, used to reject impossible numbers as invalid.
    value_range: tuple[float, float] | None = None
    #: How many numbers make one box: 4 for corners, 2 for Kosmos-2's two patch indices, 8 for
    #: a quadrilateral's four points. ``to_pixels`` receives exactly this many.
    arity: int = 4
    #: Relative conventions: where all of a reply's numbers lie in [0, 1], they were most likely
    #: written in 0-1 (a recorded warning, never a change of convention).
    warn_unit_interval: bool = False
    #: Token conventions whose box is followed by its label (PaliGemma's ``<loc…>×4 cat ;``),
    #: which a label filter reads.
    label_after: bool = False
    #: One reply in this convention (``gavel list conventions`` shows what it reads).
    example: str = ""


_CONVENTIONS: dict[str, Convention] = {}


def register(convention: Convention) -> Convention:
    _CONVENTIONS[convention.name] = convention
    return convention


def get_convention(name: str) -> Convention:
    try:
        return _CONVENTIONS[name]
    except KeyError:
        known = ", ".join(_CONVENTIONS)
        raise ConventionError(f"unknown box format {name!r}; choose one of: {known}") from None


def convention_names() -> list[str]:
    return list(_CONVENTIONS)


def _scaled(sx: float, sy: float, values: tuple[float, float, float, float]) -> Box:
    x1, y1, x2, y2 = values
    return (x1 * sx, y1 * sy, x2 * sx, y2 * sy)


def _yx_first(values: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    y1, x1, y2, x2 = values
    return (x1, y1, x2, y2)


# Qwen2.5-VL resizes every image so both sides are multiples of 28 with a bounded pixel count;
# its boxes are pixels of that resized input. These are the processor's defaults.
QWEN25_FACTOR = 28
QWEN25_MIN_PIXELS = 56 * 56
QWEN25_MAX_PIXELS = 28 * 28 * 16384


def qwen_smart_resize(
    width: int,
    height: int,
    factor: int = QWEN25_FACTOR,
    min_pixels: int = QWEN25_MIN_PIXELS,
    max_pixels: int = QWEN25_MAX_PIXELS,
) -> tuple[int, int]:
    """The model-input size Qwen2.5-VL's processor produces for an image (width, height)."""
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return w_bar, h_bar


#: Kosmos-2.5's image processor (Pix2Struct's): 16 x 16 patches, at most 4096 of them.
KOSMOS25_PATCH = 16
KOSMOS25_MAX_PATCHES = 4096


def kosmos25_resize(
    width: int, height: int, patch: int = KOSMOS25_PATCH, max_patches: int = KOSMOS25_MAX_PATCHES
) -> tuple[int, int]:
    """The model-input size (width, height) Kosmos-2.5's processor resizes an image to: the
    largest grid of whole patches, aspect ratio kept, within ``max_patches``. Its
    ``<x_N><y_N>`` coordinates are pixels of that input (the processor returns it as
    ``width``/``height``)."""
    scale = math.sqrt(max_patches * (patch / height) * (patch / width))
    rows = max(min(math.floor(scale * height / patch), max_patches), 1)
    cols = max(min(math.floor(scale * width / patch), max_patches), 1)
    return cols * patch, rows * patch


def _pixel(values: tuple[float, float, float, float], g: ImageGeometry) -> Box:
    sent_w, sent_h = g.sent_size or (g.width, g.height)
    return _scaled(g.width / sent_w, g.height / sent_h, values)


def _resized_pixel(values: tuple[float, float, float, float], g: ImageGeometry) -> Box:
    in_w, in_h = g.input_size or qwen_smart_resize(g.width, g.height)
    return _scaled(g.width / in_w, g.height / in_h, values)


def _kosmos25_pixel(values: tuple[float, float, float, float], g: ImageGeometry) -> Box:
    in_w, in_h = g.input_size or kosmos25_resize(g.width, g.height)
    return _scaled(g.width / in_w, g.height / in_h, values)


def _relative(divisor: float) -> Callable[[tuple[float, float, float, float], ImageGeometry], Box]:
    def convert(values: tuple[float, float, float, float], g: ImageGeometry) -> Box:
        # _scaled written out: the most used converter, called once per box.
        x1, y1, x2, y2 = values
        sx, sy = g.width / divisor, g.height / divisor
        return (x1 * sx, y1 * sy, x2 * sx, y2 * sy)

    return convert


def _florence_bins(values: tuple[float, float, float, float], g: ImageGeometry) -> Box:
    # Florence-2 quantizes with floor into 1000 bins and dequantizes to the bin centre.
    x1, y1, x2, y2 = values
    bw, bh = g.width / 1000, g.height / 1000
    return ((x1 + 0.5) * bw, (y1 + 0.5) * bh, (x2 + 0.5) * bw, (y2 + 0.5) * bh)


def _paligemma_bins(values: tuple[float, float, float, float], g: ImageGeometry) -> Box:
    return _scaled(g.width / 1024, g.height / 1024, _yx_first(values))


def _gemini(values: tuple[float, float, float, float], g: ImageGeometry) -> Box:
    return _scaled(g.width / 1000, g.height / 1000, _yx_first(values))


def _florence_quad(values: tuple[float, ...], g: ImageGeometry) -> Box:
    # Florence-2 <OCR_WITH_REGION>: four points x1 y1 ... x4 y4, each a bin centre; the
    # quadrilateral's axis-aligned bounding box.
    xs = [(v + 0.5) * g.width / 1000 for v in values[0::2]]
    ys = [(v + 0.5) * g.height / 1000 for v in values[1::2]]
    return (min(xs), min(ys), max(xs), max(ys))


#: Kosmos-2 splits the image into a 32 x 32 grid; ``<patch_index_N>`` names cell N, row-major.
KOSMOS_GRID = 32


def _kosmos_patches(values: tuple[float, ...], g: ImageGeometry) -> Box:
    """Two patch indices (upper-left cell, lower-right cell) to a box, as Kosmos-2's processor
    does it (``patch_index_to_coordinate``): from cell centre to cell centre, except that a box
    one cell wide or high spans the cells' full extent."""
    first, last = int(values[0]), int(values[1])
    cell = 1 / KOSMOS_GRID
    ul_x, ul_y = first % KOSMOS_GRID, first // KOSMOS_GRID
    lr_x, lr_y = last % KOSMOS_GRID, last // KOSMOS_GRID
    if first == last or ul_x == lr_x or ul_y == lr_y:
        x1, y1 = ul_x * cell, ul_y * cell
        x2, y2 = lr_x * cell + cell, lr_y * cell + cell
    else:
        half = cell / 2
        x1, y1 = ul_x * cell + half, ul_y * cell + half
        x2, y2 = lr_x * cell + half, lr_y * cell + half
    return (x1 * g.width, y1 * g.height, x2 * g.width, y2 * g.height)


def _square_padded(values: tuple[float, float, float, float], g: ImageGeometry) -> Box:
    # LLaVA-1.5 pads the image to a square (centred, expand2square) before the model sees it;
    # its 0-1 boxes are relative to that square.
    side = max(g.width, g.height)
    dx, dy = (side - g.width) / 2, (side - g.height) / 2
    x1, y1, x2, y2 = values
    return (x1 * side - dx, y1 * side - dy, x2 * side - dx, y2 * side - dy)


def _coord_tokens(values: tuple[float, float, float, float], g: ImageGeometry) -> Box:
    # Inverse of q(v, S) = round(512 * clip((v - S/2) / (S/2), -1, 1)) from the paper's A.2.
    x1, y1, x2, y2 = values
    hw, hh = g.width / 2, g.height / 2
    return (hw + x1 / 512 * hw, hh + y1 / 512 * hh, hw + x2 / 512 * hw, hh + y2 / 512 * hh)


register(
    Convention(
        "pixel",
        "pixels of the image as sent (scaled by original/sent size)",
        _pixel,
        warn_unit_interval=True,
        example='{"boxes": [[120, 80, 430, 560]]}',
    )
)
register(
    Convention(
        "resized-pixel",
        "pixels of the model's resized input (Qwen2.5-VL); input size from the prediction, "
        "else Qwen2.5-VL's smart_resize with its default limits",
        _resized_pixel,
        warn_unit_interval=True,
        example='{"bbox_2d": [125, 169, 754, 208], "text_content": "UNIHAKKA"}',
    )
)
register(
    Convention(
        "rel1",
        "relative coordinates in 0-1",
        _relative(1.0),
        value_range=(0, 1),
        example='{"bbox_2d": [0.28, 0.5, 0.52, 0.7]}',
    )
)
register(
    Convention(
        "rel1000",
        "relative 0-1000 (Qwen3-VL, InternVL, GLM-V): v / 1000 * size",
        _relative(1000.0),
        value_range=(0, 1000),
        warn_unit_interval=True,
        example='{"bbox_2d": [280, 500, 520, 700], "label": "cup"}',
    )
)
register(
    Convention(
        "rel999",
        "relative 0-999 (DeepSeek-VL2): v / 999 * size",
        _relative(999.0),
        value_range=(0, 999),
        warn_unit_interval=True,
        example="<|ref|>compact car<|/ref|><|det|>[[220, 416, 417, 720]]<|/det|>",
    )
)
register(
    Convention(
        "loc1000",
        "Florence-2 <loc_N> tokens, x1 y1 x2 y2, 1000 bins, dequantized at bin centres",
        _florence_bins,
        token=re.compile(r"<loc_(\d{1,4})>"),
        value_range=(0, 999),
        example="car<loc_54><loc_375><loc_906><loc_707>",
    )
)
register(
    Convention(
        "loc1024-yx",
        "PaliGemma <locNNNN> tokens, y1 x1 y2 x2, 1024 bins: v / 1024 * size",
        _paligemma_bins,
        token=re.compile(r"<loc(\d{4})>"),
        value_range=(0, 1023),
        label_after=True,
        example="<loc0180><loc0596><loc0782><loc0961> david bowie ; "
        "<loc0722><loc0047><loc0895><loc0378> car",
    )
)
register(
    Convention(
        "yx1000",
        "Gemini box_2d: [ymin, xmin, ymax, xmax] relative 0-1000",
        _gemini,
        value_range=(0, 1000),
        warn_unit_interval=True,
        example='{"box_2d": [393, 67, 574, 206], "label": "red sprinkle topping"}',
    )
)
register(
    Convention(
        "coord-tokens",
        "the GAVEL baseline's <p-512>…<p512> tokens, x1 y1 x2 y2: v = S/2 + N/512 * S/2",
        _coord_tokens,
        token=re.compile(r"<p(-?\d{1,3})>"),
        value_range=(-512, 512),
        example="<p-200><p-100><p300><p400>",
    )
)
register(
    Convention(
        "qwen-vl",
        "Qwen-VL (v1) <ref>...</ref><box>(x1,y1),(x2,y2)</box>: corner pairs relative 0-1000",
        _relative(1000.0),
        value_range=(0, 1000),
        warn_unit_interval=True,
        example="<ref> Two apples</ref><box>(302,257),(582,671)</box>",
    )
)
register(
    Convention(
        "rel100",
        "relative 0-100, percent of the image (Molmo's coordinates): v / 100 * size",
        _relative(100.0),
        value_range=(0, 100),
        warn_unit_interval=True,
        example="[12.5, 20, 50, 75.5]",
    )
)
register(
    Convention(
        "rel1-square",
        "relative 0-1 of the image padded to a centred square (LLaVA-1.5): "
        "v * max(W, H) minus the padding",
        _square_padded,
        value_range=(0, 1),
        example="[0.12, 0.25, 0.5, 0.75]",
    )
)
register(
    Convention(
        "loc1000-quad",
        "Florence-2 <OCR_WITH_REGION>: eight <loc_N> tokens per region (four points x y), "
        "1000 bins at bin centres; the quadrilateral's bounding box",
        _florence_quad,
        token=re.compile(r"<loc_(\d{1,4})>"),
        value_range=(0, 999),
        arity=8,
        example="STOP<loc_177><loc_226><loc_345><loc_224><loc_345><loc_327><loc_177><loc_331>",
    )
)
register(
    Convention(
        "patch32",
        "Kosmos-2 <object><patch_index_NNNN><patch_index_NNNN></object>: upper-left and "
        "lower-right cells of a 32 x 32 grid, read as Kosmos-2's processor reads them",
        _kosmos_patches,
        token=re.compile(r"<patch_index_(\d{4})>"),
        value_range=(0, KOSMOS_GRID * KOSMOS_GRID - 1),
        arity=2,
        example="<phrase> a snowman</phrase><object><patch_index_0044><patch_index_0863></object>",
    )
)
register(
    Convention(
        "kosmos-2.5",
        "Kosmos-2.5 <bbox><x_N><y_N><x_N><y_N></bbox> (OCR lines): pixels of the processor's "
        "resized input; input size from the prediction, else Kosmos-2.5's rule (16 x 16 "
        "patches, at most 4096)",
        _kosmos25_pixel,
        token=re.compile(r"<[xy]_(\d{1,5})>"),
        example="<bbox><x_53><y_75><x_371><y_101></bbox>TOTAL 42.00",
    )
)
