"""GAVEL: verdict, explanation and grounding boxes for one-sentence captions.

Read top-down: :func:`evaluate_files` reads the data into compact columns
(``gavel.benchmarks.gavel.gold``), scores the predictions chunk by chunk into per-sample
:class:`GavelScore` records kept on disk (``.streaming``, ``.scorer``: verdict, boxes, IoU under
the chosen matching policy), and reduces their numbers to the paper's metrics (``.summary``).
Memory stays a few dozen bytes a sample however long the run.

Outcome rules (docs/metrics.md): a missing prediction, a model error and an unparseable verdict
all count as wrong for verification and as IoU 0 for grounding, and each is counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from gavel.benchmarks.gavel.gold import gold_of
from gavel.benchmarks.gavel.gold_pieces import load_gold_columns
from gavel.benchmarks.gavel.prediction_pieces import prediction_bounds, score_in_pieces
from gavel.benchmarks.gavel.scorer import (
    MAX_PRED_BOXES,
    REFUSED_DETAIL,
    GavelScorer,
    GavelSettings,
    ScoringTally,
)
from gavel.benchmarks.gavel.streaming import ScoredRun, Slots, score_run
from gavel.benchmarks.gavel.summary import (
    answer_warnings,
    box_warnings,
    capped_warning,
    summarize,
)
from gavel.benchmarks.gavel.workers import worker_count
from gavel.io.bulk import collector_paused
from gavel.io.predictions import PredictionReader
from gavel.manifest import scoring_manifest
from gavel.matching import describe
from gavel.metrics.grounding import IOU_TOLERANCE
from gavel.records import GavelSample, GavelScore, Outcome, Prediction, Result
from gavel.selection import ALL, Selection

NAME = "gavel"

__all__ = [
    "MAX_PRED_BOXES",
    "NAME",
    "REFUSED_DETAIL",
    "GavelScorer",
    "GavelSettings",
    "ScoredRun",
    "ScoringTally",
    "evaluate_files",
    "score_predictions",
    "score_samples",
    "summarize_samples",
]


def score_samples(
    samples: Sequence[GavelSample], predictions: Iterable[Prediction], settings: GavelSettings
) -> ScoredRun:
    """Score samples already loaded with predictions given as records (one answer at a
    time, a test): every rule of :func:`evaluate_files`, the scores in the samples' order."""
    gold = gold_of(samples)
    latest = {prediction.id: prediction for prediction in predictions}  # the last one counts
    return score_run(gold, np.arange(len(gold)), enumerate(latest.values(), 1), settings)


def score_predictions(
    samples: Sequence[GavelSample], predictions: Iterable[Prediction], settings: GavelSettings
) -> tuple[Sequence[GavelScore], list[str], ScoringTally]:
    """:func:`score_samples` as scores in data order, the first few unknown prediction ids,
    and the tallies."""
    run = score_samples(samples, predictions, settings)
    return run.scores, run.unknown.shown, run.tally


def summarize_samples(
    samples: Sequence[GavelSample], run: ScoredRun, settings: GavelSettings
) -> dict:
    """The metrics of a :func:`score_samples` run (what results.json holds)."""
    return summarize(gold_of(samples), np.arange(len(samples)), run, settings)


def evaluate_files(
    data: str | Path,
    predictions: str | Path,
    settings: GavelSettings,
    *,
    image_root: str | Path | None = None,
    selection: Selection = ALL,
) -> tuple[Result, Sequence[GavelScore]]:
    """Score a predictions file against a GAVEL data file; nothing here needs the model.

    The scores come back in data order, kept on disk until read (a sequence whose items are
    decoded when asked for). With a ``selection``, only the chosen samples are scored
    (predictions for the others are set aside, not reported as unknown) and the manifest
    records the choice."""
    with collector_paused():  # hundreds of thousands of acyclic records: see gavel.io.bulk
        gold, data_sha256, loaded = load_gold_columns(data, image_root)
        chosen = np.asarray(selection.choose(gold.ids), dtype=np.int64)
        recorded = selection.recorded(len(chosen), len(gold))
        slots = Slots(gold, chosen)
        workers = worker_count(len(chosen))
        bounds = prediction_bounds(predictions, workers)
        if bounds is not None:
            run, predictions_sha256 = score_in_pieces(
                gold, chosen, predictions, bounds, settings, slots, workers
            )
        else:
            reader = PredictionReader(predictions)
            run = score_run(gold, chosen, reader.numbered(slots.seen), settings, slots, workers)
            predictions_sha256 = reader.sha256
    summary = summarize(gold, chosen, run, settings)
    warnings = []
    if run.unknown.count:
        shown = ", ".join(repr(u) for u in run.unknown.shown)
        warnings.append(f"{run.unknown.count} prediction(s) for ids not in the data: {shown}")
    if summary["counts"][Outcome.MISSING]:
        warnings.append(f"{summary['counts'][Outcome.MISSING]} sample(s) have no prediction")
    if loaded.clipped_boxes:
        warnings.append(f"{loaded.clipped_boxes} gold box(es) clipped to the image")
    warnings += answer_warnings(summary["metrics"]["answers"])
    warnings += box_warnings(summary["metrics"]["boxes"])
    warnings += capped_warning(run, gold, chosen)
    manifest = scoring_manifest(
        NAME,
        data=data,
        data_sha256=data_sha256,
        predictions=predictions,
        predictions_sha256=predictions_sha256,
        models=run.columns.models.names,
        settings=settings,
        extra={
            "iou_tolerance": IOU_TOLERANCE,
            "match_description": describe(settings.match),
            "image_root": str(image_root) if image_root is not None else None,
        }
        | ({"selection": recorded} if recorded else {}),
    )
    summary["counts"]["unknown_ids"] = run.unknown.count
    summary["counts"]["gold_boxes_clipped"] = loaded.clipped_boxes
    result = Result(benchmark=NAME, manifest=manifest, warnings=warnings, **summary)
    return result, run.scores
