"""Multi-box matching policies: how several predicted and gold boxes become one IoU per sample.

The GAVEL paper reports IoU accuracy but does not say how a sample with several boxes (counting
errors carry one box per counted object) is scored. Each answer is a named policy; the name is
recorded in every result so numbers made under different policies are never mixed up.

Policies work on whole runs at once (see :mod:`gavel.overlap`); :func:`match_one` scores a
single sample.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from gavel.geometry import Box
from gavel.overlap import UnionOverlap, grouped, pairwise_iou, union_overlap

Boxes = Sequence[Sequence[Box]]
#: (predicted boxes per sample, gold boxes per sample, their union overlap) -> IoU per sample.
MatchPolicy = Callable[[Boxes, Boxes, UnionOverlap], np.ndarray]

_POLICIES: dict[str, MatchPolicy] = {}
_DESCRIPTIONS: dict[str, str] = {}


def policy(name: str, description: str) -> Callable[[MatchPolicy], MatchPolicy]:
    """Register a matching policy under ``name`` (used by ``--match``)."""

    def register(fn: MatchPolicy) -> MatchPolicy:
        _POLICIES[name] = fn
        _DESCRIPTIONS[name] = description
        return fn

    return register


def get_policy(name: str) -> MatchPolicy:
    try:
        return _POLICIES[name]
    except KeyError:
        known = ", ".join(sorted(_POLICIES))
        raise ValueError(f"unknown matching policy {name!r}; choose one of: {known}") from None


def policy_names() -> list[str]:
    return list(_POLICIES)


def describe(name: str) -> str:
    return _DESCRIPTIONS[name]


def match_one(name: str, pred: Sequence[Box], gold: Sequence[Box]) -> float:
    """IoU of one sample under the named policy."""
    return float(get_policy(name)([pred], [gold], union_overlap([pred], [gold]))[0])


@policy("union", "IoU of the union region of the predicted boxes with that of the gold boxes")
def match_union(preds: Boxes, golds: Boxes, overlap: UnionOverlap) -> np.ndarray:
    return overlap.iou


@policy("max", "IoU of the best single predicted/gold pair")
def match_max(preds: Boxes, golds: Boxes, overlap: UnionOverlap) -> np.ndarray:
    out = np.zeros(len(preds))
    for idx, pred, gold in grouped(preds, golds):
        out[idx] = pairwise_iou(pred, gold).max(axis=(1, 2))
    return out


@policy(
    "hungarian",
    "one-to-one assignment maximizing total IoU; sum of matched IoUs / max(#pred, #gold)",
)
def match_hungarian(preds: Boxes, golds: Boxes, overlap: UnionOverlap) -> np.ndarray:
    # scipy.optimize costs a tenth of a second to import: only runs that ask for it pay.
    from scipy.optimize import linear_sum_assignment

    out = np.zeros(len(preds))
    for idx, pred, gold in grouped(preds, golds):
        matrices = pairwise_iou(pred, gold)
        denominator = max(pred.shape[1], gold.shape[1])
        for position, matrix in zip(idx, matrices, strict=True):
            rows, cols = linear_sum_assignment(matrix, maximize=True)
            out[position] = matrix[rows, cols].sum() / denominator
    return out
