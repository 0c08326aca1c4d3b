"""DetailVerifyBench per-sample scoring and the reduction to metrics (``calculate_metrics.py``).

A sample's score keeps the official per-sample values (token P/R/F1/IoU, sentence counts, the
two halves, per-category hits) together with the indices of the hallucinated tokens on each
side, so every number in ``results.json`` can be traced to the samples. Metrics are on 0–100.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, cast

import msgspec
import numpy as np

from gavel.benchmarks.detailverify.data import DetailVerifySample
from gavel.benchmarks.detailverify.prompt import declared_prompts
from gavel.benchmarks.echo import chosen
from gavel.metrics.stats import percentile_interval
from gavel.metrics.tokens import (
    NONE,
    STRATA,
    TOKEN_PATTERN,
    binary_metrics,
    length_stratum,
    mark_positions,
    prf,
    sentence_counts,
    set_metrics,
)
from gavel.parsing.tags import VALID, Validity, extract_result, strip_tags, validate
from gavel.records import Outcome, Prediction, Score

if TYPE_CHECKING:
    from gavel.parsing.echo import EchoFilter

#: The 13 categories the official table reads, in its order.
OFFICIAL_CATEGORIES = [
    "Object Number Hallucination",
    "Object Color Hallucination",
    "Object Category Hallucination",
    "Object Shape Hallucination",
    "Object Material Hallucination",
    "Spatial Relation Hallucination",
    "Scene Hallucination",
    "Camera Hallucination",
    "OCR Hallucination",
    "Image Style Hallucination",
    "Character Identification Hallucination",
    "Counterfactual Hallucination",
    "Other Hallucination",
]
MAX_DETAIL = 500


class DetailVerifyScore(Score, kw_only=True, omit_defaults=True, gc=False):
    """One sample's answer and its official per-sample values (fractions, 0–1).

    ``gold_flags`` / ``pred_flags`` are the indices of hallucinated tokens over the full
    sequences; the per-sample values use both cut to the shorter (``min(gold_tokens,
    pred_tokens)``), as officially. Absent values mean the sample is not scored.
    """

    domain: str | None = None
    layout: str
    modified: bool = True
    #: Whether the sample enters the metrics under the run's mode.
    scored: bool = False
    #: Official validity of the answer (:class:`~gavel.parsing.tags.Validity`); None without one.
    validity: str | None = None
    #: The evaluation card's strict lexical faithfulness; None without an answer.
    faithful: bool | None = None
    gold_tokens: int = 0
    pred_tokens: int = 0
    gold_flags: list[int] = msgspec.field(default_factory=list)
    pred_flags: list[int] = msgspec.field(default_factory=list)
    #: Token precision, recall, F1, IoU.
    token: list[float] | None = None
    #: Sentence TP, FP, FN.
    sentence: list[int] | None = None
    first_half: list[float] | None = None
    second_half: list[float] | None = None
    #: Gold category -> [tokens flagged, gold tokens], over the aligned tokens.
    categories: dict[str, list[int]] = msgspec.field(default_factory=dict)
    #: The card's set-based precision, recall, F1 over untruncated index sets.
    card: list[float] | None = None
    #: The answer read (the ``<result>`` block) is text copied from a prompt, e.g. the rule
    #: line "output exactly: <result>NO HALLUCINATION</result>"; recorded only, the official
    #: reading is kept.
    echo: bool = False
    #: The token limit cut the response off (``finish_reason: length``); recorded only.
    truncated: bool = False

    @property
    def aligned(self) -> int:
        return min(self.gold_tokens, self.pred_tokens)


def faithful(caption: str, answer: str, validity: Validity) -> bool:
    """The card's strict lexical faithfulness: ``NO HALLUCINATION``, or the answer without tags
    has exactly the caption's tokens, in order (scoring tokenizer, case kept)."""
    if validity is Validity.NO_HALLUCINATION:
        return True
    return TOKEN_PATTERN.findall(strip_tags(answer)) == TOKEN_PATTERN.findall(caption)


def copied_answer(
    response: str | None, answer: str, *, thinking: bool, echo: EchoFilter | None = None
) -> bool:
    """The answer read from ``response`` is only there because the response copies a prompt:
    without the copied text (:mod:`gavel.parsing.echo`; ``echo``, the caller's filter of
    every prompt sent, else the shipped ones') no such answer would be read."""
    if not response or not answer:
        return False
    own = chosen(echo, declared_prompts).remove(response)
    return own.echoed and extract_result(own.text, thinking=thinking) != answer


def score_sample(
    sample: DetailVerifySample,
    prediction: Prediction | None,
    *,
    mode: str,
    thinking: bool,
    echo: EchoFilter | None = None,
) -> DetailVerifyScore:
    """Read the answer, check it, and compute the official per-sample values."""
    gold = mark_positions(sample.tagged, sample.labels)
    base: dict[str, Any] = {
        "id": sample.id,
        "domain": sample.category,
        "layout": sample.layout,
        "modified": sample.modified,
        "gold_tokens": len(gold.tokens),
        "gold_flags": [i for i, h in enumerate(gold.hallucinated) if h],
    }
    pred: list[bool] | None = None
    extra: dict[str, Any]
    if prediction is None:
        outcome, extra = Outcome.MISSING, {}
    elif prediction.error:
        outcome, extra = Outcome.MODEL_ERROR, {"detail": prediction.error[:MAX_DETAIL]}
    else:
        answer = extract_result(prediction.response, thinking=thinking)
        validity = validate(sample.caption, answer)
        extra = {
            "validity": str(validity),
            "faithful": faithful(sample.caption, answer, validity),
            "echo": copied_answer(prediction.response, answer, thinking=thinking, echo=echo),
            "truncated": prediction.truncated,
        }
        if validity in VALID:
            outcome = Outcome.OK
            if validity is Validity.NO_HALLUCINATION:  # official: all clean, gold's length
                pred = [False] * len(gold.tokens)
            else:
                pred = mark_positions(answer).hallucinated
        else:
            outcome = Outcome.UNPARSEABLE
            extra["detail"] = f"invalid answer: {validity}"
    if pred is None:
        if mode != "strict":
            return DetailVerifyScore(outcome=outcome, **base, **extra)
        pred = [False] * len(gold.tokens)

    n = min(len(gold.hallucinated), len(pred))
    g, t = gold.hallucinated[:n], pred[:n]
    mid = n // 2
    categories: dict[str, list[int]] = {}
    for category, hit in zip(gold.categories[:n], t, strict=True):
        if category != NONE:
            cell = categories.setdefault(category, [0, 0])
            cell[0] += hit
            cell[1] += 1
    pred_flags = [i for i, h in enumerate(pred) if h]
    return DetailVerifyScore(
        outcome=outcome,
        scored=True,
        pred_tokens=len(pred),
        pred_flags=pred_flags,
        token=list(binary_metrics(g, t)),
        sentence=list(sentence_counts(sample.tagged, g, t)),
        first_half=list(binary_metrics(g[:mid], t[:mid])),
        second_half=list(binary_metrics(g[mid:], t[mid:])),
        categories=categories,
        card=list(set_metrics(set(pred_flags), set(base["gold_flags"]))),
        **base,
        **extra,
    )


# --- reduction --------------------------------------------------------------------------------


#: Metric rows of scored samples: score_sample sets ``token`` and ``card`` whenever it sets
#: ``scored``, a link the score's field types cannot state.
_Rows = list[list[float]]


def _mean(values: list[float]) -> float | None:
    return 100.0 * sum(values) / len(values) if values else None


def _prf_block(rows: list[list[float]], keys=("precision", "recall", "f1", "iou")) -> dict:
    return {key: _mean([row[i] for row in rows]) for i, key in enumerate(keys)}


def _percent(values: tuple[float, ...], keys=("precision", "recall", "f1")) -> dict:
    return {key: 100.0 * value for key, value in zip(keys, values, strict=True)}


def summarize(
    scores: list[DetailVerifyScore],
    *,
    resamples: int,
    level: float,
    seed: int,
    empty_strata: float | None = None,
) -> dict[str, Any]:
    """Metrics, per-category recall, counts and intervals over the scored samples.

    A length stratum without samples has no mean: ``None`` by default, or ``empty_strata``
    (the official script writes 0.0) when the run has scored samples at all.
    """
    scored = [s for s in scores if s.scored]
    n = len(scored)
    sentences = [list(prf(*s.sentence)) for s in scored if s.sentence is not None]

    response: Counter[str] = Counter()
    halves_counts = [0, 0, 0, 0]
    for s in scored:
        k, mid = s.aligned, s.aligned // 2
        gh = any(i < k for i in s.gold_flags)
        th = any(i < k for i in s.pred_flags)
        response["tp" if gh and th else "fp" if th else "fn" if gh else "tn"] += 1
        halves_counts[0] += sum(i < mid for i in s.gold_flags)
        halves_counts[1] += sum(i < mid for i in s.pred_flags)
        halves_counts[2] += sum(mid <= i < k for i in s.gold_flags)
        halves_counts[3] += sum(mid <= i < k for i in s.pred_flags)
    response_prf = _percent(prf(response["tp"], response["fp"], response["fn"]))

    halves = {}
    for name, offset in (("first_half", 0), ("second_half", 2)):
        rows = [getattr(s, name) for s in scored]
        halves[name] = _prf_block(rows) | {
            "count": n,
            "avg_gt_hal_count": halves_counts[offset] / n if n else None,
            "avg_test_hal_count": halves_counts[offset + 1] / n if n else None,
        }

    strata = {}
    for stratum in STRATA:
        rows = [s.token for s in scored if length_stratum(s.aligned) == stratum]
        block = _prf_block(rows)
        if not rows and n and empty_strata is not None:
            block = dict.fromkeys(block, empty_strata)
        strata[stratum] = block | {"count": len(rows)}

    hits: Counter[str] = Counter()
    golds: Counter[str] = Counter()
    for s in scored:
        for category, (hit, total) in s.categories.items():
            hits[category] += hit
            golds[category] += total
    per_category = {
        c: {
            "recall": 100.0 * hits[c] / golds[c] if golds[c] else None,
            "hits": hits[c],
            "gt": golds[c],
            "official": c in OFFICIAL_CATEGORIES,
        }
        for c in sorted(golds)
    }

    domains = {}
    for domain in sorted({s.domain or "Unknown" for s in scored}):
        members = [s for s in scored if (s.domain or "Unknown") == domain]
        domains[domain] = {
            "token": _prf_block(cast(_Rows, [s.token for s in members])),
            "sentence": _prf_block(
                [list(prf(*s.sentence)) for s in members if s.sentence is not None],
                keys=("precision", "recall", "f1"),
            ),
            "count": len(members),
        }

    card_hits = sum(len(set(s.pred_flags) & set(s.gold_flags)) for s in scored)
    card_pred = sum(len(s.pred_flags) for s in scored)
    card_gold = sum(len(s.gold_flags) for s in scored)
    micro = (
        card_hits / card_pred if card_pred else 0.0,
        card_hits / card_gold if card_gold else 0.0,
    )
    micro_f1 = 2 * micro[0] * micro[1] / (micro[0] + micro[1]) if sum(micro) else 0.0

    outcomes = Counter(str(s.outcome) for s in scores)
    answered = [s for s in scores if s.faithful is not None]
    broken = sum(1 for s in answered if not s.faithful)
    gold_total = sum(s.gold_tokens for s in scored)
    gold_hal = sum(len(s.gold_flags) for s in scored)
    test_total = sum(s.pred_tokens for s in scored)
    test_hal = sum(len(s.pred_flags) for s in scored)

    metrics = {
        "token": _prf_block(cast(_Rows, [s.token for s in scored])),
        "sentence": _prf_block(sentences, keys=("precision", "recall", "f1")),
        "response": response_prf | {k: response[k] for k in ("tp", "fp", "fn", "tn")},
        "category_recall": {c: v["recall"] for c, v in per_category.items()},
        "halves": halves,
        "length": strata,
        "domain": domains,
        "token_card": _prf_block(
            cast(_Rows, [s.card for s in scored]), keys=("precision", "recall", "f1")
        ),
        "token_card_micro": _percent((*micro, micro_f1)),
        "faithfulness": {
            "answers": len(answered),
            "broken": broken,
            "broken_percent": 100.0 * broken / len(answered) if answered else None,
        },
        "hallucination_counts": {
            "gold_total_tokens": gold_total,
            "gold_hallu_tokens": gold_hal,
            "test_total_tokens": test_total,
            "test_hallu_tokens": test_hal,
            "avg_gt_total_tokens": gold_total / n if n else None,
            "avg_gt_hal_tokens": gold_hal / n if n else None,
            "avg_test_total_tokens": test_total / n if n else None,
            "avg_test_hal_tokens": test_hal / n if n else None,
        },
        "length_mismatch": sum(1 for s in scored if s.gold_tokens != s.pred_tokens),
    }
    counts = {o.value: 0 for o in Outcome} | dict(outcomes)
    counts |= {
        "total": len(scores),
        "scored": n,
        "valid": outcomes[Outcome.OK],
        "invalid": outcomes[Outcome.UNPARSEABLE],
        "no_hallucination_answers": sum(
            1 for s in scores if s.validity == Validity.NO_HALLUCINATION
        ),
        "echo": sum(s.echo for s in scores),
        "echo_valid": sum(s.echo and s.outcome == Outcome.OK for s in scores),
        "truncated": sum(s.truncated for s in scores),
    }
    counts |= Counter(f"invalid_{s.validity}" for s in scores if s.outcome == Outcome.UNPARSEABLE)
    return {
        "metrics": metrics,
        "per_category": per_category,
        "counts": counts,
        "ci": _intervals(scored, resamples=resamples, level=level, seed=seed),
    }


def _intervals(
    scored: list[DetailVerifyScore], *, resamples: int, level: float, seed: int
) -> dict[str, Any]:
    """Percentile bootstrap over scored samples of the macro token metrics (0–100)."""
    ci: dict[str, Any] = {
        "level": level,
        "resamples": resamples,
        "seed": seed,
        "method": "percentile bootstrap over scored samples",
        "token": None,
    }
    if not scored or resamples <= 0:
        return ci
    values = np.array([s.token for s in scored], dtype=float)
    rng = np.random.default_rng(seed)
    draws = np.empty((resamples, values.shape[1]))
    for row in range(resamples):  # one resample at a time: memory stays O(samples)
        draws[row] = values[rng.integers(0, len(values), len(values))].mean(axis=0)
    ci["token"] = {
        key: percentile_interval(100.0 * draws[:, i], level)
        for i, key in enumerate(("precision", "recall", "f1", "iou"))
    }
    return ci
