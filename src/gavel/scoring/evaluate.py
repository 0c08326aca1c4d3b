"""Scoring one run: the benchmark's own ``evaluate``, where the run came from, and the judge."""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from gavel.benchmarks.spec import Benchmark, RunSettings
from gavel.io.formats.inspect_log import reading_epoch
from gavel.records import Prediction, Result, Score
from gavel.scoring.judging import add_judge_scores


def evaluate_run(spec: Benchmark, data_file: Path, predictions: Path, run: RunSettings,
                 epoch: int | None, data_source: dict | None, judge, image_root: Path | None,
                 out: Path | None, configuration: Mapping[str, Any] | None = None,
                 ) -> tuple[Result, Sequence[Score], dict | None]:  # fmt: skip
    """Score a run and record where it came from (the epoch of an inspect log, the data's
    source, the resolved ``configuration``: each setting's value and where it came from),
    then judge it when a judge is given: the result, the per-sample scores and the judge's
    ledger entry, before anything is written."""
    with reading_epoch(epoch):
        result, scores = spec.evaluate(data_file, predictions, run)
    if epoch is not None:
        result.manifest.settings["inspect_epoch"] = epoch
    result.manifest.data_source = data_source
    if configuration is not None:
        result.manifest.settings["configuration"] = dict(configuration)
    ledger_entry = None
    if judge is not None:
        ledger_entry, scores = add_judge_scores(judge, data_file, image_root, out, result, scores)
    return result, scores, ledger_entry


def evaluate_records(spec: Benchmark, data: Path, predictions: Iterable[Prediction],
                     run: RunSettings) -> tuple[Result, Sequence[Score]]:  # fmt: skip
    """Score predictions given as records (another framework's answers) exactly as a
    predictions file is scored: they go through one, so every rule and count is the file's."""
    encoder = msgspec.json.Encoder()
    with tempfile.TemporaryDirectory(prefix="gavel-") as folder:
        path = Path(folder) / "predictions.jsonl"
        with path.open("wb") as handle:
            for item in predictions:
                handle.write(encoder.encode(item) + b"\n")
        return spec.evaluate(data, path, run)


def run_name(result: Result, predictions: Path, name: str | None) -> str:
    """A run's row label: ``name``, else the model its predictions name, else the file's."""
    return name or result.manifest.model or predictions.stem
