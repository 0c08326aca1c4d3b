"""Coordinate tokens: q(v, S) of the paper's appendix A.2, its inverse, and the scorer's view."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gavel.geometry import xywh_to_xyxy
from gavel.parsing import ImageGeometry, parse_boxes
from gavel.parsing.conventions import get_convention
from gavel.train.coords import (
    BINS,
    COORD_TOKENS,
    box_tokens,
    coord_token,
    dequantize,
    dequantize_box,
    parse_tokens,
    quantize,
    quantize_box,
    xywh_box_tokens,
)

sizes = st.integers(min_value=1, max_value=20_000)


def test_worked_example_from_the_docs():
    # W = 640: x = 100 -> (100 - 320) / 320 = -0.6875 -> 512 * -0.6875 = -352.
    assert quantize(100, 640) == -352
    assert dequantize(-352, 640) == 100.0
    # H = 480: y = 300 -> (300 - 240) / 240 = 0.25 -> 128.
    assert quantize(300, 480) == 128
    assert quantize(320, 640) == 0  # the centre is <p0>


@settings(max_examples=300, deadline=None)
@given(size=sizes, fraction=st.floats(min_value=0, max_value=1))
def test_round_trip_is_within_half_a_bin(size, fraction):
    value = fraction * size
    index = quantize(value, size)
    assert -BINS <= index <= BINS
    half_bin = size / (2 * BINS) / 2  # a bin is S / 1024 pixels wide
    assert abs(dequantize(index, size) - value) <= half_bin + 1e-9 * size


def test_clipping_at_the_edges():
    assert quantize(0, 100) == -BINS and quantize(100, 100) == BINS
    assert quantize(-50, 100) == -BINS and quantize(1e9, 100) == BINS
    assert dequantize(-BINS, 100) == 0.0 and dequantize(BINS, 100) == 100.0
    with pytest.raises(ValueError, match="positive"):
        quantize(1, 0)
    with pytest.raises(ValueError, match="finite"):
        quantize(float("nan"), 10)


def test_xywh_to_xyxy_then_tokens():
    assert xywh_to_xyxy([325, 65, 100, 262]) == (325.0, 65.0, 425.0, 327.0)
    # x against the width (600), y against the height (400).
    expected = (quantize(325, 600), quantize(65, 400), quantize(425, 600), quantize(327, 400))
    assert quantize_box((325, 65, 425, 327), 600, 400) == expected
    assert xywh_box_tokens([325, 65, 100, 262], 600, 400) == "".join(f"<p{i}>" for i in expected)
    assert box_tokens((0, 0, 600, 400), 600, 400) == "<p-512><p-512><p512><p512>"


def test_vocabulary_is_1025_distinct_tokens():
    assert len(COORD_TOKENS) == 1025 == len(set(COORD_TOKENS))
    assert COORD_TOKENS[0] == "<p-512>" and COORD_TOKENS[512] == "<p0>"
    assert COORD_TOKENS[-1] == "<p512>"
    with pytest.raises(ValueError):
        coord_token(513)


@settings(max_examples=100, deadline=None)
@given(
    width=st.integers(8, 5000),
    height=st.integers(8, 5000),
    corners=st.lists(st.floats(0, 1), min_size=4, max_size=4),
)
def test_the_scorer_reads_tokens_back_as_dequantize_does(width, height, corners):
    x1, x2 = sorted(corners[:2])
    y1, y2 = sorted(corners[2:])
    box = (x1 * width, y1 * height, x2 * width, y2 * height)
    text = box_tokens(box, width, height)
    indices = parse_tokens(text)[0]
    expected = dequantize_box(indices, width, height)
    geometry = ImageGeometry(width, height)
    assert get_convention("coord-tokens").to_pixels(indices, geometry) == pytest.approx(expected)
    parsed = parse_boxes(f'{{"boxes": ["{text}"]}}', "coord-tokens", geometry)
    if parsed.boxes:  # boxes thinner than a bin quantize to no area and are dropped
        assert parsed.status == "ok"
        assert parsed.boxes[0] == pytest.approx(expected)
        tolerance = max(width, height) / 2048 + 1e-6
        assert all(abs(a - b) <= tolerance for a, b in zip(parsed.boxes[0], box, strict=True))
