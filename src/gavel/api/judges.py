"""Judges as functions: how far judges agree (``gavel judge-agreement``) and the offline
judge's calibration (``gavel judge-calibrate``).

Both commands are shells over these two functions, so a notebook that compares a cheap judge
with people, or refits the offline judge, gets the numbers and files the commands give. The
result objects write and render on request, in the order the commands do, so that nothing is
written before the caller has seen the warnings.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gavel.errors import ConfigError
from gavel.io.files import atomic_write_bytes
from gavel.judge.unavailable import JudgeUnavailable
from gavel.report.tables import FORMATS, render
from gavel.setting_checks import MAX_SEED, Bound, as_path, check_choice
from gavel.synth.difficulty import DIFFICULTIES

__all__ = [
    "DIFFICULTIES",
    "FORMATS",
    "Agreement",
    "Calibration",
    "JudgeUnavailable",
    "calibrate_judge",
    "judge_agreement",
]


@dataclass(frozen=True)
class Agreement:
    """Every pair's agreement: ``report`` is what ``--out`` writes (raters, shared samples,
    pairs); ``warnings`` name the raters with samples not in every file (left out)."""

    report: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    def json(self) -> str:
        """The report as ``--out`` and ``--format json`` give it (indented, one final newline)."""
        return json.dumps(self.report, indent=2, ensure_ascii=False) + "\n"

    def table(self, style: str = "table") -> str:
        """One row per pair and column, in one of :data:`FORMATS` (``json``: :meth:`json`)."""
        if style == "json":
            return self.json()
        from gavel.judge.agreement import agreement_table

        check_choice("--format", style, FORMATS)
        return render(agreement_table(self.report), style)

    def save(self, out: str | Path | None = None, plot: str | Path | None = None) -> None:
        """Write the JSON report to ``out`` and the pairs' confusion heatmaps (PNG) to ``plot``,
        each whole or not at all."""
        if out is not None:
            atomic_write_bytes(as_path("--out", out), self.json().encode())
        if plot is not None:
            from gavel.report.plots import score_agreement_plot

            atomic_write_bytes(as_path("--plot", plot), score_agreement_plot(self.report["pairs"]))


def judge_agreement(
    files: Sequence[str | Path],
    *,
    judges: Sequence[str | Path] = (),
    labels: Sequence[str] = (),
    reference: str | Path | None = None,
    reference_label: str | None = None,
) -> Agreement:
    """Compare the per-sample 1–5 scores of ``files`` and ``judges`` (and ``reference``) as
    ``gavel judge-agreement FILES --judge ... --reference ...`` does.

    Each path is a results.json of ``gavel score --judge``, a .scores.jsonl, JSONL of
    ``{"id", "score", "column"}`` or a JSON object of id -> score. With three judges in all, or
    two given as ``judges``, their per-sample mean and majority are compared too. ``labels``
    name the judges in order (default: the judge a file names, else its file name).
    """
    from gavel.judge.agreement import (
        MAJORITY,
        MEAN,
        agreement_report,
        unique_labels,
        unmatched_warnings,
    )
    from gavel.judge.score_files import read_scores

    files, judges = _several(files), _several(judges)
    paths = [*files, *judges]
    if len(paths) + (reference is not None) < 2:
        raise ConfigError("give at least two score files (FILES, --judge), or one and --reference")
    if len(labels) > len(paths):
        raise ConfigError(f"{len(labels)} --label for {len(paths)} judges")
    judge_scores = [read_scores(p) for p in paths]
    reference_scores = read_scores(reference) if reference is not None else None
    pool = len(paths) >= 3 or len(judges) >= 2
    names = [*labels, *(f.label for f in judge_scores[len(labels) :])]
    if reference_scores is not None:
        names.append(reference_label or reference_scores.label)
    unique = unique_labels(names, {MEAN, MAJORITY} if pool else set())
    reference_name = unique.pop() if reference_scores is not None else None
    report = agreement_report(judge_scores, unique, reference_scores, reference_name, pool=pool)
    return Agreement(report, unmatched_warnings(report))


@dataclass(frozen=True)
class Calibration:
    """The offline judge's fitted thresholds and their agreement with the rule-based
    reference: ``result`` is the calibration file's content."""

    result: dict[str, Any]

    def summary(self) -> str:
        """The agreement numbers as ``gavel judge-calibrate`` prints them."""
        from gavel.judge.calibration import summary_table

        return summary_table(self.result)

    def save(self, out: str | Path) -> None:
        """Write the calibration file (the offline judge reads it with ``calibration=``)."""
        out = as_path("--out", out)
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(out, (json.dumps(self.result, indent=1) + "\n").encode())


def calibrate_judge(
    n: int = 200,
    *,
    seed: int = 0,
    heldout_seed: int = 1,
    difficulty: str = "medium",
    progress: bool = False,
) -> Calibration:
    """Fit the offline judge's thresholds on ``n`` synthetic samples of ``seed`` and measure
    them on ``n`` of ``heldout_seed``, as ``gavel judge-calibrate`` does: same arguments, same
    file. :class:`JudgeUnavailable` when the offline judge's model is not installed."""
    from gavel.judge.calibration import calibrate

    n = int(Bound(int, 16).check("--n", n))
    seed, heldout_seed = (int(Bound(int, 0, MAX_SEED).check(f, v))
                          for f, v in (("--seed", seed), ("--heldout-seed", heldout_seed)))  # fmt: skip
    check_choice("--difficulty", difficulty, list(DIFFICULTIES))
    return Calibration(calibrate(n, seed, heldout_seed, difficulty, progress=progress))


def _several(paths: str | Path | Sequence[str | Path]) -> list[str | Path]:
    """One path given alone is one file, not the characters of its name."""
    return [paths] if isinstance(paths, str | Path) else list(paths)
