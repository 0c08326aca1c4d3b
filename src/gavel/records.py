"""The typed records that cross every boundary: Sample, Prediction, Score, Result, Manifest.

They are ``msgspec`` structs: decoding a JSON line into one validates every field's type in a
single pass written in C, which is what lets ``gavel score`` read 100,000 predictions in well
under a second, and a type error names the field (``$.boxes[0]``) for the error message.

The predictions file (JSONL of :class:`Prediction`) is the contract between generating and
scoring: it keeps the raw model text verbatim, so any score can be recomputed and traced.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import msgspec

#: Version of the on-disk layouts below; bumped when a field changes meaning.
SCHEMA_VERSION = 1


class Category(StrEnum):
    """GAVEL hallucination categories (the paper's Table 1 columns, minus "No hall.")."""

    ACT = "Act"
    ATTR = "Attr"
    COLOR = "Color"
    LOC = "Loc"
    OBJ = "Obj"
    QTY = "Qty"
    STATE = "State"
    SIZE = "Size"
    OTHER = "Other"


#: Column name the paper uses for samples without a hallucination.
NO_HALLUCINATION = "No hall."

#: Table 1's column order for per-category reports.
CATEGORY_COLUMNS = [
    "Act",
    "Attr",
    "Color",
    "Loc",
    "Obj",
    "Qty",
    "State",
    "Size",
    NO_HALLUCINATION,
    "Other",
]


class Outcome(StrEnum):
    """What happened to one sample. Metrics report a count of every outcome.

    ``missing`` is a data id with no prediction line: it is counted apart from ``model_error``
    so a truncated predictions file cannot pass as a flaky model.
    """

    OK = "ok"
    UNPARSEABLE = "unparseable"
    MODEL_ERROR = "model_error"
    JUDGE_ERROR = "judge_error"
    MISSING = "missing"
    SKIPPED = "skipped"


class Sample(msgspec.Struct, kw_only=True, gc=False):
    """One benchmark item. Benchmarks subclass it with their own fields."""

    id: str
    category: str | None = None
    meta: dict[str, Any] = msgspec.field(default_factory=dict)


class GavelSample(Sample, kw_only=True, gc=False):
    """A GAVEL item after loading: boxes are ``(x1, y1, x2, y2)`` in original pixels."""

    image: str
    caption: str
    hallucinated: bool
    explanation: str = ""
    boxes: list[tuple[float, float, float, float]] = msgspec.field(default_factory=list)
    width: int
    height: int
    source: str | None = None
    split: str | None = None

    @property
    def column(self) -> str:
        """The Table 1 column this sample is reported under."""
        return self.category if self.hallucinated and self.category else NO_HALLUCINATION


class Prediction(msgspec.Struct, kw_only=True, omit_defaults=True, gc=False):
    """What a model said about one sample (one line of a predictions file).

    ``response`` is kept verbatim. Parsed fields are optional: when absent, scoring parses
    ``response`` under the declared ``box_format``. ``sent_size`` and ``input_size`` are
    ``[width, height]`` of the image as sent and of the model's resized input, needed by the
    ``pixel`` and ``resized-pixel`` conventions.

    ``finish_reason`` is the server's (``stop``, ``length`` when the token limit cut the answer
    off, ...); ``error_kind`` classifies ``error`` (:mod:`gavel.transport.failures`). Both are
    absent from files written before they existed, which stay readable.
    """

    id: str
    response: str | None = None
    hallucinated: bool | None = None
    explanation: str | None = None
    boxes: list[list[float]] | None = None
    box_format: str | None = None
    parse_status: str | None = None
    error: str | None = None
    model: str | None = None
    sent_size: list[int] | None = None
    input_size: list[int] | None = None
    latency_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    meta: dict[str, Any] | None = None
    finish_reason: str | None = None
    error_kind: str | None = None

    @property
    def truncated(self) -> bool:
        """The token limit cut the answer off (``finish_reason: length``)."""
        return self.finish_reason == "length"


class Score(msgspec.Struct, kw_only=True, omit_defaults=True, gc=False):
    """The per-sample outcome; benchmarks subclass it with the values their metrics reduce."""

    id: str
    outcome: Outcome
    detail: str | None = None


class GavelScore(Score, kw_only=True, omit_defaults=True, gc=False):
    """A GAVEL sample's verdicts, boxes (original pixels), IoU and area ratio."""

    column: str
    verdict_true: bool
    verdict_pred: bool | None = None
    iou: float | None = None
    n_pred_boxes: int = 0
    n_gold_boxes: int = 0
    pred_boxes: list[tuple[float, float, float, float]] = msgspec.field(default_factory=list)
    #: Set only when the answer gave more usable boxes than scoring takes (the first
    #: ``MAX_PRED_BOXES`` are scored, ``n_pred_boxes`` of them): how many it gave.
    boxes_given: int | None = None
    box_status: str | None = None
    box_format: str | None = None
    area_log2: float | None = None
    explanation: str | None = None
    #: The explanation judge's 1–5 score and one-sentence reason (``gavel score --judge``).
    judge_score: int | None = None
    judge_reason: str | None = None
    #: ``ok``, ``judge_error`` (no valid reply: excluded from the means) or ``not_answered``
    #: (the model gave no answer: scored 1 without asking the judge).
    judge_status: str | None = None
    #: Why a judge_error has no score (the server's error, or the refused reply).
    judge_detail: str | None = None


class Manifest(msgspec.Struct, kw_only=True):
    """Everything needed to know how a number was made, and to make it again."""

    gavel_version: str
    schema_version: int = SCHEMA_VERSION
    git_revision: str | None = None
    created_at: str
    command: list[str] = msgspec.field(default_factory=list)
    benchmark: str
    data_file: str | None = None
    data_sha256: str | None = None
    #: Where Hub or Parquet data came from (repo, revision, commit, files' SHA-256), when
    #: ``data_file`` is the local copy gavel made of it.
    data_source: dict[str, Any] | None = None
    predictions_file: str | None = None
    predictions_sha256: str | None = None
    model: str | None = None
    adapter: dict[str, Any] = msgspec.field(default_factory=dict)
    prompt_sha256: str | None = None
    judge: dict[str, Any] | None = None
    seed: int | None = None
    settings: dict[str, Any] = msgspec.field(default_factory=dict)
    libraries: dict[str, str] = msgspec.field(default_factory=dict)


class Result(msgspec.Struct, kw_only=True):
    """A scored run: headline metrics, breakdowns, outcome counts, intervals, provenance."""

    benchmark: str
    metrics: dict[str, Any]
    per_category: dict[str, Any]
    counts: dict[str, int]
    ci: dict[str, Any]
    manifest: Manifest
    warnings: list[str] = msgspec.field(default_factory=list)
    #: SHA-256 of each file written with this one (per-sample scores, judge replies, the
    #: run's judge-ledger line), so readers can refuse a pair from two different runs.
    files: dict[str, str] = msgspec.field(default_factory=dict)
