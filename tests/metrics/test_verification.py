"""Verification metrics: hand-worked confusion matrices and the rule for missing verdicts."""

from __future__ import annotations

import numpy as np
import pytest

from gavel.metrics.verification import confusion, verification_metrics


def test_unresolved_verdicts_count_as_the_wrong_class():
    truth = np.array([1, 1, 1, 0, 0, 0], dtype=bool)
    predicted = np.array([1, 0, -1, 0, 1, -1])
    cells = confusion(truth, predicted)
    # -1 on a hallucinated sample is a miss (fn); -1 on a clean sample is a false alarm (fp).
    assert cells == {"tp": 1, "fp": 2, "fn": 2, "tn": 1}


def test_rates_by_hand():
    metrics = verification_metrics({"tp": 6, "fp": 2, "fn": 3, "tn": 9})
    assert metrics["accuracy"] == pytest.approx(100 * 15 / 20)
    assert metrics["precision"] == pytest.approx(100 * 6 / 8)
    assert metrics["recall"] == pytest.approx(100 * 6 / 9)
    p, r = 6 / 8, 6 / 9
    assert metrics["f1"] == pytest.approx(100 * 2 * p * r / (p + r))


def test_zero_denominators_give_zero_not_nan():
    metrics = verification_metrics({"tp": 0, "fp": 0, "fn": 0, "tn": 5})
    assert metrics["precision"] == 0.0
    assert metrics["recall"] == 0.0
    assert metrics["f1"] == 0.0
    assert metrics["accuracy"] == 100.0
