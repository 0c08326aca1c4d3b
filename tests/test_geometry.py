"""Single-box geometry: IoU, conversions, corner ordering and clipping."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gavel.geometry import clip_box, iou, order_corners, xywh_to_xyxy

GRID = 24


@st.composite
def int_box(draw):
    x1 = draw(st.integers(0, GRID - 1))
    y1 = draw(st.integers(0, GRID - 1))
    x2 = draw(st.integers(x1 + 1, GRID))
    y2 = draw(st.integers(y1 + 1, GRID))
    return (float(x1), float(y1), float(x2), float(y2))


@settings(max_examples=200, deadline=None)
@given(int_box(), int_box())
def test_pair_iou_symmetric_and_bounded(a, b):
    assert iou(a, b) == pytest.approx(iou(b, a))
    assert 0.0 <= iou(a, b) <= 1.0
    assert iou(a, a) == 1.0


def test_conversions_and_fixes():
    assert xywh_to_xyxy([10, 20, 30, 40]) == (10, 20, 40, 60)
    assert order_corners([5, 8, 1, 2]) == ((1, 2, 5, 8), True)
    assert clip_box((-5, 10, 120, 50), 100, 40) == ((0, 10, 100, 40), True)
    assert clip_box((1, 2, 3, 4), 10, 10) == ((1, 2, 3, 4), False)
