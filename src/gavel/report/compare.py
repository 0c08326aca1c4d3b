"""Is model A better than model B on the same samples? Paired bootstrap and McNemar's test.

Both runs' per-sample scores (``results.scores.jsonl`` beside each ``results.json``) are joined
on the unit each benchmark counts: a GAVEL sample, a DetailVerifyBench sample that both runs
scored, a VideoHallucer pair. For every headline metric the difference A − B gets a paired
percentile-bootstrap interval and p-value (samples resampled jointly, so per-sample difficulty
cancels), and binary metrics also get McNemar's exact test on the discordant samples.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from gavel.errors import DataError, GavelError
from gavel.io.jsonl import field_of, parse_json, refuse_non_finite
from gavel.io.reading import bounded_lines, read_regular
from gavel.io.run_files import check_run_files, scores_path
from gavel.metrics.grounding import IOU_TOLERANCE, THRESHOLDS, key

PerUnit = dict[str, dict[str, float]]


def _gavel_units(scores: list[dict[str, Any]]) -> PerUnit:
    units: PerUnit = {}
    for s in scores:
        values = {"accuracy": float(s.get("verdict_pred") == s["verdict_true"])}
        if "iou" in s and s["iou"] is not None:
            for t in THRESHOLDS:
                values[key(t)] = float(s["iou"] >= t - IOU_TOLERANCE)
        units[s["id"]] = values
    return units


def _detailverify_units(scores: list[dict[str, Any]]) -> PerUnit:
    names = ("token_precision", "token_recall", "token_f1", "token_iou")
    return {
        s["id"]: dict(zip(names, s["token"], strict=True))
        for s in scores
        if s.get("scored") and s.get("token") is not None
    }


def _videohallucer_units(scores: list[dict[str, Any]]) -> PerUnit:
    sides: dict[str, list[bool]] = defaultdict(list)
    for s in scores:
        sides[s["pair"]].append(bool(s.get("correct")))
    return {pair: {"paired_accuracy": float(all(c) and len(c) == 2)} for pair, c in sides.items()}


UNITS: dict[str, Callable[[list[dict[str, Any]]], PerUnit]] = {
    "gavel": _gavel_units,
    "detailverify": _detailverify_units,
    "videohallucer": _videohallucer_units,
}
BINARY = {"accuracy", "A@0.3", "A@0.5", "A@0.7", "paired_accuracy"}


@dataclass
class Comparison:
    metric: str
    n: int
    a: float
    b: float
    difference: float
    interval: list[float]
    p_bootstrap: float
    discordant: tuple[int, int] | None = None  # (A right & B wrong, A wrong & B right)
    p_mcnemar: float | None = None


class _Line(msgspec.Struct):
    id: str


class _GavelLine(_Line):
    verdict_true: bool
    verdict_pred: bool | None = None
    iou: float | None = None


class _DetailVerifyLine(_Line):
    scored: bool | None = None
    token: tuple[float, float, float, float] | None = None


class _VideoHallucerLine(_Line):
    pair: str
    correct: bool | None = None


#: The fields each benchmark's units are made of, and their types, checked line by line.
LINES: dict[str, type[_Line]] = {
    "gavel": _GavelLine,
    "detailverify": _DetailVerifyLine,
    "videohallucer": _VideoHallucerLine,
}


def read_run(results: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A run's results.json (or the run folder holding it) and its checked per-sample lines."""
    if results.is_dir():
        inside = results / "results.json"
        if not inside.is_file():
            raise DataError(results, None, None, "is a folder without results.json")
        results = inside
    try:
        payload = read_regular(results)
    except FileNotFoundError:
        raise DataError(results, None, None, "file not found") from None
    except OSError as error:
        raise DataError(results, None, None, f"cannot read ({error.strerror})") from None
    result = parse_json(payload, results)
    refuse_non_finite(result, results)  # as `gavel report` does
    if not isinstance(result, dict):
        raise DataError(results, None, None, "not a gavel results file (not a JSON object)")
    if not isinstance(result.get("benchmark"), str) or result["benchmark"] not in UNITS:
        raise DataError(results, None, "benchmark", "missing or unknown benchmark")
    if not isinstance(result.get("manifest"), dict):
        raise DataError(results, None, "manifest", "missing (not a results file of `gavel score`)")
    scores_file = scores_path(results)
    if not scores_file.is_file():
        raise DataError(
            scores_file, None, None, "per-sample scores not found (written by `gavel score --out`)"
        )
    check_run_files(results, result.get("files"))
    line_type = LINES[result["benchmark"]]
    scores = []
    first_line: dict[str, int] = {}
    with scores_file.open("rb") as handle:
        for number, line in enumerate(bounded_lines(handle, scores_file), start=1):
            if not line.strip():
                continue
            record = parse_json(line, scores_file, number)
            if not isinstance(record, dict):
                raise DataError(scores_file, number, None, "expected a JSON object")
            try:
                checked = msgspec.convert(record, line_type)
            except msgspec.ValidationError as error:
                message = str(error).split(" - at ")[0]
                raise DataError(scores_file, number, field_of(error), message) from None
            if checked.id in first_line:
                raise DataError(
                    scores_file, number, "id",
                    f"duplicate id {checked.id!r} (first on line {first_line[checked.id]})",
                )  # fmt: skip
            first_line[checked.id] = number
            scores.append(record)
    return result, scores


def mcnemar(a: np.ndarray, b: np.ndarray) -> tuple[tuple[int, int], float]:
    """Exact McNemar test: a binomial test of the discordant pairs against 1/2."""
    from scipy.stats import binomtest  # half a second to import: `gavel compare` alone pays

    only_a = int(np.sum((a == 1) & (b == 0)))
    only_b = int(np.sum((a == 0) & (b == 1)))
    if only_a + only_b == 0:
        return (0, 0), 1.0
    return (only_a, only_b), float(binomtest(only_a, only_a + only_b, 0.5).pvalue)


def paired_bootstrap(
    a: np.ndarray, b: np.ndarray, *, resamples: int, rng: np.random.Generator, level: float = 0.95
) -> tuple[list[float], float]:
    """Percentile interval of mean(a − b) over joint resamples, and a two-sided p-value."""
    diff = a - b
    n = len(diff)
    draws = np.empty(resamples)
    for start in range(0, resamples, 256):
        stop = min(resamples, start + 256)
        idx = rng.integers(0, n, size=(stop - start, n))
        draws[start:stop] = diff[idx].mean(axis=1)
    alpha = (1 - level) / 2
    low, high = np.quantile(draws, [alpha, 1 - alpha])
    p = min(1.0, 2 * min(float(np.mean(draws <= 0)), float(np.mean(draws >= 0))))
    return [float(low), float(high)], float(p)


def compare_runs(
    first: Path, second: Path, *, resamples: int = 2000, seed: int = 0
) -> tuple[str, list[Comparison], list[str]]:
    """(benchmark, one comparison per metric, warnings) for two scored runs."""
    result_a, scores_a = read_run(first)
    result_b, scores_b = read_run(second)
    benchmark = result_a["benchmark"]
    if result_b["benchmark"] != benchmark:
        raise GavelError(f"cannot compare a {benchmark} run with a {result_b['benchmark']} run")
    warnings = []
    if result_a["manifest"].get("data_sha256") != result_b["manifest"].get("data_sha256"):
        warnings.append(
            "the two runs were scored on different data files; only shared ids are compared"
        )
    units_a, units_b = UNITS[benchmark](scores_a), UNITS[benchmark](scores_b)
    shared = sorted(set(units_a) & set(units_b))
    if not shared:
        raise GavelError("the two runs have no scored sample in common")
    if len(shared) < max(len(units_a), len(units_b)):
        warnings.append(
            f"{len(shared)} shared units compared ({len(units_a)} in A, {len(units_b)} in B)"
        )
    rng = np.random.default_rng(seed)
    comparisons = []
    metrics = sorted(
        {m for u in shared for m in units_a[u]} & {m for u in shared for m in units_b[u]}
    )
    for metric in metrics:
        ids = [u for u in shared if metric in units_a[u] and metric in units_b[u]]
        a = np.array([units_a[u][metric] for u in ids])
        b = np.array([units_b[u][metric] for u in ids])
        interval, p = paired_bootstrap(a, b, resamples=resamples, rng=rng)
        comparison = Comparison(
            metric, len(ids), 100 * a.mean(), 100 * b.mean(), 100 * (a.mean() - b.mean()),
            [100 * v for v in interval], p,
        )  # fmt: skip
        if metric in BINARY:
            comparison.discordant, comparison.p_mcnemar = mcnemar(a, b)
        comparisons.append(comparison)
    return benchmark, comparisons, warnings
