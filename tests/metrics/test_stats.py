"""The count-based bootstrap must agree with explicit resampling of samples."""

from __future__ import annotations

import numpy as np
import pytest

from gavel.metrics.stats import bootstrap_values, percentile_interval, proportion_interval
from gavel.metrics.verification import CELLS, rates, verification_intervals


def test_proportion_interval_matches_explicit_resampling():
    values = np.array([1] * 37 + [0] * 63, dtype=float)
    fast = proportion_interval(37, 100, resamples=20_000, level=0.95, rng=np.random.default_rng(1))
    slow = bootstrap_values(
        values, lambda v: 100 * v.mean(), resamples=20_000, rng=np.random.default_rng(2)
    )
    assert fast == pytest.approx(slow, abs=1.01)  # Monte Carlo error on a percent scale


def test_verification_intervals_match_explicit_resampling():
    rng = np.random.default_rng(3)
    truth = rng.random(300) < 0.6
    predicted = np.where(rng.random(300) < 0.75, truth, ~truth).astype(int)
    cell_of = np.select(
        [truth & (predicted == 1), ~truth & (predicted == 1), truth & (predicted == 0)],
        [0, 1, 2],
        default=3,
    )
    cells = {name: int(np.sum(cell_of == i)) for i, name in enumerate(CELLS)}
    fast = verification_intervals(cells, resamples=10_000, level=0.95, rng=np.random.default_rng(4))

    slow_rng = np.random.default_rng(5)
    draws = []
    for _ in range(10_000):
        sample = cell_of[slow_rng.integers(0, len(cell_of), len(cell_of))]
        draws.append(np.bincount(sample, minlength=4))
    slow_rates = rates(*np.array(draws).T)
    for name in ("accuracy", "precision", "recall", "f1"):
        assert fast[name] == pytest.approx(percentile_interval(slow_rates[name]), abs=1.0)


def test_intervals_are_seeded():
    first = proportion_interval(5, 20, resamples=500, level=0.95, rng=np.random.default_rng(7))
    second = proportion_interval(5, 20, resamples=500, level=0.95, rng=np.random.default_rng(7))
    assert first == second


def test_no_data_gives_no_interval():
    assert proportion_interval(0, 0, resamples=100, level=0.95, rng=np.random.default_rng()) is None
