"""Matching policies against brute force and hand-worked cases."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gavel.geometry import iou
from gavel.matching import get_policy, match_one, policy_names

box = st.tuples(st.integers(0, 20), st.integers(0, 20), st.integers(1, 10), st.integers(1, 10)).map(
    lambda t: (float(t[0]), float(t[1]), float(t[0] + t[2]), float(t[1] + t[3]))
)


def brute_hungarian(pred, gold) -> float:
    """Best one-to-one assignment by trying every permutation."""
    small, large, pred_is_small = (
        (pred, gold, True) if len(pred) <= len(gold) else (gold, pred, False)
    )
    best = 0.0
    for chosen in itertools.permutations(range(len(large)), len(small)):
        total = sum(
            iou(small[i], large[j]) if pred_is_small else iou(large[j], small[i])
            for i, j in enumerate(chosen)
        )
        best = max(best, total)
    return best / max(len(pred), len(gold))


@settings(max_examples=150, deadline=None)
@given(st.lists(box, min_size=1, max_size=4), st.lists(box, min_size=1, max_size=4))
def test_hungarian_equals_brute_force(pred, gold):
    assert match_one("hungarian", pred, gold) == pytest.approx(brute_hungarian(pred, gold))


@settings(max_examples=150, deadline=None)
@given(st.lists(box, min_size=1, max_size=4), st.lists(box, min_size=1, max_size=4))
def test_max_equals_best_pair(pred, gold):
    expected = max(iou(p, g) for p in pred for g in gold)
    assert match_one("max", pred, gold) == pytest.approx(expected)


def test_policies_on_a_counting_error():
    # Four gold objects; the model finds two of them exactly.
    gold = [(0, 0, 10, 10), (20, 0, 30, 10), (40, 0, 50, 10), (60, 0, 70, 10)]
    pred = gold[:2]
    assert match_one("union", pred, gold) == pytest.approx(200 / 400)
    assert match_one("max", pred, gold) == 1.0
    assert match_one("hungarian", pred, gold) == pytest.approx(2 / 4)


def test_every_policy_gives_zero_without_boxes():
    for name in policy_names():
        assert match_one(name, [], [(0, 0, 1, 1)]) == 0.0


def test_unknown_policy_is_a_clear_error():
    with pytest.raises(ValueError, match="choose one of"):
        get_policy("best")
