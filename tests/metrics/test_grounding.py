"""A@t, the threshold rule, area ratios and the box-size histogram."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from gavel.geometry import iou
from gavel.metrics.grounding import (
    area_ratio_summary,
    box_size_histogram,
    grounding_accuracy,
)


def exact_iou(a, b) -> Fraction:
    fa = [Fraction(str(v)) for v in a]
    fb = [Fraction(str(v)) for v in b]
    ix = max(Fraction(0), min(fa[2], fb[2]) - max(fa[0], fb[0]))
    iy = max(Fraction(0), min(fa[3], fb[3]) - max(fa[1], fb[1]))
    inter = ix * iy
    union = (fa[2] - fa[0]) * (fa[3] - fa[1]) + (fb[2] - fb[0]) * (fb[3] - fb[1]) - inter
    return inter / union


def test_iou_exactly_at_threshold_is_a_hit():
    # Integer case: IoU is exactly 1/2 in floating point too.
    assert grounding_accuracy(np.array([iou((0, 0, 2, 1), (0, 0, 1, 1))]))["A@0.5"] == 100.0


@pytest.mark.parametrize(
    ("a", "b", "threshold"),
    [
        ((0.6, 0.2, 1.8, 5.8), (0.8, 2.0, 2.0, 5.9), 0.5),
        ((1.0, 2.6, 1.7, 4.0), (1.1, 2.4, 2.2, 3.4), 0.3),
        ((0.3, 0.2, 4.8, 5.1), (1.9, 0.4, 5.7, 4.9), 0.5),
    ],
)
def test_float_rounding_does_not_turn_an_exact_tie_into_a_miss(a, b, threshold):
    assert exact_iou(a, b) == Fraction(str(threshold))  # the tie is exact in rationals
    assert iou(a, b) < threshold  # but float arithmetic lands just below it
    assert grounding_accuracy(np.array([iou(a, b)]))[f"A@{threshold:g}"] == 100.0


def test_accuracy_counts_failures_as_zero():
    ious = np.array([0.9, 0.6, 0.4, 0.0, 0.0])  # the zeros stand for a missing and a failed answer
    assert grounding_accuracy(ious) == {"A@0.3": 60.0, "A@0.5": 40.0, "A@0.7": 20.0}


def test_empty_grounding_set_gives_none():
    assert grounding_accuracy(np.array([])) == {"A@0.3": None, "A@0.5": None, "A@0.7": None}


def test_area_ratio_summary():
    summary = area_ratio_summary(np.log2([0.5, 1.0, 2.0, 4.0, 8.0]))
    assert summary["n"] == 5
    assert summary["median_log2"] == pytest.approx(1.0)
    assert summary["q1_log2"] == pytest.approx(0.0)
    assert summary["q3_log2"] == pytest.approx(2.0)
    assert summary["median_ratio"] == pytest.approx(2.0)
    assert area_ratio_summary(np.array([]))["median_log2"] is None


def test_box_size_histogram_decades():
    hist = box_size_histogram(np.array([5, 10, 999, 1000, 54_000, 99_999, 100_000, 2e7]))
    assert hist["<1e1"] == 1
    assert hist["1e1-1e2"] == 1
    assert hist["1e2-1e3"] == 1
    assert hist["1e3-1e4"] == 1
    assert hist["1e4-1e5"] == 2
    assert hist["1e5-1e6"] == 1
    assert hist[">=1e7"] == 1
    assert sum(hist.values()) == 8
