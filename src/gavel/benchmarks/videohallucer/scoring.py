"""VideoHallucer: paired yes/no questions that probe hallucination in video-language models.

Read top-down: pairs are loaded (:mod:`gavel.benchmarks.videohallucer.data`), each question of a
pair is asked in its own call with its own video, each answer becomes a per-question
:class:`VideoHallucerScore` under the chosen answer rule, and the scores reduce to the official
numbers: per category basic, hallucinated and paired accuracy, the leaderboard's overall score
(unweighted mean of the paired accuracies of its five categories), and answer bias as the
official ``evaluation_bias.py`` computes it, as the evaluation card defines it, and as the card's
scoring-recipe pseudo-code computes it.

Outcome rules (docs/videohallucer.md): a missing prediction, a model error and (strict rule
only) an unknown answer all count as wrong, and each is counted in ``counts``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from gavel.benchmarks.echo import chosen
from gavel.benchmarks.videohallucer.data import (
    CATEGORIES,
    LEADERBOARD,
    SIDES,
    VideoHallucerPair,
    load_dataset,
    question_ids,
)
from gavel.benchmarks.videohallucer.prompt import (
    HALLUCINATION_VIDEOS,
    PROMPT_SUFFIX,
    declared_prompts,
)
from gavel.errors import ConfigError
from gavel.io.predictions import PredictionReader
from gavel.manifest import scoring_manifest
from gavel.metrics.paired import (
    card_bias,
    card_recipe_bias,
    official_bias,
    pair_accuracy,
    pair_cells,
    pair_intervals,
)
from gavel.parsing.echo import EchoFilter
from gavel.parsing.yesno import (
    ANSWER_RULES,
    BOTH,
    BOTH_WAYS,
    NEITHER,
    NO,
    UNKNOWN,
    YES,
    contains_word,
    official_label,
    prepare,
    strict_reading,
)
from gavel.records import Outcome, Prediction, Result, Score
from gavel.selection import ALL, Selection, select

if TYPE_CHECKING:
    pass

NAME = "videohallucer"


@dataclass(frozen=True)
class VideoHallucerSettings:
    """Every choice that changes a VideoHallucer number; all of it goes into the manifest."""

    #: ``official`` (whole word anywhere) or ``strict`` (opening word, no hedge; else unknown).
    answer_rule: str = "official"
    #: Remove ``<think>`` blocks before matching (upstream scores the raw text: off).
    strip_think: bool = False
    #: The video the hallucinated question was asked with (a generation choice, recorded).
    hallucination_video: str = "own"
    resamples: int = 1000
    level: float = 0.95
    seed: int = 0
    #: Every prompt sent (the caller's: ``RunSettings.echo``); None: the shipped ones'.
    echo: EchoFilter | None = field(
        default=None, compare=False, repr=False, metadata={"recorded": False}
    )

    def __post_init__(self) -> None:
        if self.answer_rule not in ANSWER_RULES:
            raise ConfigError(
                f"unknown answer rule {self.answer_rule!r}; choose one of {', '.join(ANSWER_RULES)}"
            )
        if self.hallucination_video not in HALLUCINATION_VIDEOS:
            raise ConfigError(
                f"unknown hallucination_video {self.hallucination_video!r}; "
                f"choose one of {', '.join(HALLUCINATION_VIDEOS)}"
            )
        if not 0 < self.level < 1:
            raise ConfigError(f"level must lie strictly between 0 and 1, got {self.level}")


class VideoHallucerScore(Score, kw_only=True, omit_defaults=True, gc=False):
    """One question's outcome; ``id`` is ``{category}/{index}/{side}``.

    ``answer`` is the label the rule read: ``yes``/``no``/``both``/``neither`` (official) or
    ``yes``/``no``/``unknown`` (strict); None without a response. ``said_yes``/``said_no``: the
    rule credits the response with that word (both for a hedge under the official rule).
    """

    pair: str
    category: str
    side: str
    type: str | None = None
    gold: str
    answer: str | None = None
    said_yes: bool = False
    said_no: bool = False
    correct: bool = False
    #: The response's yes/no words are all copied from the prompt (the question, the answer
    #: instruction, another shipped prompt) or restate the options ("yes or no"): what the
    #: model wrote itself answers neither.
    #: Recorded under every rule; only ``strict`` reads the response without the copied text.
    echo: bool = False
    #: The token limit cut the response off (``finish_reason: length``); recorded only.
    truncated: bool = False
    #: The rules that cannot read this response, whichever rule scored it, and why:
    #: ``official`` -> ``both``/``neither``; ``strict`` -> ``empty``, ``no_opening_word``,
    #: ``other_word_too`` or ``echo`` (:func:`gavel.parsing.yesno.strict_reading`).
    unread: dict[str, str] = msgspec.field(default_factory=dict)


# --- scoring --------------------------------------------------------------------------------


def score_question(
    pair: VideoHallucerPair,
    side: str,
    prediction: Prediction | None,
    settings: VideoHallucerSettings,
) -> VideoHallucerScore:
    """One question under the settings' answer rule; failures are wrong and say why."""
    base: dict[str, Any] = {
        "id": pair.question_id(side),
        "pair": pair.id,
        "category": pair.category,
        "side": side,
        "type": pair.type,
        "gold": pair.side(side).answer,
    }
    if prediction is None:
        return VideoHallucerScore(outcome=Outcome.MISSING, **base)
    if prediction.error is not None or prediction.response is None:
        detail = (prediction.error or "prediction has neither a response nor an error")[:500]
        return VideoHallucerScore(outcome=Outcome.MODEL_ERROR, detail=detail, **base)
    base["truncated"] = prediction.truncated
    text = prepare(prediction.response, drop_think=settings.strip_think)
    own = own_words(text, pair.side(side).question, settings.echo)
    echo = official_label(BOTH_WAYS.sub(" ", own)) == NEITHER and official_label(text) != NEITHER
    official = official_label(text)
    strict, why = strict_reading(own)
    unread = {"official": official} if official in (BOTH, NEITHER) else {}
    if strict == UNKNOWN:
        unread["strict"] = "echo" if echo else str(why)
    base["unread"] = unread
    if settings.answer_rule == "strict":
        label = strict
        if label == UNKNOWN:
            return VideoHallucerScore(
                outcome=Outcome.UNPARSEABLE,
                answer=UNKNOWN,
                detail="the response only repeats the prompt"
                if echo
                else "the response does not open with exactly one of yes/no",
                echo=echo,
                **base,
            )
        said_yes, said_no = label == YES, label == NO
    else:
        label = official
        said_yes, said_no = contains_word(YES, text), contains_word(NO, text)
    correct = said_yes if base["gold"] == YES else said_no
    return VideoHallucerScore(
        outcome=Outcome.OK,
        answer=label,
        said_yes=said_yes,
        said_no=said_no,
        correct=correct,
        echo=echo,
        **base,
    )


def own_words(text: str, question: str, echo: EchoFilter | None = None) -> str:
    """The response without what it copied from the prompt: the question and the text of every
    prompt sent (``echo``, the caller's filter; else the shipped ones'), the official answer
    instruction included (:mod:`gavel.parsing.echo`)."""
    text = chosen(echo, declared_prompts).remove(text).text
    return EchoFilter([question]).remove(text).text


def score_predictions(
    pairs: list[VideoHallucerPair],
    predictions: Iterable[Prediction],
    settings: VideoHallucerSettings,
) -> tuple[list[VideoHallucerScore], list[str], Counter[str]]:
    """Scores in data order (basic then hallucinated per pair), unknown ids, model names.

    Each prediction is scored as it is read and then let go: only the scores stay."""
    where = {
        pair.question_id(side): (2 * i + j, pair, side)
        for i, pair in enumerate(pairs)
        for j, side in enumerate(SIDES)
    }
    scores: list[VideoHallucerScore | None] = [None] * len(where)
    unknown: list[str] = []
    models: Counter[str] = Counter()
    for prediction in predictions:
        found = where.get(prediction.id)
        if found is None:
            unknown.append(prediction.id)
            continue
        position, pair, side = found
        scores[position] = score_question(pair, side, prediction, settings)
        if prediction.model:
            models[prediction.model] += 1
    scored = [
        score if score is not None else score_question(pair, side, None, settings)
        for (_, pair, side), score in zip(where.values(), scores, strict=True)
    ]
    return scored, unknown, models


# --- reduction to metrics -------------------------------------------------------------------


def _mean(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return float(np.mean(kept)) if kept else None


def _bias(gold: np.ndarray, said_yes: np.ndarray, correct: np.ndarray) -> dict[str, Any]:
    """The three bias readings over the questions given (pairs interleaved basic,
    hallucinated)."""
    basic_gold, halluc_gold = gold[0::2], gold[1::2]
    official = None
    if basic_gold.all() and not halluc_gold.any():  # the script asserts ("yes", "no")
        official = official_bias(correct[0::2], correct[1::2])
    recipe = card_recipe_bias(
        basic_gold, said_yes[0::2], said_yes[1::2], correct[0::2], correct[1::2]
    )
    card = card_bias(gold, said_yes, correct)
    return {"official": official, "card": card, "card_recipe": recipe}


def summarize(
    pairs: list[VideoHallucerPair],
    scores: list[VideoHallucerScore],
    settings: VideoHallucerSettings,
) -> dict[str, Any]:
    """Metrics, per-category breakdowns, outcome counts and intervals for a scored run."""
    correct = np.array([s.correct for s in scores], dtype=bool)
    said_yes = np.array([s.said_yes for s in scores], dtype=bool)
    gold_yes = np.array([s.gold == YES for s in scores], dtype=bool)
    outcomes = np.array([str(s.outcome) for s in scores])
    b, h = correct[0::2], correct[1::2]
    pair_category = np.array([p.category for p in pairs])
    pair_type = np.array([p.type or "" for p in pairs])
    present = [c for c in CATEGORIES if np.any(pair_category == c)]

    per_category: dict[str, Any] = {}
    cells: dict[str, np.ndarray] = {}
    for category in present:
        mask = pair_category == category
        questions = np.repeat(mask, 2)
        block = pair_accuracy(b[mask], h[mask])
        block["per_type"] = {
            t: pair_accuracy(b[mask & (pair_type == t)], h[mask & (pair_type == t)])
            for t in dict.fromkeys(pair_type[mask].tolist())
            if t
        }
        block["bias"] = _bias(gold_yes[questions], said_yes[questions], correct[questions])
        block["counts"] = dict(Counter(outcomes[questions].tolist()))
        if category == "fact_detect":  # evaluation.py's "Fact Score" under --detect_fact
            block["fact_score"] = _mean([block["basic"], block["hallucination"]])
        per_category[category] = block
        cells[category] = pair_cells(b[mask], h[mask])

    leaderboard = [c for c in LEADERBOARD if c in per_category]
    pooled = np.isin(pair_category, leaderboard or present)
    pooled_questions = np.repeat(pooled, 2)
    answered = int(np.sum((outcomes == Outcome.OK) | (outcomes == Outcome.UNPARSEABLE)))
    unparseable = int(np.sum(outcomes == Outcome.UNPARSEABLE))
    metrics: dict[str, Any] = {
        "overall": _mean([per_category[c]["paired"] for c in leaderboard]),
        "overall_basic": _mean([per_category[c]["basic"] for c in leaderboard]),
        "overall_hallucination": _mean([per_category[c]["hallucination"] for c in leaderboard]),
        "overall_categories": leaderboard,
        "pooled": pair_accuracy(b[pooled], h[pooled]),
        "per_category": per_category,
        "bias": {
            "categories": leaderboard or present,
            **_bias(
                gold_yes[pooled_questions],
                said_yes[pooled_questions],
                correct[pooled_questions],
            ),
        },
        "answer_rule": settings.answer_rule,
        "answers": dict(Counter(s.answer for s in scores if s.answer is not None)),
        "echoes": sum(s.echo for s in scores),
        "echoes_credited": sum(s.echo and s.correct for s in scores),
        "truncated": sum(s.truncated for s in scores),
        "unknown_rate": 100.0 * unparseable / answered if answered else None,
        "unread": unread_counts(scores),
    }
    rng = np.random.default_rng(settings.seed)
    ci = {
        "level": settings.level,
        "resamples": settings.resamples,
        "seed": settings.seed,
        "method": "percentile bootstrap over pairs, stratified by category "
        "(exact multinomial resampling of the four pair cells)",
        **pair_intervals(
            cells, leaderboard, resamples=settings.resamples, level=settings.level, rng=rng
        ),
    }
    counts = {o.value: 0 for o in Outcome} | dict(Counter(outcomes.tolist()))
    counts["total"] = len(scores)
    counts["pairs"] = len(pairs)
    return {"metrics": metrics, "per_category": per_category, "counts": counts, "ci": ci}


def unread_counts(scores: list[VideoHallucerScore]) -> dict[str, dict[str, int]]:
    """How many answers each rule cannot read, whichever rule scored them, and why: what the
    chosen rule's number stands on (the official rule credits a hedge and fails silence, the
    strict rule fails both and every answer that does not open with yes or no)."""
    counts: dict[str, dict[str, int]] = {}
    for rule in ANSWER_RULES:
        reasons = Counter(s.unread[rule] for s in scores if rule in s.unread)
        counts[rule] = {"total": sum(reasons.values()), **dict(sorted(reasons.items()))}
    return counts


def evaluate_files(
    data: str | Path,
    predictions: str | Path,
    settings: VideoHallucerSettings | None = None,
    *,
    selection: Selection = ALL,
) -> tuple[Result, list[VideoHallucerScore]]:
    """Score a predictions file (one line per question id) against the annotations at ``data``
    (one category file, a category folder or the release folder).

    A ``selection`` chooses pairs (ids ``{category}/{index}``), so both questions of a pair are
    always scored together."""
    settings = settings or VideoHallucerSettings()
    dataset = load_dataset(data)
    reader = PredictionReader(predictions)
    pairs, kept, chosen = select(
        selection, dataset.pairs, reader, unit="pair", answer_ids=question_ids
    )
    scores, unknown, models = score_predictions(pairs, kept, settings)
    summary = summarize(pairs, scores, settings)
    counts = summary["counts"]
    counts["unknown_ids"] = len(unknown)
    warnings = []
    if unknown:
        shown = ", ".join(repr(u) for u in unknown[:5])
        warnings.append(f"{len(unknown)} prediction(s) for ids not in the data: {shown}")
    for outcome, what in (
        (Outcome.MISSING, "question(s) have no prediction"),
        (Outcome.MODEL_ERROR, "question(s) have a model error"),
        (Outcome.UNPARSEABLE, "answer(s) are neither a clear yes nor a clear no"),
    ):
        if counts[outcome]:
            warnings.append(f"{counts[outcome]} {what} (counted as wrong)")
    metrics = summary["metrics"]
    if metrics["echoes"]:
        warnings.append(
            f"{metrics['echoes']} answer(s) only repeat the prompt (their yes/no words are "
            f"copied from it); under the {settings.answer_rule} rule {metrics['echoes_credited']} "
            "of them count as correct"
            + (
                " (the official whole-word match credits copied words too; --answer-rule strict "
                "does not)"
                if settings.answer_rule == "official"
                else ""
            )
        )
    if metrics["truncated"]:
        warnings.append(
            f"{metrics['truncated']} answer(s) were cut off by the token limit "
            "(finish_reason 'length')"
        )
    board = summary["metrics"]["overall_categories"]
    if len(board) < len(LEADERBOARD):
        warnings.append(
            f"overall averages {len(board)} of the {len(LEADERBOARD)} leaderboard categories "
            f"({', '.join(board) or 'none'}); not comparable with the leaderboard"
        )
    manifest = scoring_manifest(
        NAME,
        data=data,
        data_sha256=dataset.sha256,
        predictions=predictions,
        predictions_sha256=reader.sha256,
        models=models,
        settings=settings,
        extra={
            "data_files": {
                f.category: {"path": str(f.path), "sha256": f.sha256, "pairs": f.pairs}
                for f in dataset.files
            },
            "prompt_suffix": PROMPT_SUFFIX,
        }
        | ({"selection": chosen} if chosen else {}),
    )
    result = Result(benchmark=NAME, manifest=manifest, warnings=warnings, **summary)
    return result, scores
