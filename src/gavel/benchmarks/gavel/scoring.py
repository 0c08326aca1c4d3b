"""GAVEL: verdict, explanation and grounding boxes for one-sentence captions.

Read top-down: a prediction becomes a per-sample :class:`GavelScore` (verdict, boxes, IoU under the
chosen matching policy), and the scores reduce to the paper's metrics: A@0.3/0.5/0.7 over samples
with a gold box, verification accuracy/precision/recall/F1 over all samples, the area ratio of
Figure 3, per-category breakdowns in Table 1's columns, and bootstrap intervals.

Outcome rules (docs/metrics.md): a missing prediction, a model error and an unparseable verdict
all count as wrong for verification and as IoU 0 for grounding, and each is counted.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from gavel.benchmarks.echo import echo_filter
from gavel.benchmarks.gavel.data import load_samples
from gavel.errors import ConfigError
from gavel.geometry import Box, clip_box, is_degenerate, order_corners
from gavel.io.bulk import collector_paused
from gavel.io.predictions import PredictionReader
from gavel.manifest import scoring_manifest
from gavel.matching import describe, get_policy
from gavel.metrics.grounding import (
    IOU_TOLERANCE,
    THRESHOLDS,
    area_ratio_summary,
    box_size_histogram,
    grounding_accuracy,
    grounding_intervals,
)
from gavel.metrics.verification import confusion, verification_intervals, verification_metrics
from gavel.overlap import union_overlap
from gavel.parsing import ImageGeometry, parse_boxes
from gavel.parsing.conventions import get_convention
from gavel.parsing.verdict import MAX_EXPLANATION, read_answer
from gavel.records import CATEGORY_COLUMNS, GavelSample, GavelScore, Outcome, Prediction, Result
from gavel.selection import ALL, Selection, select

NAME = "gavel"


@dataclass(frozen=True)
class GavelSettings:
    """Every choice that changes a GAVEL number; all of it is written into the manifest."""

    match: str = "union"
    box_format: str | None = None
    thresholds: tuple[float, ...] = THRESHOLDS
    resamples: int = 1000
    level: float = 0.95
    seed: int = 0
    #: A box given together with a "no hallucination" verdict does not localize an error.
    ignore_boxes_when_clean: bool = True

    def __post_init__(self) -> None:
        get_policy(self.match)
        if self.box_format is not None:
            get_convention(self.box_format)


@dataclass
class ScoringTally:
    """Counts gathered while scoring, reported under ``metrics.boxes``."""

    box_status: Counter[str] = field(default_factory=Counter)
    box_formats: Counter[str] = field(default_factory=Counter)
    swapped: int = 0
    clipped: int = 0
    degenerate: int = 0
    out_of_range: int = 0
    #: Damaged JSON lists read object by object; prose boxes repeated verbatim (read once);
    #: answers whose every coordinate lies in [0, 1] under a 0-1000 or pixel convention.
    repaired: int = 0
    repeated: int = 0
    unit_interval: int = 0
    ignored_with_clean_verdict: int = 0
    models: Counter[str] = field(default_factory=Counter)
    #: Answers cut off by the token limit; answers holding text copied from a prompt; answers
    #: refused for offering both verdicts or for a phrase found only in an unfinished ramble.
    truncated: int = 0
    echoed: int = 0
    refused: Counter[str] = field(default_factory=Counter)


def _geometry(sample: GavelSample, prediction: Prediction) -> ImageGeometry:
    return ImageGeometry(
        sample.width,
        sample.height,
        sent_size=tuple(prediction.sent_size) if prediction.sent_size else None,  # type: ignore[arg-type]
        input_size=tuple(prediction.input_size) if prediction.input_size else None,  # type: ignore[arg-type]
    )


#: Why a verdict that is there in some sense is not taken (``unparseable`` details).
REFUSED_DETAIL = {
    "both_ways": "the response offers both verdicts (e.g. 'yes or no')",
    "truncated": "the response was cut off by the token limit before a conclusion; "
    "a verdict phrase in the unfinished text is not taken",
}


class GavelScorer:
    """Turns (sample, prediction) pairs into :class:`GavelScore` records.

    Two passes: :meth:`score` reads each answer (verdict, explanation, boxes), then
    :meth:`fill_overlaps` computes every IoU and area ratio of the run in vectorized groups.
    """

    def __init__(self, settings: GavelSettings):
        self.settings = settings
        self.policy = get_policy(settings.match)
        self.tally = ScoringTally()
        #: Every prompt sent, whose copied text an answer is read without.
        self.echo = echo_filter()

    def score(self, sample: GavelSample, prediction: Prediction | None) -> GavelScore:
        no_iou = 0.0 if sample.boxes else None
        if prediction is None:
            return self._failed(sample, Outcome.MISSING, iou=no_iou)
        if prediction.model:
            self.tally.models[prediction.model] += 1
        if prediction.error:
            return self._failed(
                sample, Outcome.MODEL_ERROR, iou=no_iou, detail=prediction.error[:500]
            )

        verdict = prediction.hallucinated
        explanation = prediction.explanation
        self.tally.truncated += prediction.truncated
        detail = "no verdict found in the response"
        if verdict is None or explanation is None:
            reading = read_answer(
                prediction.response, truncated=prediction.truncated, echo=self.echo
            )
            self.tally.echoed += reading.copied > 0
            if verdict is None:
                verdict = reading.verdict
                if reading.refused is not None:
                    self.tally.refused[reading.refused] += 1
                    detail = REFUSED_DETAIL[reading.refused]
                elif reading.copied:
                    detail += " (text copied from the prompt is not read)"
            if explanation is None:
                explanation = reading.explanation
        explanation = explanation[:MAX_EXPLANATION]  # untrusted text: stored capped
        boxes, status, box_format = self._boxes(sample, prediction)
        self.tally.box_status[status] += 1
        if verdict is None:
            return self._failed(
                sample,
                Outcome.UNPARSEABLE,
                iou=no_iou,
                box_status=status,
                box_format=box_format,
                explanation=explanation,
                detail=detail,
            )
        if verdict is False and boxes and self.settings.ignore_boxes_when_clean:
            self.tally.ignored_with_clean_verdict += 1
            boxes = []
        # Spelled out rather than built from a shared dict: this runs once per sample.
        return GavelScore(
            id=sample.id,
            column=sample.column,
            verdict_true=sample.hallucinated,
            n_gold_boxes=len(sample.boxes),
            outcome=Outcome.OK,
            verdict_pred=verdict,
            iou=no_iou,  # replaced by fill_overlaps when both sides have boxes
            n_pred_boxes=len(boxes),
            pred_boxes=boxes,
            box_status=status,
            box_format=box_format,
            explanation=explanation,
        )

    @staticmethod
    def _failed(sample: GavelSample, outcome: Outcome, **fields: Any) -> GavelScore:
        """A sample without a usable answer: its gold side and what is known of the failure."""
        return GavelScore(
            id=sample.id,
            column=sample.column,
            verdict_true=sample.hallucinated,
            n_gold_boxes=len(sample.boxes),
            outcome=outcome,
            **fields,
        )

    def fill_overlaps(self, samples: list[GavelSample], scores: list[GavelScore]) -> None:
        """Set IoU (under the policy) and log2 area ratio where prediction and gold have boxes."""
        both = [
            i
            for i, (sample, s) in enumerate(zip(samples, scores, strict=True))
            if sample.boxes and s.pred_boxes
        ]
        preds = [scores[i].pred_boxes for i in both]
        golds = [samples[i].boxes for i in both]
        overlap = union_overlap(preds, golds)
        ious = self.policy(preds, golds, overlap)
        with np.errstate(divide="ignore"):
            log_ratios = np.log2(overlap.area_pred / overlap.area_gold)
        for position, iou, log_ratio in zip(both, ious.tolist(), log_ratios.tolist(), strict=True):
            scores[position].iou = iou
            scores[position].area_log2 = log_ratio

    def _boxes(
        self, sample: GavelSample, prediction: Prediction
    ) -> tuple[list[Box], str, str | None]:
        if prediction.boxes is not None:
            return self._given_boxes(sample, prediction.boxes), "given", None
        box_format = prediction.box_format or self.settings.box_format
        if box_format is None:
            raise ConfigError(
                f"prediction {prediction.id!r} has no parsed boxes and no box_format; "
                "pass --box-format to declare the coordinate convention of the responses"
            )
        self.tally.box_formats[box_format] += 1
        parsed = parse_boxes(prediction.response, box_format, _geometry(sample, prediction))
        self.tally.swapped += parsed.swapped
        self.tally.clipped += parsed.clipped
        self.tally.degenerate += parsed.degenerate
        self.tally.out_of_range += parsed.out_of_range
        self.tally.repaired += parsed.repaired
        self.tally.repeated += parsed.repeated
        self.tally.unit_interval += parsed.unit_interval
        return parsed.boxes, str(parsed.status), box_format

    def _given_boxes(self, sample: GavelSample, given: list[list[float]]) -> list[Box]:
        """Boxes already in original pixels: order corners, clip, drop what has no area."""
        boxes: list[Box] = []
        width, height = sample.width, sample.height
        for values in given:
            if len(values) == 4:
                x1, y1, x2, y2 = values
                # The usual box: ordered, with area, inside the image (and so finite).
                if 0 <= x1 < x2 <= width and 0 <= y1 < y2 <= height:
                    boxes.append((float(x1), float(y1), float(x2), float(y2)))
                    continue
            # each value on its own: a sum of huge finite values overflows to infinity
            if len(values) != 4 or not all(math.isfinite(v) for v in values):
                self.tally.degenerate += 1
                continue
            box, swapped = order_corners(values)
            if box[0] < 0 or box[1] < 0 or box[2] > width or box[3] > height:
                box, _ = clip_box(box, width, height)
                self.tally.clipped += 1
            self.tally.swapped += swapped
            if is_degenerate(box):
                self.tally.degenerate += 1
                continue
            boxes.append(box)
        return boxes


def score_predictions(
    samples: list[GavelSample], predictions: Iterable[Prediction], settings: GavelSettings
) -> tuple[list[GavelScore], list[str], ScoringTally]:
    """GavelScore every sample; returns scores in data order, unknown prediction ids, and tallies."""
    index = {sample.id: i for i, sample in enumerate(samples)}
    found: list[Prediction | None] = [None] * len(samples)
    unknown: list[str] = []
    for prediction in predictions:
        position = index.get(prediction.id)
        if position is None:
            unknown.append(prediction.id)
        else:
            found[position] = prediction
    scorer = GavelScorer(settings)
    scores = [scorer.score(s, p) for s, p in zip(samples, found, strict=True)]
    scorer.fill_overlaps(samples, scores)
    return scores, unknown, scorer.tally


# --- reduction to metrics -------------------------------------------------------------------


def _columns(scores: list[GavelScore]) -> dict[str, np.ndarray]:
    has_gold = np.array([s.iou is not None for s in scores], dtype=bool)
    return {
        "iou": np.array([s.iou if s.iou is not None else 0.0 for s in scores]),
        "has_gold": has_gold,
        "truth": np.array([s.verdict_true for s in scores], dtype=bool),
        "pred": np.array(
            [-1 if s.verdict_pred is None else int(s.verdict_pred) for s in scores], dtype=np.int8
        ),
        "area": np.array([np.nan if s.area_log2 is None else s.area_log2 for s in scores]),
    }


def _block(
    cols: dict[str, np.ndarray], mask: np.ndarray, settings: GavelSettings
) -> dict[str, Any]:
    ious = cols["iou"][mask & cols["has_gold"]]
    area = cols["area"][mask]
    area = area[~np.isnan(area)]
    cells = confusion(cols["truth"][mask], cols["pred"][mask])
    return {
        "grounding": grounding_accuracy(ious, settings.thresholds) | {"n": len(ious)},
        "verification": verification_metrics(cells),
        "area_ratio": area_ratio_summary(area),
    }


#: Outcomes in a fixed order, for counting them as small integer codes.
OUTCOMES = list(Outcome)


def _codes(values: list[Any], names: list[Any]) -> np.ndarray:
    """Each value's position in ``names`` (-1 if absent): masks and counts on 100,000 samples
    are then numpy operations on small integers instead of string comparisons."""
    position = {name: code for code, name in enumerate(names)}
    return np.fromiter((position.get(v, -1) for v in values), dtype=np.int16, count=len(values))


def _outcome_counts(codes: np.ndarray) -> dict[str, int]:
    """How many samples had each outcome, in order of first appearance (as a Counter lists)."""
    present, first, counts = np.unique(codes, return_index=True, return_counts=True)
    return {OUTCOMES[present[i]].value: int(counts[i]) for i in np.argsort(first)}


def summarize(
    samples: list[GavelSample],
    scores: list[GavelScore],
    settings: GavelSettings,
    tally: ScoringTally,
) -> dict[str, Any]:
    """Metrics, per-category breakdowns, outcome counts and intervals for a scored run."""
    cols = _columns(scores)
    everything = np.ones(len(scores), dtype=bool)
    overall = _block(cols, everything, settings)
    columns = _codes([s.column for s in scores], CATEGORY_COLUMNS)
    outcomes = _codes([s.outcome for s in scores], OUTCOMES)

    per_category: dict[str, Any] = {}
    for code, column in enumerate(CATEGORY_COLUMNS):
        mask = columns == code
        if mask.any():
            block = _block(cols, mask, settings)
            per_category[column] = {
                "n": int(mask.sum()),
                "grounding": block["grounding"],
                "verification_accuracy": block["verification"]["accuracy"],
                "area_ratio": {k: block["area_ratio"][k] for k in ("n", "median_log2")},
                "counts": _outcome_counts(outcomes[mask]),
            }

    rng = np.random.default_rng(settings.seed)
    ious = cols["iou"][cols["has_gold"]]
    ci = {
        "level": settings.level,
        "resamples": settings.resamples,
        "seed": settings.seed,
        "method": "percentile bootstrap over samples (exact multinomial resampling of counts)",
        "grounding": grounding_intervals(
            ious,
            resamples=settings.resamples,
            level=settings.level,
            rng=rng,
            thresholds=settings.thresholds,
        ),
        "verification": verification_intervals(
            confusion(cols["truth"], cols["pred"]),
            resamples=settings.resamples,
            level=settings.level,
            rng=rng,
        ),
    }
    counts = {o.value: 0 for o in Outcome} | _outcome_counts(outcomes)
    counts["total"] = len(scores)
    counts["truncated"] = tally.truncated
    gold = np.fromiter(
        chain.from_iterable(chain.from_iterable(s.boxes for s in samples)), dtype=np.float64
    ).reshape(-1, 4)
    gold_areas = (gold[:, 2] - gold[:, 0]) * (gold[:, 3] - gold[:, 1])
    metrics = {
        **overall,
        "explanation": None,
        "boxes": {
            "status": dict(tally.box_status),
            "formats": dict(tally.box_formats),
            "swapped": tally.swapped,
            "clipped": tally.clipped,
            "degenerate_dropped": tally.degenerate,
            "out_of_range": tally.out_of_range,
            "repaired_lists": tally.repaired,
            "repeated_dropped": tally.repeated,
            "unit_interval": tally.unit_interval,
            "ignored_with_clean_verdict": tally.ignored_with_clean_verdict,
            "mean_pred_boxes": float(np.mean([s.n_pred_boxes for s in scores])) if scores else 0.0,
        },
        "gold_box_size_hist": box_size_histogram(gold_areas),
        "answers": {
            "truncated": tally.truncated,
            "echoed": tally.echoed,
            "refused_both_ways": tally.refused["both_ways"],
            "refused_truncated": tally.refused["truncated"],
        },
    }
    return {"metrics": metrics, "per_category": per_category, "counts": counts, "ci": ci}


def answer_warnings(answers: dict[str, int]) -> list[str]:
    """What the counts of cut-off, copied and two-way answers mean for the numbers."""
    found = []
    if answers["truncated"]:
        found.append(
            f"{answers['truncated']} response(s) were cut off by the token limit "
            f"(finish_reason 'length'); {answers['refused_truncated']} of them are unparseable "
            "because their only verdict was a phrase in the unfinished text: raise --max-tokens"
        )
    if answers["echoed"]:
        found.append(
            f"{answers['echoed']} response(s) repeat text of the prompt; the copied text is "
            "never read as an answer"
        )
    if answers["refused_both_ways"]:
        found.append(
            f"{answers['refused_both_ways']} response(s) offer both verdicts ('yes or no'): "
            "unparseable"
        )
    return found


def box_warnings(boxes: dict[str, Any]) -> list[str]:
    """What the box reader repaired, and replies whose numbers do not fit their convention."""
    found = []
    if boxes["repaired_lists"]:
        found.append(
            f"{boxes['repaired_lists']} response(s) hold a damaged JSON list of boxes; every "
            "well-formed object of it was read"
        )
    if boxes["unit_interval"]:
        formats = ", ".join(sorted(boxes["formats"]))
        found.append(
            f"{boxes['unit_interval']} response(s) have every box coordinate in [0, 1] under "
            f"{formats}: the model probably wrote 0-1 coordinates (box format rel1); they were "
            "read as declared"
        )
    return found


def evaluate_files(
    data: str | Path,
    predictions: str | Path,
    settings: GavelSettings,
    *,
    image_root: str | Path | None = None,
    selection: Selection = ALL,
) -> tuple[Result, list[GavelScore]]:
    """GavelScore a predictions file against a GAVEL data file; nothing here needs the model.

    With a ``selection``, only the chosen samples are scored (predictions for the others are
    set aside, not reported as unknown) and the manifest records the choice."""
    with collector_paused():  # hundreds of thousands of acyclic records: see gavel.io.bulk
        samples, loader = load_samples(data, image_root)
        reader = PredictionReader(predictions)
        samples, kept, chosen = select(selection, samples, reader)
        scores, unknown, tally = score_predictions(samples, kept, settings)
    summary = summarize(samples, scores, settings, tally)
    warnings = []
    if unknown:
        shown = ", ".join(repr(u) for u in unknown[:5])
        warnings.append(f"{len(unknown)} prediction(s) for ids not in the data: {shown}")
    if summary["counts"][Outcome.MISSING]:
        warnings.append(f"{summary['counts'][Outcome.MISSING]} sample(s) have no prediction")
    if loader.report.clipped_boxes:
        warnings.append(f"{loader.report.clipped_boxes} gold box(es) clipped to the image")
    warnings += answer_warnings(summary["metrics"]["answers"])
    warnings += box_warnings(summary["metrics"]["boxes"])
    manifest = scoring_manifest(
        NAME,
        data=data,
        data_sha256=loader.sha256,
        predictions=predictions,
        predictions_sha256=reader.sha256,
        models=tally.models,
        settings=settings,
        extra={
            "iou_tolerance": IOU_TOLERANCE,
            "match_description": describe(settings.match),
            "image_root": str(image_root) if image_root is not None else None,
        }
        | ({"selection": chosen} if chosen else {}),
    )
    summary["counts"]["unknown_ids"] = len(unknown)
    summary["counts"]["gold_boxes_clipped"] = loader.report.clipped_boxes
    result = Result(benchmark=NAME, manifest=manifest, warnings=warnings, **summary)
    return result, scores
