"""Bootstrap confidence intervals.

The headline GAVEL metrics depend on the samples only through counts: A@t through the number of
hits, the verification metrics through the four cells of the confusion matrix. Resampling ``n``
samples with replacement then gives counts that are exactly multinomially distributed with the
observed proportions, so drawing those counts directly *is* the nonparametric bootstrap, at
``O(B)`` cost instead of ``O(n·B)``. ``tests/metrics/test_stats.py`` checks this against explicit
resampling. Statistics that are not functions of counts use :func:`bootstrap_values`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

DEFAULT_RESAMPLES = 1000
DEFAULT_LEVEL = 0.95


def percentile_interval(draws: np.ndarray, level: float = DEFAULT_LEVEL) -> list[float]:
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(draws, [alpha, 1.0 - alpha])
    return [float(low), float(high)]


def multinomial_draws(
    counts: np.ndarray, *, resamples: int, rng: np.random.Generator
) -> np.ndarray | None:
    """Resampled cell counts, shape ``(resamples, len(counts))``; None when there is no data."""
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    if n == 0 or resamples <= 0:
        return None
    return rng.multinomial(n, counts / n, size=resamples)


def bootstrap_values(
    values: np.ndarray,
    statistic: Callable[[np.ndarray], float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    rng: np.random.Generator,
) -> list[float] | None:
    """Percentile interval of any statistic by explicit resampling of per-sample values."""
    values = np.asarray(values)
    if len(values) == 0 or resamples <= 0:
        return None
    draws = np.array(
        [statistic(values[rng.integers(0, len(values), len(values))]) for _ in range(resamples)]
    )
    return percentile_interval(draws, level)


def proportion_interval(
    hits: int, total: int, *, resamples: int, level: float, rng: np.random.Generator
) -> list[float] | None:
    """Bootstrap interval of a proportion, in percent."""
    draws = multinomial_draws(np.array([hits, total - hits]), resamples=resamples, rng=rng)
    return None if draws is None else percentile_interval(100.0 * draws[:, 0] / total, level)
