"""Multi-box matching policies: how several predicted and gold boxes become one IoU per sample.

The GAVEL paper reports IoU accuracy but does not say how a sample with several boxes (counting
errors carry one box per counted object) is scored. Each answer is a named policy; the name is
recorded in every result so numbers made under different policies are never mixed up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

from gavel.geometry import Box, iou_matrix, union_iou

MatchPolicy = Callable[[Sequence[Box], Sequence[Box]], float]

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


@policy("union", "IoU of the union region of the predicted boxes with that of the gold boxes")
def match_union(pred: Sequence[Box], gold: Sequence[Box]) -> float:
    return union_iou(pred, gold)


@policy("max", "IoU of the best single predicted/gold pair")
def match_max(pred: Sequence[Box], gold: Sequence[Box]) -> float:
    if not pred or not gold:
        return 0.0
    return float(iou_matrix(pred, gold).max())


@policy(
    "hungarian",
    "one-to-one assignment maximizing total IoU; sum of matched IoUs / max(#pred, #gold)",
)
def match_hungarian(pred: Sequence[Box], gold: Sequence[Box]) -> float:
    if not pred or not gold:
        return 0.0
    matrix = iou_matrix(pred, gold)
    rows, cols = linear_sum_assignment(matrix, maximize=True)
    return float(np.sum(matrix[rows, cols]) / max(len(pred), len(gold)))
