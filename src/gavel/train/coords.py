"""Coordinate tokens of the GAVEL baseline (paper, appendix A.2): boxes as four vocabulary items.

The baseline predicts a box as four tokens ``<p-512>`` … ``<p512>`` (1,025 tokens) instead of
digits, so one coordinate is one decoding step and the model cannot write an impossible number.
A coordinate ``v`` on an axis of size ``S`` (the width for x, the height for y) becomes

    q(v, S) = round(512 · clip((v − S/2) / (S/2), −1, 1))

so the image centre is ``<p0>`` and the edges are ``<p-512>`` and ``<p512>``. The inverse
(``dequantize``) is the ``coord-tokens`` box convention the scorer uses
(:mod:`gavel.parsing.conventions`); both live on the same arithmetic, and the tests check that
they agree, so a box survives training data → model text → scoring within half a bin
(``S / 2048`` pixels).

Rounding is Python's ``round`` (ties to even), as the paper's ``round`` on exact ``.5`` ties is
unspecified; a tie moves a coordinate by at most one bin.

Pure Python: nothing here needs torch.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from gavel.geometry import Box, xywh_to_xyxy

#: Bins on each side of the centre: indices run from -BINS to BINS.
BINS = 512
#: The pattern of one coordinate token; group 1 is its signed index.
TOKEN_PATTERN = re.compile(r"<p(-?\d{1,3})>")


def coord_token(index: int) -> str:
    """The token text for one quantized coordinate, ``<p-512>`` … ``<p512>``."""
    if not -BINS <= index <= BINS:
        raise ValueError(f"coordinate index {index} outside [-{BINS}, {BINS}]")
    return f"<p{index}>"


#: All 1,025 coordinate tokens in index order, as they are added to a tokenizer.
COORD_TOKENS: tuple[str, ...] = tuple(coord_token(i) for i in range(-BINS, BINS + 1))


def quantize(value: float, size: float) -> int:
    """q(v, S): a pixel coordinate on an axis of ``size`` pixels as a signed bin index.

    Values outside the image are clipped to the edge bins rather than rejected: the loader
    already clips gold boxes, and a clipped coordinate is still the best token for it.
    """
    if not size > 0:
        raise ValueError(f"axis size must be positive, got {size}")
    if not math.isfinite(value):
        raise ValueError(f"coordinate must be finite, got {value}")
    half = size / 2
    relative = min(1.0, max(-1.0, (value - half) / half))
    return round(BINS * relative)


def dequantize(index: float, size: float) -> float:
    """The pixel coordinate a bin index stands for: ``S/2 + index / 512 · S/2``.

    This is the arithmetic of the ``coord-tokens`` box convention used when scoring.
    """
    half = size / 2
    return half + index / BINS * half


def quantize_box(box: Sequence[float], width: float, height: float) -> tuple[int, int, int, int]:
    """An ``(x1, y1, x2, y2)`` pixel box as four indices: x against the width, y the height."""
    x1, y1, x2, y2 = box
    return (
        quantize(x1, width),
        quantize(y1, height),
        quantize(x2, width),
        quantize(y2, height),
    )


def dequantize_box(indices: Sequence[float], width: float, height: float) -> Box:
    """Four indices back to an ``(x1, y1, x2, y2)`` pixel box."""
    i1, j1, i2, j2 = indices
    return (
        dequantize(i1, width),
        dequantize(j1, height),
        dequantize(i2, width),
        dequantize(j2, height),
    )


def box_tokens(box: Sequence[float], width: float, height: float) -> str:
    """The four coordinate tokens of an ``(x1, y1, x2, y2)`` box, serialized without spaces."""
    return "".join(coord_token(i) for i in quantize_box(box, width, height))


def xywh_box_tokens(box: Sequence[float], width: float, height: float) -> str:
    """An annotation box as drawn (``x, y, w, h``) to its four tokens, via the corners."""
    return box_tokens(xywh_to_xyxy(box), width, height)


def parse_tokens(text: str) -> list[tuple[int, int, int, int]]:
    """Every complete group of four coordinate tokens in ``text``, as indices (for tests and
    quick checks; scoring uses :func:`gavel.parsing.parse_boxes`)."""
    values = [int(match) for match in TOKEN_PATTERN.findall(text)]
    return [
        (values[i], values[i + 1], values[i + 2], values[i + 3])
        for i in range(0, len(values) - len(values) % 4, 4)
    ]


__all__ = [
    "BINS",
    "COORD_TOKENS",
    "TOKEN_PATTERN",
    "box_tokens",
    "coord_token",
    "dequantize",
    "dequantize_box",
    "parse_tokens",
    "quantize",
    "quantize_box",
    "xywh_box_tokens",
    "xywh_to_xyxy",
]
