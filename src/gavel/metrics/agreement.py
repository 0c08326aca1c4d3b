"""Agreement between two raters of the same samples on the judge's 1–5 scale.

Three numbers, because each hides something the others show:

- exact agreement: the share of samples given the same score (easy to read, but blind to how
  far apart the disagreements are);
- quadratic-weighted Cohen's kappa: agreement beyond chance, where a 1-vs-5 disagreement costs
  sixteen times a 1-vs-2 one (the usual choice for ordinal ratings);
- Spearman's rank correlation: do the raters order the samples alike, whatever their offsets.

Inputs are integer scores of the same samples in the same order; samples either rater could
not score are removed by the caller (and counted there).

Several judges can also be pooled into one rater per sample (:func:`mean_score`,
:func:`majority_score`), to ask whether a panel agrees with people better than any one judge.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from gavel.records import CATEGORY_COLUMNS

#: The judge's scale.
SCALE = (1, 2, 3, 4, 5)

#: The row of every sample, whatever its category.
OVERALL = "all"

#: One rater's scores, in sample order: a list, or the array the functions hand each other.
IntScores = Sequence[int] | np.ndarray
Scores = Sequence[float] | np.ndarray


def _pair(a: Scores, b: Scores, dtype: type = np.int64) -> tuple[np.ndarray, np.ndarray]:
    first: np.ndarray = np.asarray(a, dtype=dtype)
    second: np.ndarray = np.asarray(b, dtype=dtype)
    if first.shape != second.shape or first.ndim != 1:
        raise ValueError("both raters need one score per sample, in the same order")
    return first, second


def exact_agreement(a: IntScores, b: IntScores) -> float | None:
    """Percentage of samples with the same score; None for no samples."""
    first, second = _pair(a, b)
    return None if first.size == 0 else 100.0 * float(np.mean(first == second))


def confusion(a: IntScores, b: IntScores, scale: Sequence[int] = SCALE) -> np.ndarray:
    """Counts of each (a's score, b's score): rows are ``a``, columns ``b``, in ``scale`` order."""
    first, second = _pair(a, b)
    levels = {value: index for index, value in enumerate(scale)}
    try:
        rows = np.array([levels[int(v)] for v in first], dtype=np.int64)
        cols = np.array([levels[int(v)] for v in second], dtype=np.int64)
    except KeyError as error:
        raise ValueError(f"score {error.args[0]} is not on the scale {tuple(scale)}") from None
    counts = np.zeros((len(scale), len(scale)), dtype=np.int64)
    np.add.at(counts, (rows, cols), 1)
    return counts


def quadratic_weighted_kappa(
    a: IntScores, b: IntScores, scale: Sequence[int] = SCALE
) -> float | None:
    """Cohen's kappa with weights ``(i - j)^2 / (k - 1)^2`` over the categories ``scale``.

    ``1 - sum(w * observed) / sum(w * expected)``, where ``expected`` is the outer product of
    the two raters' marginal distributions. None when undefined: no samples, or both raters
    gave one and the same score to everything (no disagreement is possible by chance).
    """
    observed = confusion(a, b, scale).astype(float)
    if observed.sum() == 0:
        return None
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    k = len(scale)
    index = np.arange(k)
    weights = (index[:, None] - index[None, :]) ** 2 / (k - 1) ** 2
    chance = float((weights * expected).sum())
    if chance == 0.0:
        return None
    return 1.0 - float((weights * observed).sum()) / chance


def spearman(a: Scores, b: Scores) -> float | None:
    """Spearman's rho (ties get average ranks); None when either rater is constant.

    Values may be fractional (a mean of several judges), so they are not cast to integers.
    """
    first, second = _pair(a, b, dtype=np.float64)
    if first.size < 2 or np.all(first == first[0]) or np.all(second == second[0]):
        return None
    from scipy.stats import spearmanr

    return float(spearmanr(first, second).statistic)


def agreement(
    a: Sequence[int],
    b: Sequence[int],
    *,
    rank_a: Sequence[float] | None = None,
    rank_b: Sequence[float] | None = None,
) -> dict[str, float | int | None]:
    """All three numbers and the sample count, as one record for tables and JSON.

    ``rank_a``/``rank_b`` replace a rater's integer scores for Spearman only: a mean of judges
    is rounded for exact agreement and kappa (which need the 1–5 categories) but ranks better
    unrounded (rounding would tie 2.67 and 3.33, both 3, and split 3.33 and 3.5 into 3 and 4).
    """
    first, second = _pair(a, b)
    return {
        "n": int(first.size),
        "exact": exact_agreement(first, second),
        "qwk": quadratic_weighted_kappa(first, second),
        "spearman": spearman(
            first if rank_a is None else rank_a, second if rank_b is None else rank_b
        ),
    }


def column_order(columns: Sequence[str | None]) -> list[str]:
    """The columns present, in Table 1's order; any other name after them, sorted."""
    present = {c for c in columns if c is not None}
    known = [c for c in CATEGORY_COLUMNS if c in present]
    return known + sorted(present - set(CATEGORY_COLUMNS))


def agreement_by_column(
    a: Sequence[int],
    b: Sequence[int],
    columns: Sequence[str | None],
    *,
    rank_a: Sequence[float] | None = None,
    rank_b: Sequence[float] | None = None,
) -> dict[str, dict[str, float | int | None]]:
    """:func:`agreement` over all samples (key ``"all"``), then per category column present.

    ``columns[i]`` is sample i's Table 1 column, or None when no file said (such a sample
    counts in ``"all"`` only).
    """
    if not len(a) == len(b) == len(columns):
        raise ValueError("scores and columns must have one entry per sample")
    rank_a = a if rank_a is None else rank_a
    rank_b = b if rank_b is None else rank_b
    rows = {OVERALL: agreement(a, b, rank_a=rank_a, rank_b=rank_b)}
    for column in column_order(columns):
        keep = [i for i, c in enumerate(columns) if c == column]
        rows[column] = agreement(
            [a[i] for i in keep],
            [b[i] for i in keep],
            rank_a=[rank_a[i] for i in keep],
            rank_b=[rank_b[i] for i in keep],
        )
    return rows


def round_half_up(total: int, count: int) -> int:
    """``total / count`` to the nearest integer, halves rounded up (2.5 -> 3, 3.5 -> 4).

    In integer arithmetic: Python's ``round`` sends halves to the even neighbour (2.5 -> 2,
    3.5 -> 4), which would pull pooled scores towards 2 and 4 for no reason.
    """
    if count <= 0:
        raise ValueError("no scores to average")
    return (2 * total + count) // (2 * count)


def mean_score(scores: Sequence[int]) -> tuple[int, float]:
    """The judges' mean score for one sample: (rounded half up, exact).

    The rounded value is the pooled rater for exact agreement and kappa; the exact one for
    Spearman.
    """
    if not scores:
        raise ValueError("no scores to average")
    total = sum(int(s) for s in scores)
    return round_half_up(total, len(scores)), total / len(scores)


def majority_score(scores: Sequence[int]) -> int:
    """The most common score for one sample; a tie goes to the lower median of the tied values.

    "Toward the median of the tied values, then the lower": with an odd number of tied values
    the middle one is their median; with an even number the two middle ones are equally close
    to it and the lower wins. So {2, 4} -> 2, {1, 3, 5} -> 3, {1, 2, 4, 5} -> 2: the choice
    stays central without inventing a score nobody gave, and a split panel leans strict.
    """
    if not scores:
        raise ValueError("no scores to pool")
    counts = Counter(int(s) for s in scores)
    top = max(counts.values())
    tied = sorted(value for value, count in counts.items() if count == top)
    return tied[(len(tied) - 1) // 2]
