"""Exact agreement, quadratic-weighted kappa, Spearman, and pooling several judges."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gavel.metrics.agreement import (
    OVERALL,
    agreement,
    agreement_by_column,
    column_order,
    confusion,
    exact_agreement,
    majority_score,
    mean_score,
    quadratic_weighted_kappa,
    round_half_up,
    spearman,
)

# A worked example, by hand:
#
#   a = 1 2 3 4,  b = 1 2 4 4
#   exact: 3 of 4 equal -> 75 %
#   kappa: observed mean squared difference (0 + 0 + 1 + 0) / 4 = 1/4; by chance, the mean of
#   (a_i - b_j)^2 over all 16 (i, j):  a=1: 0+1+9+9 = 19, a=2: 1+0+4+4 = 9, a=3: 4+1+1+1 = 7,
#   a=4: 9+4+0+0 = 13 -> 48 / 16 = 3; kappa = 1 - (1/4) / 3 = 11/12
#   (the weights' 1/(k-1)^2 divides both and cancels).
#   Spearman: ranks a = 1 2 3 4, b = 1 2 3.5 3.5 (the tie shares 3 and 4); centred
#   a: -1.5 -0.5 0.5 1.5, b: -1.5 -0.5 1 1; sum of products 2.25 + 0.25 + 0.5 + 1.5 = 4.5,
#   sums of squares 5 and 4.5; rho = 4.5 / sqrt(5 * 4.5) = sqrt(0.9).
A = [1, 2, 3, 4]
B = [1, 2, 4, 4]


def test_worked_example_by_hand():
    assert exact_agreement(A, B) == 75.0
    assert quadratic_weighted_kappa(A, B) == pytest.approx(11 / 12)
    assert spearman(A, B) == pytest.approx(math.sqrt(0.9))
    assert agreement(A, B) == {
        "n": 4,
        "exact": 75.0,
        "qwk": pytest.approx(11 / 12),
        "spearman": pytest.approx(math.sqrt(0.9)),
    }


def test_complete_reversal_is_minus_one():
    # observed (1-5)^2 and (5-1)^2 -> mean 16; by chance the four (i, j): 16, 0, 0, 16 -> 8.
    assert quadratic_weighted_kappa([1, 5], [5, 1]) == pytest.approx(1 - 16 / 8)
    assert spearman([1, 5], [5, 1]) == pytest.approx(-1.0)


def _kappa_by_pairs(a: list[int], b: list[int]) -> float:
    """Weighted kappa written another way: squared differences of the matched samples against
    those of every sample of one rater with every sample of the other (a double loop)."""
    n = len(a)
    observed = sum((a[i] - b[i]) ** 2 for i in range(n)) / n
    chance = sum((a[i] - b[j]) ** 2 for i in range(n) for j in range(n)) / (n * n)
    return 1 - observed / chance


@pytest.mark.parametrize("seed", range(20))
def test_kappa_matches_a_brute_force_definition(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    a = rng.integers(1, 6, size=n).tolist()
    b = np.clip(np.array(a) + rng.integers(-2, 3, size=n), 1, 5).tolist()
    if len(set(a)) == len(set(b)) == 1 and a[0] == b[0]:
        pytest.skip("undefined case, tested apart")
    assert quadratic_weighted_kappa(a, b) == pytest.approx(_kappa_by_pairs(a, b))


def _average_ranks(values: list[float]) -> list[float]:
    """1-based ranks, tied values sharing the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        stop = start
        while stop + 1 < len(order) and values[order[stop + 1]] == values[order[start]]:
            stop += 1
        for position in range(start, stop + 1):
            ranks[order[position]] = (start + stop) / 2 + 1
        start = stop + 1
    return ranks


def _pearson(x: list[float], y: list[float]) -> float:
    mx, my = sum(x) / len(x), sum(y) / len(y)
    cov = sum((p - mx) * (q - my) for p, q in zip(x, y, strict=True))
    return cov / math.sqrt(sum((p - mx) ** 2 for p in x) * sum((q - my) ** 2 for q in y))


@pytest.mark.parametrize("seed", range(10))
def test_spearman_is_pearson_of_average_ranks(seed):
    rng = np.random.default_rng(100 + seed)
    a = rng.integers(1, 6, size=25).tolist()
    b = (rng.integers(1, 6, size=25) + rng.integers(0, 2, size=25) / 2).tolist()  # fractional
    expected = _pearson(_average_ranks(a), _average_ranks(b))
    assert spearman(a, b) == pytest.approx(expected)


def test_undefined_cases_are_none():
    assert agreement([], []) == {"n": 0, "exact": None, "qwk": None, "spearman": None}
    # Both gave 3 to everything: agree fully, but no disagreement was possible by chance.
    assert agreement([3, 3, 3], [3, 3, 3]) == {"n": 3, "exact": 100.0, "qwk": None,
                                               "spearman": None}  # fmt: skip
    # One constant rater: no ranking to correlate. Kappa is 0: observed (1 + 0 + 1) / 3 equals
    # chance, each a_i = 3 against every b_j in 2, 3, 4 -> (1 + 0 + 1) / 3.
    assert spearman([3, 3, 3], [2, 3, 4]) is None
    assert quadratic_weighted_kappa([3, 3, 3], [2, 3, 4]) == pytest.approx(0.0)
    assert spearman([4], [2]) is None


def test_off_scale_and_mismatched_inputs_are_refused():
    with pytest.raises(ValueError, match="not on the scale"):
        quadratic_weighted_kappa([1, 6], [1, 2])
    with pytest.raises(ValueError, match="one score per sample"):
        agreement([1, 2], [1])


def test_confusion_rows_are_the_first_rater():
    counts = confusion([1, 1, 5], [2, 2, 5])
    assert counts[0, 1] == 2 and counts[4, 4] == 1 and counts.sum() == 3


def test_by_column_orders_columns_and_keeps_unknown_samples_in_all_only():
    a = [5, 4, 2, 1, 3]
    b = [5, 3, 2, 2, 3]
    columns = ["Color", "Color", "Act", "Act", None]
    rows = agreement_by_column(a, b, columns)
    assert list(rows) == [OVERALL, "Act", "Color"]  # Table 1 order, not first-seen
    assert rows[OVERALL]["n"] == 5 and rows["Act"]["n"] == 2 and rows["Color"]["n"] == 2
    # Act: a = 2 1, b = 2 2 -> exact 50 %, b constant -> no Spearman; kappa: observed
    # (0 + 1) / 2 = 1/2, by chance (0 + 0 + 1 + 1) / 4 = 1/2 -> 0.
    assert rows["Act"]["exact"] == 50.0 and rows["Act"]["spearman"] is None
    assert rows["Act"]["qwk"] == pytest.approx(0.0)
    assert column_order(["Other", "Zebra", "No hall.", "Act", None]) == [
        "Act", "No hall.", "Other", "Zebra",
    ]  # fmt: skip


def test_spearman_ranks_the_unrounded_mean():
    rounded = [2, 2, 3]  # means 1.67, 2.33, 3 rounded half up
    exact = [5 / 3, 7 / 3, 3.0]
    other = [1, 2, 3]
    plain = agreement(rounded, other)
    ranked = agreement(rounded, other, rank_a=exact)
    assert ranked["spearman"] == pytest.approx(1.0)
    # rounded: ranks 1.5 1.5 3 against 1 2 3 -> sum of products 0.75, squares 1.5 and 2.
    assert plain["spearman"] == pytest.approx(1.5 / math.sqrt(1.5 * 2))
    assert ranked["exact"] == plain["exact"] and ranked["qwk"] == plain["qwk"]


@pytest.mark.parametrize(
    ("total", "count", "expected"),
    [(5, 2, 3), (7, 2, 4), (3, 2, 2), (4, 3, 1), (5, 3, 2), (9, 4, 2), (10, 4, 3), (4, 1, 4)],
)
def test_round_half_up(total, count, expected):
    # 5/2 = 2.5 -> 3 and 3/2 = 1.5 -> 2 (Python's round gives 2 and 2), 9/4 = 2.25 -> 2,
    # 10/4 = 2.5 -> 3, 4/3 = 1.33 -> 1, 5/3 = 1.67 -> 2.
    assert round_half_up(total, count) == expected


def test_mean_score_gives_rounded_and_exact():
    assert mean_score([2, 3]) == (3, 2.5)
    assert mean_score([1, 2, 2]) == (2, pytest.approx(5 / 3))
    with pytest.raises(ValueError):
        mean_score([])


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ([4, 4, 2], 4),  # a clear majority
        ([2, 4], 2),  # tie {2, 4}: median 3, both as close -> the lower
        ([1, 3, 5], 3),  # tie {1, 3, 5}: the median itself
        ([5, 1, 4, 2], 2),  # tie {1, 2, 4, 5}: median 3, 2 and 4 as close -> 2
        ([3, 3, 4, 4, 1], 3),  # tie {3, 4} at two votes each; 1 is not tied
        ([5, 5, 1, 1, 3, 3], 3),  # tie {1, 3, 5}
        ([2], 2),
    ],
)
def test_majority_and_its_ties(scores, expected):
    assert majority_score(scores) == expected
