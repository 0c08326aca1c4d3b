"""Box overlap for many samples at once.

Scoring 100,000 samples one IoU call at a time spends most of its time in the interpreter. Here
samples are grouped by their (number of predicted, number of gold) boxes, each group is one set of
numpy arrays, and the exact union computation runs on all of a group's samples together:

For one sample, the distinct x and y edges of all its boxes cut the plane into a grid whose cells
are each either inside a box or not (coordinate compression). The predicted region, the gold
region and their intersection are unions of cells, so their exact areas are sums of cell areas.
No rasterizing, no approximation.

The grid of a sample with ``k`` boxes in all has about ``(2k)^2`` cells, so the work is bounded
by cells, not samples: a group is cut into chunks of at most :data:`CELL_BUDGET` cells, and a
sample whose grid alone is larger is summed a band of grid rows at a time. Memory then stays
bounded whatever the number of boxes; time grows as ``k^2`` (which is why scoring caps the boxes
it reads from one answer: ``gavel.benchmarks.gavel.scoring``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from gavel.geometry import Box

#: Samples per numpy chunk at most (groups of samples with few boxes).
CHUNK = 8192
#: Grid cells one numpy step holds at most (samples x grid rows x grid columns): a few tens
#: of MB of temporaries, whatever the number of boxes.
CELL_BUDGET = 1 << 21
#: Boxes one sample may have on a side before its cover is counted with a difference array:
#: below, one einsum over the boxes is fastest (its uint8 counts cannot overflow); above, the
#: einsum's cost grows as the cube of the boxes and the difference array's as the square.
EINSUM_BOXES = 255


@dataclass
class UnionOverlap:
    """Per sample: area of the predicted union, of the gold union, and of their intersection."""

    inter: np.ndarray
    area_pred: np.ndarray
    area_gold: np.ndarray

    @property
    def iou(self) -> np.ndarray:
        denominator = self.area_pred + self.area_gold - self.inter
        out = np.zeros_like(self.inter)
        np.divide(self.inter, denominator, out=out, where=denominator > 0)
        return out


def grid_cells(kp: int, kg: int) -> int:
    """Cells of the grid of a sample with ``kp`` predicted and ``kg`` gold boxes."""
    edges = 2 * (kp + kg) - 1
    return edges * edges


def grouped(
    preds: Sequence[Sequence[Box]], golds: Sequence[Sequence[Box]]
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Yield ``(indices, P, G)`` with ``P`` of shape (m, kp, 4) and ``G`` (m, kg, 4) per group.

    A chunk holds at most :data:`CHUNK` samples and, unless one sample alone is larger, at most
    :data:`CELL_BUDGET` grid cells (which also bounds a (m, kp, kg) matrix of pairs). A group's
    samples come in index order, the groups in the order their first sample comes.

    Each side's numbers are streamed into one array at once and the groups are cut from it by
    index arithmetic: a Python step a sample, not one a box, is what a run of a million
    answers pays here."""
    n = len(preds)
    if len(golds) != n:
        raise ValueError(f"{n} predicted box lists for {len(golds)} gold ones")
    kp = np.fromiter(map(len, preds), dtype=np.int64, count=n)
    kg = np.fromiter(map(len, golds), dtype=np.int64, count=n)
    flat_p, start_p = _flat(preds, kp), np.cumsum(kp) - kp
    flat_g, start_g = _flat(golds, kg), np.cumsum(kg) - kg
    scored = np.flatnonzero((kp > 0) & (kg > 0))
    if not len(scored):
        return
    keys = kp[scored] * (int(kg.max()) + 1) + kg[scored]
    order = np.argsort(keys, kind="stable")  # within a group: index order
    members, keys = scored[order], keys[order]
    cuts = np.flatnonzero(keys[1:] != keys[:-1]) + 1
    firsts = np.concatenate([[0], cuts])
    lasts = np.concatenate([cuts, [len(keys)]])
    for first in np.argsort(members[firsts], kind="stable").tolist():
        group = members[firsts[first] : lasts[first]]
        p, g = int(kp[group[0]]), int(kg[group[0]])
        size = max(1, min(CHUNK, CELL_BUDGET // grid_cells(p, g)))
        for start in range(0, len(group), size):
            chunk = group[start : start + size]
            yield chunk, _rows(flat_p, start_p[chunk], p), _rows(flat_g, start_g[chunk], g)


def _flat(boxes: Sequence[Sequence[Box]], counts: np.ndarray) -> np.ndarray:
    """``(total boxes, 4)`` array of every box, sample after sample.

    Streaming the numbers through ``np.fromiter`` is two to three times faster than letting
    ``np.asarray`` discover the shape of a list of lists of tuples."""
    values = chain.from_iterable(chain.from_iterable(boxes))
    return np.fromiter(values, dtype=np.float64, count=4 * int(counts.sum())).reshape(-1, 4)


def _rows(flat: np.ndarray, starts: np.ndarray, k: int) -> np.ndarray:
    """``(len(starts), k, 4)``: the ``k`` boxes from each start."""
    return flat[starts[:, None] + np.arange(k)]


def _cover(boxes: np.ndarray, mid_x: np.ndarray, mid_y: np.ndarray) -> np.ndarray:
    """(m, X, Y) mask of grid cells whose centre lies inside any of the boxes."""
    if boxes.shape[1] > EINSUM_BOXES:
        return _cover_counted(boxes, mid_x, mid_y)
    in_x = (boxes[:, :, 0, None] < mid_x[:, None, :]) & (mid_x[:, None, :] < boxes[:, :, 2, None])
    in_y = (boxes[:, :, 1, None] < mid_y[:, None, :]) & (mid_y[:, None, :] < boxes[:, :, 3, None])
    if boxes.shape[1] == 1:
        return in_x[:, 0, :, None] & in_y[:, 0, None, :]
    return np.einsum("mkx,mky->mxy", in_x.astype(np.uint8), in_y.astype(np.uint8)) > 0


def _spans(low: np.ndarray, high: np.ndarray, mids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per box (m, k), the grid cells ``[start, stop)`` whose centre lies strictly between its
    two edges: the centres are sorted, so they form one run (found by bisection, sample by
    sample: only samples with hundreds of boxes come here)."""
    start = np.empty(low.shape, dtype=np.int64)
    stop = np.empty(high.shape, dtype=np.int64)
    for row, centres in enumerate(mids):
        start[row] = np.searchsorted(centres, low[row], side="right")
        stop[row] = np.searchsorted(centres, high[row], side="left")
    return start, np.maximum(start, stop)


def _cover_counted(boxes: np.ndarray, mid_x: np.ndarray, mid_y: np.ndarray) -> np.ndarray:
    """The same mask as :func:`_cover`, from a 2-D difference array of the boxes' cell spans
    (each box adds 1 to its cells): work in cells, not cells times boxes."""
    m = boxes.shape[0]
    x0, x1 = _spans(boxes[:, :, 0], boxes[:, :, 2], mid_x)
    y0, y1 = _spans(boxes[:, :, 1], boxes[:, :, 3], mid_y)
    rows, cols = mid_x.shape[1] + 1, mid_y.shape[1] + 1
    base = (np.arange(m) * (rows * cols))[:, None]
    corners = rows * cols * m
    up = np.concatenate([(base + x0 * cols + y0).ravel(), (base + x1 * cols + y1).ravel()])
    down = np.concatenate([(base + x0 * cols + y1).ravel(), (base + x1 * cols + y0).ravel()])
    steps = np.bincount(up, minlength=corners) - np.bincount(down, minlength=corners)
    counts = steps.reshape(m, rows, cols).cumsum(axis=1).cumsum(axis=2)
    return counts[:, :-1, :-1] > 0


def _grid(pred: np.ndarray, gold: np.ndarray):
    """The grid of each sample: cell centres along x and y, and each cell's area."""
    both = np.concatenate([pred, gold], axis=1)
    xs = np.sort(np.concatenate([both[:, :, 0], both[:, :, 2]], axis=1), axis=1)
    ys = np.sort(np.concatenate([both[:, :, 1], both[:, :, 3]], axis=1), axis=1)
    mid_x, mid_y = (xs[:, :-1] + xs[:, 1:]) / 2, (ys[:, :-1] + ys[:, 1:]) / 2
    return mid_x, mid_y, np.diff(xs, axis=1), np.diff(ys, axis=1)


def union_overlap(preds: Sequence[Sequence[Box]], golds: Sequence[Sequence[Box]]) -> UnionOverlap:
    """Exact union areas and intersection for every sample; zeros where a side has no box."""
    n = len(preds)
    result = UnionOverlap(np.zeros(n), np.zeros(n), np.zeros(n))
    for idx, pred, gold in grouped(preds, golds):
        if grid_cells(pred.shape[1], gold.shape[1]) > CELL_BUDGET:
            for position, one_pred, one_gold in zip(idx, pred, gold, strict=True):
                areas = _banded_areas(one_pred, one_gold)
                result.area_pred[position], result.area_gold[position] = areas[:2]
                result.inter[position] = areas[2]
            continue
        mid_x, mid_y, dx, dy = _grid(pred, gold)
        cell = dx[:, :, None] * dy[:, None, :]
        cover_p = _cover(pred, mid_x, mid_y)
        cover_g = _cover(gold, mid_x, mid_y)
        result.area_pred[idx] = (cell * cover_p).sum(axis=(1, 2))
        result.area_gold[idx] = (cell * cover_g).sum(axis=(1, 2))
        result.inter[idx] = (cell * (cover_p & cover_g)).sum(axis=(1, 2))
    return result


def _banded_areas(pred: np.ndarray, gold: np.ndarray) -> tuple[float, float, float]:
    """Predicted, gold and shared area of one sample whose grid exceeds the cell budget,
    summed over bands of grid rows (each band's sum is exact cell arithmetic as above; the
    bands are added in order, so the last bit may differ from one sum over the whole grid)."""
    mid_x, mid_y, dx, dy = (part[0] for part in _grid(pred[None], gold[None]))
    band = max(1, CELL_BUDGET // len(mid_y))
    totals = [0.0, 0.0, 0.0]
    for start in range(0, len(mid_x), band):
        rows = slice(start, start + band)
        cell = dx[rows, None] * dy[None, :]
        cover_p = _cover_counted(pred[None], mid_x[None, rows], mid_y[None])[0]
        cover_g = _cover_counted(gold[None], mid_x[None, rows], mid_y[None])[0]
        totals[0] += float((cell * cover_p).sum())
        totals[1] += float((cell * cover_g).sum())
        totals[2] += float((cell * (cover_p & cover_g)).sum())
    return totals[0], totals[1], totals[2]


def pairwise_iou(pred: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """(m, kp, kg) IoU of every predicted box with every gold box, per sample."""
    p, g = pred[:, :, None, :], gold[:, None, :, :]
    ix = np.clip(np.minimum(p[..., 2], g[..., 2]) - np.maximum(p[..., 0], g[..., 0]), 0, None)
    iy = np.clip(np.minimum(p[..., 3], g[..., 3]) - np.maximum(p[..., 1], g[..., 1]), 0, None)
    inter = ix * iy
    area_p = (p[..., 2] - p[..., 0]) * (p[..., 3] - p[..., 1])
    area_g = (g[..., 2] - g[..., 0]) * (g[..., 3] - g[..., 1])
    denominator = area_p + area_g - inter
    out = np.zeros_like(inter)
    np.divide(inter, denominator, out=out, where=denominator > 0)
    return out


def iou_matrix(pred: Sequence[Box], gold: Sequence[Box]) -> np.ndarray:
    """Pairwise IoU of one sample's boxes, shape ``(len(pred), len(gold))``."""
    p = np.asarray(pred, dtype=np.float64).reshape(1, -1, 4)
    g = np.asarray(gold, dtype=np.float64).reshape(1, -1, 4)
    return pairwise_iou(p, g)[0]


def union_area(boxes: Sequence[Box]) -> float:
    """Exact area of the union of one set of boxes."""
    return float(union_overlap([boxes], [boxes]).area_pred[0]) if boxes else 0.0


def union_iou(pred: Sequence[Box], gold: Sequence[Box]) -> float:
    """IoU of the region covered by ``pred`` with the region covered by ``gold``.

    Adding a box can only enlarge the predicted region, so boxes sprayed away from the gold
    lower this score: it cannot be gamed by quantity.
    """
    return float(union_overlap([pred], [gold]).iou[0])
