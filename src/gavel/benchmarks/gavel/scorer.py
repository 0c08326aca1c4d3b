"""Reading one GAVEL answer into a per-sample :class:`GavelScore`: verdict, explanation, boxes.

:class:`GavelScorer` reads each answer as it comes; :meth:`GavelScorer.fill_overlaps` then
computes the IoU (under the chosen matching policy) and area ratio of many samples at once, in
numpy groups (``gavel.overlap``). ``gavel.benchmarks.gavel.streaming`` runs the two over a run
chunk by chunk.

Outcome rules (docs/metrics.md): a missing prediction, a model error and an unparseable verdict
all count as wrong for verification and as IoU 0 for grounding, and each is counted.

Bounded work: an answer's boxes are all read, but at most :data:`MAX_PRED_BOXES` of them are
scored (the first ones, in the answer's order); such a score records how many the answer gave
(``boxes_given``), and the run warns naming it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from gavel.benchmarks.echo import chosen
from gavel.benchmarks.gavel.prompt import declared_prompts
from gavel.errors import ConfigError
from gavel.geometry import Box, clip_box, is_degenerate, order_corners
from gavel.matching import get_policy
from gavel.metrics.grounding import THRESHOLDS
from gavel.overlap import union_overlap
from gavel.parsing import ImageGeometry, parse_boxes
from gavel.parsing.conventions import get_convention
from gavel.parsing.verdict import MAX_EXPLANATION, read_answer
from gavel.records import GavelScore, Outcome, Prediction

if TYPE_CHECKING:
    from gavel.parsing.echo import EchoFilter

#: Predicted boxes scored per sample at most: the first ones the answer gives. A sample's
#: overlap costs time in the square of its boxes (``gavel.overlap``); no GAVEL caption has an
#: error with anywhere near this many objects, and an answer that sprays more boxes than this
#: is already far from any gold region.
MAX_PRED_BOXES = 100


class GoldSample(Protocol):
    """What scoring reads of a sample (a GavelSample has it, and so has the compact
    ``gavel.benchmarks.gavel.gold.Gold``)."""

    @property
    def id(self) -> str: ...
    @property
    def column(self) -> str: ...
    @property
    def hallucinated(self) -> bool: ...
    @property
    def boxes(self) -> list[Box]: ...
    @property
    def width(self) -> int: ...
    @property
    def height(self) -> int: ...


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
    #: Every prompt sent (the caller's: ``RunSettings.echo``); None: the shipped ones'.
    echo: EchoFilter | None = field(
        default=None, compare=False, repr=False, metadata={"recorded": False}
    )

    def __post_init__(self) -> None:
        get_policy(self.match)
        if self.box_format is not None:
            get_convention(self.box_format)


@dataclass
class ScoringTally:
    """Counts gathered while scoring, reported under ``metrics.boxes``."""

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
    #: Answers with more than MAX_PRED_BOXES usable boxes (the first ones were scored).
    capped: int = 0
    #: Answers cut off by the token limit; answers holding text copied from a prompt; answers
    #: refused for offering both verdicts or for a phrase found only in an unfinished ramble.
    truncated: int = 0
    echoed: int = 0
    refused: Counter[str] = field(default_factory=Counter)

    def add(self, other: ScoringTally) -> None:
        """Count ``other``'s counts too (a chunk's, into its run's)."""
        for name in fields(self):
            if name.name == "refused":
                self.refused.update(other.refused)
            else:
                setattr(self, name.name, getattr(self, name.name) + getattr(other, name.name))


def _geometry(sample: GoldSample, prediction: Prediction) -> ImageGeometry:
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
        self.echo = chosen(settings.echo, declared_prompts)

    def score(self, sample: GoldSample, prediction: Prediction | None) -> GavelScore:
        no_iou = 0.0 if sample.boxes else None
        if prediction is None:
            return self._failed(sample, Outcome.MISSING, iou=no_iou)
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
        given = None
        if len(boxes) > MAX_PRED_BOXES:
            self.tally.capped += 1
            given, boxes = len(boxes), boxes[:MAX_PRED_BOXES]
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
            boxes_given=given,
        )

    @staticmethod
    def _failed(sample: GoldSample, outcome: Outcome, **fields: Any) -> GavelScore:
        """A sample without a usable answer: its gold side and what is known of the failure."""
        return GavelScore(
            id=sample.id,
            column=sample.column,
            verdict_true=sample.hallucinated,
            n_gold_boxes=len(sample.boxes),
            outcome=outcome,
            **fields,
        )

    def fill_overlaps(self, samples: Sequence[GoldSample], scores: Sequence[GavelScore]) -> None:
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
        self, sample: GoldSample, prediction: Prediction
    ) -> tuple[list[Box], str, str | None]:
        if prediction.boxes is not None:
            return self._given_boxes(sample, prediction.boxes), "given", None
        box_format = prediction.box_format or self.settings.box_format
        if box_format is None:
            raise ConfigError(
                f"prediction {prediction.id!r} has no parsed boxes and no box_format; "
                "pass --box-format to declare the coordinate convention of the responses"
            )
        parsed = parse_boxes(prediction.response, box_format, _geometry(sample, prediction))
        self.tally.swapped += parsed.swapped
        self.tally.clipped += parsed.clipped
        self.tally.degenerate += parsed.degenerate
        self.tally.out_of_range += parsed.out_of_range
        self.tally.repaired += parsed.repaired
        self.tally.repeated += parsed.repeated
        self.tally.unit_interval += parsed.unit_interval
        return parsed.boxes, str(parsed.status), box_format

    def _given_boxes(self, sample: GoldSample, given: list[list[float]]) -> list[Box]:
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
