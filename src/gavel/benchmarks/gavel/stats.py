"""Descriptive statistics of a GAVEL data file (``gavel data stats``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from gavel.benchmarks.gavel.data import GavelLoader
from gavel.errors import DataError
from gavel.geometry import area
from gavel.metrics.grounding import box_size_histogram


def _summary(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"mean": None, "median": None, "min": None, "max": None}
    arr = np.asarray(values, dtype=np.float64)
    return {
        "mean": float(arr.mean()),
        "median": float(np.median(arr)),
        "min": float(arr.min()),
        "max": float(arr.max()),
    }


def data_stats(path: str | Path, image_root: str | Path | None = None) -> dict[str, Any]:
    """Counts per category, source and split; caption length; boxes per sample; box sizes.

    Streams the file: only the small per-sample numbers are kept.
    """
    loader = GavelLoader(path, image_root)
    categories: Counter[str] = Counter()
    sources: Counter[str] = Counter()
    splits: Counter[str] = Counter()
    boxes_per_sample: Counter[int] = Counter()
    words: list[float] = []
    areas: list[float] = []
    images: set[str] = set()
    for sample in loader:
        categories[sample.column] += 1
        sources[sample.source or "unknown"] += 1
        splits[sample.split or "unspecified"] += 1
        images.add(sample.image)
        words.append(len(sample.caption.split()))
        if sample.hallucinated:
            boxes_per_sample[len(sample.boxes)] += 1
        areas.extend(area(b) for b in sample.boxes)
    if not loader.report.samples:
        raise DataError(path, None, None, "no samples in file (empty or blank lines only)")
    hallucinated = sum(v for k, v in categories.items() if k != "No hall.")
    return {
        "file": str(path),
        "sha256": loader.sha256,
        "samples": loader.report.samples,
        "images": len(images),
        "hallucinated": hallucinated,
        "per_category": dict(categories.most_common()),
        "per_source": dict(sources.most_common()),
        "per_split": dict(splits.most_common()),
        "caption_words": _summary(words),
        "boxes_per_hallucinated_sample": {
            "mean": (sum(k * v for k, v in boxes_per_sample.items()) / hallucinated)
            if hallucinated
            else None,
            "distribution": {str(k): v for k, v in sorted(boxes_per_sample.items())},
        },
        "box_area_pixels": _summary(areas),
        "box_size_hist": box_size_histogram(np.asarray(areas)),
        "gold_boxes_clipped": loader.report.clipped_boxes,
    }
