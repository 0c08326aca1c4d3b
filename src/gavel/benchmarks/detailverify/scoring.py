"""DetailVerifyBench: find the hallucinated words of a long caption, token by token.

Read top-down: load (``data``) → prompt → parse the answer → score each sample
(``detailverify_tokens``) → summarize → :func:`evaluate_files`. The default numbers are those of
the official ``calculate_metrics.py`` on the same outputs, quirks included; docs/detailverify.md
lists every rule, every quirk and every difference from the paper and the evaluation card.

Modes (setting ``mode``):

``official`` (default)
    Only valid answers are scored, as the official pipeline scores only its ``_filtered`` file:
    invalid answers, model errors and missing predictions are dropped from every metric and
    counted.
``strict``
    Every data sample is scored; an invalid answer, a model error or a missing prediction counts
    as flagging nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gavel.benchmarks.detailverify.data import DetailVerifySample, read_samples
from gavel.benchmarks.detailverify.options import EMPTY_GROUPS, MODES
from gavel.benchmarks.detailverify.tokens import (
    DetailVerifyScore,
    score_sample,
    summarize,
)
from gavel.errors import ConfigError
from gavel.io.predictions import PredictionReader
from gavel.manifest import scoring_manifest
from gavel.records import Outcome, Prediction, Result
from gavel.selection import ALL, Selection, select

if TYPE_CHECKING:
    from gavel.parsing.echo import EchoFilter

NAME = "detailverify"


@dataclass(frozen=True)
class DetailVerifySettings:
    """Every choice that changes a DetailVerifyBench number; all of it goes into the manifest."""

    #: ``official``: invalid answers are dropped; ``strict``: they flag nothing.
    mode: str = "official"
    #: Read the answer as the official ``--use_think`` run does (last ``<result>``, else the
    #: text after ``</think>``) instead of the first ``<result>``.
    thinking: bool = False
    #: An empty length stratum: ``null`` (default) or ``zero`` (the official 0.0).
    empty_groups: str = "null"
    resamples: int = 1000
    level: float = 0.95
    seed: int = 0
    #: Every prompt sent (the caller's: ``RunSettings.echo``); None: the shipped ones'.
    echo: EchoFilter | None = field(
        default=None, compare=False, repr=False, metadata={"recorded": False}
    )

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"unknown mode {self.mode!r}; expected one of: {', '.join(MODES)}")
        if self.empty_groups not in EMPTY_GROUPS:
            raise ConfigError(
                f"unknown empty_groups {self.empty_groups!r}; "
                f"expected one of: {', '.join(EMPTY_GROUPS)}"
            )
        if not 0 < self.level < 1:
            raise ConfigError(f"level must lie between 0 and 1, got {self.level}")


# --- scoring --------------------------------------------------------------------------------


def score_predictions(
    samples: list[DetailVerifySample],
    predictions: Iterable[Prediction],
    settings: DetailVerifySettings,
) -> tuple[list[DetailVerifyScore], list[str], Counter[str]]:
    """Score every sample in data order; also the unknown prediction ids and the model names.

    Each prediction is scored as it is read and then let go: only the scores stay."""
    index = {sample.id: i for i, sample in enumerate(samples)}
    scores: list[DetailVerifyScore | None] = [None] * len(samples)
    unknown: list[str] = []
    models: Counter[str] = Counter()
    for prediction in predictions:
        position = index.get(prediction.id)
        if position is None:
            unknown.append(prediction.id)
            continue
        if prediction.model:
            models[prediction.model] += 1
        scores[position] = score_sample(
            samples[position],
            prediction,
            mode=settings.mode,
            thinking=settings.thinking,
            echo=settings.echo,
        )
    scored = [
        score if score is not None
        else score_sample(sample, None, mode=settings.mode, thinking=settings.thinking)
        for sample, score in zip(samples, scores, strict=True)
    ]  # fmt: skip
    return scored, unknown, models


def evaluate_files(
    data: str | Path,
    predictions: str | Path,
    settings: DetailVerifySettings,
    *,
    selection: Selection = ALL,
) -> tuple[Result, list[DetailVerifyScore]]:
    """Score a predictions file against a DetailVerifyBench data file (only the samples a
    ``selection`` chooses, when one is given; the manifest records it)."""
    samples, loader = read_samples(data)
    reader = PredictionReader(predictions)
    samples, kept, chosen = select(selection, samples, reader)
    scores, unknown, models = score_predictions(samples, kept, settings)
    summary = summarize(
        scores,
        resamples=settings.resamples,
        level=settings.level,
        seed=settings.seed,
        empty_strata=0.0 if settings.empty_groups == "zero" else None,
    )
    counts = summary["counts"]
    counts["unknown_ids"] = len(unknown)

    warnings = []
    if unknown:
        shown = ", ".join(repr(u) for u in unknown[:5])
        warnings.append(f"{len(unknown)} prediction(s) for ids not in the data: {shown}")
    if counts[Outcome.MISSING]:
        warnings.append(f"{counts[Outcome.MISSING]} sample(s) have no prediction")
    dropped = counts["invalid"] + counts[Outcome.MISSING] + counts[Outcome.MODEL_ERROR]
    if settings.mode == "official" and dropped:
        warnings.append(
            f"{dropped} sample(s) dropped from every metric (official mode): "
            f"{counts['invalid']} invalid, {counts[Outcome.MISSING]} missing, "
            f"{counts[Outcome.MODEL_ERROR]} model error(s)"
        )
    if counts["echo"]:
        warnings.append(
            f"{counts['echo']} answer(s) are text copied from the prompt (e.g. its "
            f"'<result>NO HALLUCINATION</result>' rule line); {counts['echo_valid']} of them "
            "are valid answers under the official rules and scored as such"
        )
    if counts["truncated"]:
        warnings.append(
            f"{counts['truncated']} answer(s) were cut off by the token limit "
            "(finish_reason 'length')"
        )
    warnings += _loader_warnings(loader.report)

    manifest = scoring_manifest(
        NAME,
        data=data,
        data_sha256=loader.sha256,
        predictions=predictions,
        predictions_sha256=reader.sha256,
        models=models,
        settings=settings,
        extra={"layouts": {k: v for k, v in loader.report.items() if k.endswith("_test")}}
        | ({"selection": chosen} if chosen else {}),
    )
    result = Result(benchmark=NAME, manifest=manifest, warnings=warnings, **summary)
    return result, scores


def _loader_warnings(report: Counter[str]) -> list[str]:
    messages = {
        "odd_case_gold_tags": "gold tag(s) in a case the official scorer ignores "
        "(kept as text, as officially)",
        "unusual_modify": "line(s) with Modify neither 'Yes' nor 'No' (treated as unmodified, "
        "as officially)",
        "boolean_modify": "line(s) with Modify a JSON boolean: treated as unmodified, even when "
        "true, as the official code compares with the string 'Yes' (write 'Yes' or 'No')",
        "unmodified_with_tags": "unmodified sample(s) whose description_tag carries tags "
        "(scored against those tags, as officially)",
        "unreadable_model_reply": "synthetic line(s) with an unreadable model_reply (no labels)",
    }
    return [f"{report[key]} {text}" for key, text in messages.items() if report[key]]
