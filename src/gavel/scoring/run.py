"""Scoring as :class:`~gavel.scoring.settings.ScoreSettings` say: the plan (data resolved,
benchmark settings, selection), the scores and the judge's, then the run's files."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gavel.benchmarks.spec import Benchmark, RunSettings
from gavel.errors import UsageError
from gavel.records import Result, Score
from gavel.scoring.evaluate import evaluate_run
from gavel.scoring.settings import ScoreSettings


@dataclass(frozen=True)
class ScorePlan:
    """What a scoring reads and how, settled before anything is scored (a dry run prices the
    judge from it): the local data, the benchmark and its run settings."""

    spec: Benchmark
    data_file: Path
    predictions: Path
    #: Where Parquet or Hub data came from (the manifest's ``data_source``); None: local.
    data_source: dict | None
    run: RunSettings
    epoch: int | None
    out: Path | None


def benchmark_values(spec: Benchmark, options: Mapping[str, Any]) -> dict[str, Any]:
    """The benchmark's score options by their own names: those given (in their order), then
    the defaults of the others."""
    by_setting = {o.setting: o for o in spec.options_for("score")}
    values = {by_setting[k].name: v for k, v in options.items() if k in by_setting}
    return values | {o.name: o.default for o in by_setting.values() if o.name not in values}


def plan_scoring(settings: ScoreSettings) -> ScorePlan:
    """Resolve the data (Parquet and Hub data are materialized once) and settle the run."""
    from gavel.benchmarks.registry import echo_filter, get_benchmark
    from gavel.io.formats.inspect_log import is_inspect_log
    from gavel.selection import make_selection
    from gavel.sources import resolve_data

    predictions = Path(settings.predictions)
    if settings.epoch is not None and not is_inspect_log(predictions):
        raise UsageError(f"--epoch chooses an epoch of an inspect .eval log: {predictions}")
    given_root = Path(settings.image_root) if settings.image_root is not None else None
    data_file, image_root, data_source = resolve_data(settings.benchmark, settings.data, given_root)
    spec = get_benchmark(settings.benchmark)
    selection = make_selection(settings.limit, settings.sample_id, settings.shuffle, settings.seed)
    values = benchmark_values(spec, settings.options)
    run = RunSettings(values, image_root, settings.bootstrap, settings.seed, selection,
                      echo=echo_filter())  # fmt: skip
    out = Path(settings.out) if settings.out is not None else None
    return ScorePlan(spec, data_file, predictions, data_source, run, settings.epoch, out)


def score_plan(plan: ScorePlan, judge: Any = None,
               configuration: Mapping[str, Any] | None = None,
               ) -> tuple[Result, Sequence[Score], dict | None]:  # fmt: skip
    """Score the plan's run and judge it (``judge``: None for none); ``configuration`` is the
    resolved settings the manifest records. Nothing is written yet."""
    return evaluate_run(plan.spec, plan.data_file, plan.predictions, plan.run, plan.epoch,
                        plan.data_source, judge, plan.run.image_root, plan.out,
                        configuration)  # fmt: skip
