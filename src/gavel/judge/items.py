"""What a judge is asked about each sample, what it answers, and how answers become a table.

Every judge (the paper's LLM protocol, the offline proxy) takes :class:`JudgeItem` records and
returns one :class:`Judged` per item, so scoring, agreement and reports never care which judge
ran.

Decisions (docs/judge.md explains them):

- The prediction is :func:`gavel.judge.protocol.prediction_text` of the model's parsed verdict
  and explanation, never the coordinates. An answer without a verdict is still judged (as
  "Hallucination: unclear." and its prose): the judge sees what the model said.
- A sample the model never answered (missing line, model error) is not sent: it gets score 1,
  the rubric's "irrelevant or wrong", with status ``not_answered``, and counts in the means, as
  failed answers count as wrong in every other GAVEL metric.
- A judge that gives no valid reply after its retries gives status ``judge_error``: counted,
  excluded from the means, never turned into a number.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from gavel.judge.protocol import prediction_text
from gavel.records import CATEGORY_COLUMNS, GavelSample, GavelScore, Outcome

#: Scores are 1–5; tables show them ×20 (0–100), as the paper does.
SCALE_FACTOR = 20
#: The score a sample gets when the model gave no answer to judge.
NOT_ANSWERED_SCORE = 1

OK = "ok"
JUDGE_ERROR = "judge_error"
NOT_ANSWERED = "not_answered"
STATUSES = (OK, JUDGE_ERROR, NOT_ANSWERED)


@dataclass(frozen=True)
class JudgeItem:
    """One sample as the judge sees it."""

    id: str
    column: str
    hallucinated: bool
    #: The model's parsed verdict (None: none found, or no answer).
    verdict: bool | None
    #: The prediction text (verdict in words + explanation); None when the model gave no answer.
    prediction: str | None
    #: The annotated explanation E ("" for samples without a hallucination).
    ground_truth: str


class Judged(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A judge's answer for one sample."""

    id: str
    column: str
    status: str
    score: int | None = None
    reason: str | None = None
    detail: str | None = None


def judge_items(samples: Sequence[GavelSample], scores: Sequence[GavelScore]) -> list[JudgeItem]:
    """One item per sample, in data order (``scores`` as returned by GAVEL scoring)."""
    items = []
    for sample, score in zip(samples, scores, strict=True):
        answered = score.outcome not in (Outcome.MISSING, Outcome.MODEL_ERROR)
        items.append(
            JudgeItem(
                id=sample.id,
                column=sample.column,
                hallucinated=sample.hallucinated,
                verdict=score.verdict_pred,
                prediction=prediction_text(score.verdict_pred, score.explanation)
                if answered
                else None,
                ground_truth=sample.explanation if sample.hallucinated else "",
            )
        )
    return items


def not_answered(item: JudgeItem) -> Judged:
    """The record of a sample the model never answered (not sent to the judge)."""
    return Judged(
        id=item.id,
        column=item.column,
        status=NOT_ANSWERED,
        score=NOT_ANSWERED_SCORE,
        detail="the model gave no answer",
    )


def attach(scores: Sequence[GavelScore], judged: Iterable[Judged]) -> None:
    """Copy each sample's judge score, reason and status onto its GavelScore, and for a
    ``judge_error`` its detail (the server's error, or the refused reply)."""
    by_id = {j.id: j for j in judged}
    for score in scores:
        attach_one(score, by_id.get(score.id))


def attach_one(score: GavelScore, found: Judged | None) -> None:
    """:func:`attach` for one score (a run whose scores are kept on disk is judged one score
    at a time)."""
    if found is not None:
        score.judge_score = found.score
        score.judge_reason = found.reason
        score.judge_status = found.status
        if found.status == JUDGE_ERROR:
            score.judge_detail = found.detail


def _mean_scaled(values: list[int]) -> float | None:
    return None if not values else SCALE_FACTOR * sum(values) / len(values)


def summarize_judged(judged: Sequence[Judged], judge: dict[str, Any]) -> dict[str, Any]:
    """``metrics.explanation``: ``Avg`` and one key per Table 1 column (0–100), counts, judge.

    Means are over samples with a score (``ok`` and ``not_answered``); ``judge_error`` samples
    are only counted.
    """
    scored = [j for j in judged if j.score is not None]
    result: dict[str, Any] = {"Avg": _mean_scaled([j.score for j in scored])}  # type: ignore[misc]
    n: dict[str, int] = {"Avg": len(scored)}
    for column in CATEGORY_COLUMNS:
        values = [j.score for j in scored if j.column == column]
        result[column] = _mean_scaled(values)  # type: ignore[arg-type]
        n[column] = len(values)
    counts = {status: 0 for status in STATUSES}
    for j in judged:
        counts[j.status] += 1
    counts["total"] = len(judged)
    histogram = {str(k): sum(1 for j in scored if j.score == k) for k in range(1, 6)}
    return result | {"n": n, "counts": counts, "histogram": histogram, "judge": judge}
