"""Verification (the V of GAVEL): is the caption hallucinated or clean?

Hallucinated is the positive class. A sample whose verdict could not be obtained (unparseable,
model error, missing prediction) counts as wrong: it is placed in the cell of the opposite class
(a false negative when the gold is hallucinated, a false positive when it is clean).
"""

from __future__ import annotations

import numpy as np

from gavel.metrics.stats import multinomial_draws, percentile_interval

CELLS = ("tp", "fp", "fn", "tn")


def confusion(truth: np.ndarray, predicted: np.ndarray) -> dict[str, int]:
    """``predicted`` holds 1 (hallucinated), 0 (clean) or -1 (no verdict: counted as wrong)."""
    truth = truth.astype(bool)
    said_positive = (predicted == 1) | ((predicted == -1) & ~truth)
    return {
        "tp": int(np.sum(truth & said_positive)),
        "fp": int(np.sum(~truth & said_positive)),
        "fn": int(np.sum(truth & ~said_positive)),
        "tn": int(np.sum(~truth & ~said_positive)),
    }


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den > 0)
    return out


def rates(tp, fp, fn, tn) -> dict[str, np.ndarray]:
    """Accuracy, precision, recall and F1 in percent; a ratio with a zero denominator is 0."""
    precision = _ratio(tp, tp + fp)
    recall = _ratio(tp, tp + fn)
    return {
        "accuracy": 100.0 * _ratio(tp + tn, tp + fp + fn + tn),
        "precision": 100.0 * precision,
        "recall": 100.0 * recall,
        "f1": 100.0 * _ratio(2 * precision * recall, precision + recall),
    }


def verification_metrics(cells: dict[str, int]) -> dict[str, float | int | None]:
    n = sum(cells.values())
    if n == 0:
        return {"accuracy": None, "precision": None, "recall": None, "f1": None, "n": 0}
    values = rates(*(cells[c] for c in CELLS))
    metrics: dict[str, float | int | None] = {name: float(v) for name, v in values.items()}
    return metrics | {"n": n, **cells}


def verification_intervals(
    cells: dict[str, int], *, resamples: int, level: float, rng: np.random.Generator
) -> dict[str, list[float] | None]:
    """Intervals for all four rates from one set of resampled confusion matrices."""
    draws = multinomial_draws(np.array([cells[c] for c in CELLS]), resamples=resamples, rng=rng)
    if draws is None:
        return dict.fromkeys(("accuracy", "precision", "recall", "f1"))
    return {name: percentile_interval(v, level) for name, v in rates(*draws.T).items()}
