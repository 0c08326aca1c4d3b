"""Grounding accuracy A@t and the predicted/gold area ratio (the paper's Figure 3)."""

from __future__ import annotations

import itertools

import numpy as np

from gavel.metrics.stats import proportion_interval

THRESHOLDS = (0.3, 0.5, 0.7)
#: IoU within this distance below a threshold still counts as reaching it. The exact value of
#: an IoU such as 1/2 can come out as 0.49999999999999994 after float arithmetic on
#: non-integer corners; the protocol says IoU >= t is a hit, so rounding must not turn it into a miss.
IOU_TOLERANCE = 1e-9


def key(threshold: float) -> str:
    return f"A@{threshold:g}"


def hits(ious: np.ndarray, threshold: float) -> np.ndarray:
    return ious >= threshold - IOU_TOLERANCE


def grounding_accuracy(ious: np.ndarray, thresholds=THRESHOLDS) -> dict[str, float | None]:
    """A@t in percent over the given IoUs (one per sample with a gold box; failures are 0)."""
    if len(ious) == 0:
        return {key(t): None for t in thresholds}
    return {key(t): float(100.0 * hits(ious, t).mean()) for t in thresholds}


def grounding_intervals(
    ious: np.ndarray,
    *,
    resamples: int,
    level: float,
    rng: np.random.Generator,
    thresholds=THRESHOLDS,
) -> dict[str, list[float] | None]:
    n = len(ious)
    return {
        key(t): proportion_interval(
            int(hits(ious, t).sum()), n, resamples=resamples, level=level, rng=rng
        )
        for t in thresholds
    }


def area_ratio_summary(log2_ratios: np.ndarray) -> dict[str, float | int | None]:
    """Median and quartiles of log2(Area(pred) / Area(gold)) over samples with a valid box."""
    if len(log2_ratios) == 0:
        return {"n": 0, "median_log2": None, "q1_log2": None, "q3_log2": None, "mean_log2": None}
    q1, median, q3 = np.quantile(log2_ratios, [0.25, 0.5, 0.75])
    return {
        "n": len(log2_ratios),
        "median_log2": float(median),
        "q1_log2": float(q1),
        "q3_log2": float(q3),
        "mean_log2": float(np.mean(log2_ratios)),
        "median_ratio": float(2.0**median),
    }


#: Decade bins of pixel area for the box-size histogram (the paper's Figure 6).
SIZE_BIN_EDGES = tuple(10.0**k for k in range(0, 8))


def size_bin_label(low: float, high: float | None) -> str:
    if high is None:
        return f">=1e{round(np.log10(low))}"
    return f"1e{round(np.log10(low))}-1e{round(np.log10(high))}"


def box_size_histogram(areas: np.ndarray) -> dict[str, int]:
    """Counts of boxes per decade of pixel area: ``<1e1``, ``1e1-1e2``, …, ``>=1e7``."""
    areas = np.asarray(areas, dtype=np.float64)
    edges = SIZE_BIN_EDGES
    hist = {f"<1e{round(np.log10(edges[1]))}": int(np.sum(areas < edges[1]))}
    for low, high in itertools.pairwise(edges[1:]):
        hist[size_bin_label(low, high)] = int(np.sum((areas >= low) & (areas < high)))
    hist[size_bin_label(edges[-1], None)] = int(np.sum(areas >= edges[-1]))
    return hist
