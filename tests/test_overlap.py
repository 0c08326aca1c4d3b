"""Exact unions of boxes, checked against independent computations: integer rasters and shapely."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gavel import overlap
from gavel.geometry import iou
from gavel.overlap import iou_matrix, union_area, union_iou, union_overlap

GRID = 24


@st.composite
def int_box(draw):
    x1 = draw(st.integers(0, GRID - 1))
    y1 = draw(st.integers(0, GRID - 1))
    x2 = draw(st.integers(x1 + 1, GRID))
    y2 = draw(st.integers(y1 + 1, GRID))
    return (float(x1), float(y1), float(x2), float(y2))


def raster(boxes) -> np.ndarray:
    """Integer boxes painted on a unit grid: exact for integer corners."""
    mask = np.zeros((GRID, GRID), dtype=bool)
    for x1, y1, x2, y2 in boxes:
        mask[int(y1) : int(y2), int(x1) : int(x2)] = True
    return mask


@settings(max_examples=300, deadline=None)
@given(st.lists(int_box(), min_size=0, max_size=6))
def test_union_area_matches_raster(boxes):
    assert union_area(boxes) == raster(boxes).sum()


@settings(max_examples=300, deadline=None)
@given(st.lists(int_box(), min_size=1, max_size=5), st.lists(int_box(), min_size=1, max_size=5))
def test_union_iou_matches_raster(pred, gold):
    p, g = raster(pred), raster(gold)
    expected = (p & g).sum() / (p | g).sum()
    assert union_iou(pred, gold) == pytest.approx(expected, rel=1e-12, abs=1e-12)


@st.composite
def float_box(draw):
    coords = st.floats(0, 1000, allow_nan=False, allow_infinity=False)
    x1, x2 = sorted((draw(coords), draw(coords)))
    y1, y2 = sorted((draw(coords), draw(coords)))
    return (x1, y1, x2 + 0.5, y2 + 0.5)


@settings(max_examples=200, deadline=None)
@given(st.lists(float_box(), min_size=1, max_size=5), st.lists(float_box(), min_size=1, max_size=5))
def test_union_iou_matches_shapely(pred, gold):
    shapely = pytest.importorskip("shapely")
    from shapely.geometry import box as shape_box
    from shapely.ops import unary_union

    p = unary_union([shape_box(*b) for b in pred])
    g = unary_union([shape_box(*b) for b in gold])
    expected = p.intersection(g).area / p.union(g).area
    assert shapely is not None
    assert union_iou(pred, gold) == pytest.approx(expected, rel=1e-9, abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(st.lists(int_box(), min_size=1, max_size=4), st.lists(int_box(), min_size=1, max_size=4))
def test_iou_matrix_matches_pairwise(pred, gold):
    matrix = iou_matrix(pred, gold)
    for i, a in enumerate(pred):
        for j, b in enumerate(gold):
            assert matrix[i, j] == pytest.approx(iou(a, b))


@settings(max_examples=200, deadline=None)
@given(st.lists(int_box(), min_size=1, max_size=4), int_box(), int_box())
def test_spraying_boxes_away_from_gold_cannot_raise_union_iou(pred, gold, extra):
    if (raster([extra]) & raster([gold])).any():
        return  # only boxes that miss the gold are 'sprayed'
    assert union_iou([*pred, extra], [gold]) <= union_iou(pred, [gold]) + 1e-12


def test_hand_worked_union_iou():
    # Gold: two unit squares side by side, area 2. Prediction: one 2x1 box covering both.
    assert union_iou([(0, 0, 2, 1)], [(0, 0, 1, 1), (1, 0, 2, 1)]) == 1.0
    # Prediction covers only the left square: intersection 1, union 2.
    assert union_iou([(0, 0, 1, 1)], [(0, 0, 1, 1), (1, 0, 2, 1)]) == 0.5
    # Overlapping predictions are not double-counted: union area 3, gold area 2 inside it.
    assert union_iou([(0, 0, 2, 1), (1, 0, 3, 1)], [(0, 0, 2, 1)]) == pytest.approx(2 / 3)
    assert union_iou([], [(0, 0, 1, 1)]) == 0.0


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(int_box(), max_size=4), st.lists(int_box(), max_size=4)), max_size=30
    )
)
def test_batch_over_mixed_samples_matches_raster_per_sample(samples):
    """Grouping by box counts must not mix samples up: check every sample of a batch."""
    preds = [p for p, _ in samples]
    golds = [g for _, g in samples]
    overlap = union_overlap(preds, golds)
    for i, (pred, gold) in enumerate(samples):
        p, g = raster(pred), raster(gold)
        if pred and gold:
            assert overlap.inter[i] == (p & g).sum()
            assert overlap.area_pred[i] == p.sum()
            assert overlap.area_gold[i] == g.sum()
        else:
            assert overlap.iou[i] == 0.0


def test_many_boxes_in_one_sample():
    boxes = [(float(i), 0.0, float(i) + 2.0, 1.0) for i in range(20)]
    assert union_area(boxes) == raster(boxes).sum() == 21


def test_hundreds_of_boxes_on_one_cell_still_cover_it():
    # 256 copies of one box: counting the boxes over a cell in 8 bits would wrap to 0.
    boxes = [(2.0, 3.0, 7.0, 9.0)] * 256
    assert union_area(boxes) == 30.0
    assert union_iou(boxes, [(2.0, 3.0, 7.0, 9.0)]) == 1.0


@settings(max_examples=40, deadline=None)
@given(st.lists(int_box(), min_size=1, max_size=12), st.lists(int_box(), min_size=1, max_size=12))
def test_the_counted_cover_and_the_banded_sum_match_raster(pred, gold):
    """The two ways used for samples with many boxes (a difference array instead of the
    einsum; bands of grid rows when one grid exceeds the cell budget) give the same areas."""
    p, g = raster(pred), raster(gold)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(overlap, "EINSUM_BOXES", 0)
        patch.setattr(overlap, "CELL_BUDGET", 7)  # a few grid rows per band
        result = union_overlap([pred], [gold])
    assert result.area_pred[0] == p.sum()
    assert result.area_gold[0] == g.sum()
    assert result.inter[0] == (p & g).sum()


def test_the_cell_budget_bounds_a_chunk():
    preds = [[(0.0, 0.0, 1.0 + i, 1.0)] * 3 for i in range(50)]
    golds = [[(0.0, 0.0, 2.0, 2.0)] * 2 for _ in range(50)]
    chunks = [len(idx) for idx, _, _ in overlap.grouped(preds, golds)]
    per_chunk = overlap.CELL_BUDGET // overlap.grid_cells(3, 2)
    assert sum(chunks) == 50 and max(chunks) <= min(per_chunk, overlap.CHUNK)


def test_thousands_of_boxes_are_summed_in_bands_exactly():
    """2,000 boxes and their gold: a grid of 16 million cells, more than the cell budget, so it
    is summed a band of rows at a time; integer corners make every sum exact."""
    rng = np.random.default_rng(0)
    side = 100
    corner = rng.integers(0, side - 1, size=(2000, 2))
    far = np.minimum(corner + rng.integers(1, 20, size=(2000, 2)), side)
    pred = [tuple(map(float, b)) for b in np.hstack([corner, far])]
    gold = [(10.0, 20.0, 60.0, 90.0), (50.0, 0.0, 100.0, 30.0)]
    assert overlap.grid_cells(len(pred), len(gold)) > overlap.CELL_BUDGET
    painted = np.zeros((side, side), dtype=bool)
    for x1, y1, x2, y2 in pred:
        painted[int(y1) : int(y2), int(x1) : int(x2)] = True
    truth = np.zeros((side, side), dtype=bool)
    for x1, y1, x2, y2 in gold:
        truth[int(y1) : int(y2), int(x1) : int(x2)] = True
    result = union_overlap([pred], [gold])
    assert result.area_pred[0] == painted.sum()
    assert result.area_gold[0] == truth.sum()
    assert result.inter[0] == (painted & truth).sum()


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(int_box(), max_size=3), st.lists(int_box(), max_size=3)), max_size=40
    )
)
def test_groups_hold_each_sample_once_with_its_own_boxes_in_index_order(samples):
    """Every sample with boxes on both sides comes in exactly one chunk, with its own boxes;
    a group's samples in index order, the groups in the order their first sample comes."""
    preds = [p for p, _ in samples]
    golds = [g for _, g in samples]
    seen, firsts = [], []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(overlap, "CHUNK", 3)  # groups cut into several chunks
        for idx, pred, gold in overlap.grouped(preds, golds):
            members = idx.tolist()
            assert members == sorted(members)
            for row, i in enumerate(members):
                assert [tuple(b) for b in pred[row].tolist()] == preds[i]
                assert [tuple(b) for b in gold[row].tolist()] == golds[i]
            if not seen or (len(preds[seen[-1]]), len(golds[seen[-1]])) != (
                len(preds[members[0]]),
                len(golds[members[0]]),
            ):
                firsts.append(members[0])
            seen += members
    both = [i for i, (p, g) in enumerate(samples) if p and g]
    assert sorted(seen) == both
    assert firsts == sorted(firsts)


def test_box_lists_of_different_lengths_are_refused():
    with pytest.raises(ValueError, match="2 predicted box lists for 1 gold"):
        list(overlap.grouped([[], []], [[]]))
