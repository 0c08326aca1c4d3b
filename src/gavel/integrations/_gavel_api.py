"""The one place where the integrations (inspect_ai, lmms-eval) reach into gavel's benchmarks.

Other frameworks must ask the same questions and score the same way as ``gavel generate`` and
``gavel score``, so they call gavel's own loaders, prompts and scorers, never copies of them.
Everything they need goes through the few functions here: the requests of a benchmark, the
content of the chat message gavel would send for one, a per-sample score, the scoring of a
whole run, and the metrics as flat names. When the benchmarks' internals move, only this
module changes.
"""

from __future__ import annotations

import logging
import math
import tempfile
import typing
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from types import UnionType
from typing import Any

import msgspec

from gavel.errors import ConfigError
from gavel.models.base import Capabilities, Request
from gavel.records import Prediction, Result, Score
from gavel.selection import ALL, Selection

#: The benchmarks the integrations offer, by gavel's names for them.
BENCHMARKS = ("gavel", "detailverify", "videohallucer")

#: The numbers lmms-eval reports for each benchmark (flat names as :func:`flat_metrics` gives).
HEADLINE_METRICS = {
    "gavel": (
        "verification.accuracy",
        "verification.f1",
        "grounding.A@0.3",
        "grounding.A@0.5",
        "grounding.A@0.7",
    ),
    "detailverify": (
        "token.precision",
        "token.recall",
        "token.f1",
        "sentence.f1",
        "response.f1",
    ),
    "videohallucer": ("overall", "overall_basic", "overall_hallucination"),
}


@dataclass(frozen=True)
class TaskOptions:
    """Every setting of a benchmark that an integration passes on; each benchmark reads its own.

    The defaults are ``gavel generate``'s and ``gavel score``'s with an ``openai:`` model:
    boxes in pixels of the image as sent, the official answer rules. The integrations report
    metrics, never intervals, so they score without the bootstrap (``resamples=0``); the
    metrics do not depend on it.
    """

    image_root: str | None = None
    box_format: str = "pixel"
    prompt: str | None = None
    match: str = "union"
    thinking: bool = False
    mode: str = "official"
    empty_groups: str = "null"
    answer_rule: str = "official"
    resamples: int = 0
    seed: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def generation_defaults() -> dict[str, Any]:
    """What ``gavel generate --model openai:...`` asks for unless told otherwise (its adapter's
    defaults: 1,024 tokens at temperature 0); the integrations ask the same, so the same model
    gives the same answers."""
    import inspect

    from gavel.models.openai_compat import OpenAIChatModel

    parameters = inspect.signature(OpenAIChatModel).parameters
    return {name: parameters[name].default for name in ("max_tokens", "temperature")}


@dataclass(frozen=True)
class Family:
    """What a family's preset (``gavel generate --preset NAME``) sets for a run: the box
    convention asked for and read, the longest image side sent, the GAVEL prompt and a
    video's frame sampling (empty: gavel's default). Options given explicitly win."""

    box_format: str = "pixel"
    max_image_side: int | None = None
    prompt: str | None = None
    frames: dict[str, Any] | None = None


def family(preset: str | None) -> Family:
    """The settings of preset ``preset`` (None: gavel's defaults, no preset)."""
    if not preset:
        return Family()
    from gavel.models.presets import get_preset

    chosen = get_preset(preset)
    return Family(
        chosen.box_format,
        chosen.max_image_side,
        chosen.gavel_prompt,
        chosen.frames.options() if chosen.frames else None,
    )


def check_benchmark(benchmark: str) -> None:
    if benchmark not in BENCHMARKS:
        raise ConfigError(
            f"unknown benchmark {benchmark!r}; choose one of: {', '.join(BENCHMARKS)}"
        )


def _run_settings(benchmark: str, options: TaskOptions, selection: Selection = ALL):
    """The benchmark's own settings record, from the options that benchmark declares."""
    from gavel.benchmarks.registry import get_benchmark
    from gavel.benchmarks.spec import RunSettings

    spec = get_benchmark(benchmark)
    named = {
        "prompt": options.prompt,
        "box_format": options.box_format,
        "match": options.match,
        "dvb_mode": options.mode,
        "thinking": options.thinking,
        "empty_groups": options.empty_groups,
        "answer_rule": options.answer_rule,
    }
    values = spec.values({name: value for name, value in named.items() if spec.declares(name)})
    return RunSettings(
        values,
        Path(options.image_root) if options.image_root else None,
        resamples=options.resamples,
        seed=options.seed,
        selection=selection,
    )


def resolve_data(benchmark: str, data: str, options: TaskOptions) -> tuple[Path, TaskOptions]:
    """The local data a benchmark loader reads for ``data`` (what ``gavel score --data``
    takes: a file or folder, Parquet, ``hf:OWNER/NAME``), with the image root it implies;
    Parquet and Hub data are materialized once into gavel's data cache, as for the CLI."""
    path, options, _ = resolve_source(benchmark, data, options)
    return path, options


def resolve_source(
    benchmark: str, data: str, options: TaskOptions
) -> tuple[Path, TaskOptions, str | None]:
    """:func:`resolve_data`, and for ``hf:`` data the same dataset pinned to the commit that
    was read (``hf:OWNER/NAME@COMMIT[:SPLIT]``), which names these files on any machine whose
    Hugging Face cache (or the Hub) has that commit; None for local and Parquet data."""
    from gavel.sources import resolve_data as resolve
    from gavel.sources.spec import HubSpec, parse

    given = Path(options.image_root) if options.image_root else None
    resolved = resolve(benchmark, data, given)
    root = str(resolved.image_root) if resolved.image_root else None
    spec, source = parse(data), resolved.source or {}
    pinned = None
    if isinstance(spec, HubSpec) and source.get("commit"):
        pinned = str(replace(spec, revision=source["commit"]))
    return resolved.path, replace(options, image_root=root), pinned


class _DeclaredModel:
    """What a benchmark's request builder reads of a model: its box convention (GAVEL's prompt
    asks for boxes in it) and its frame sampling (VideoHallucer records it)."""

    name = "external"

    def __init__(self, box_format: str, frames: str | None):
        self.capabilities = Capabilities(multi_image=True, video=True, box_format=box_format)
        self._frames = frames

    def settings(self) -> dict[str, Any]:
        return {"frames": self._frames}

    def answer(self, request: Request):  # pragma: no cover - never asked
        raise NotImplementedError


def load_requests(
    benchmark: str, data: str | Path, options: TaskOptions, frames: str | None = None
) -> list[Request]:
    """The requests ``gavel generate`` would send for ``data``: same ids, prompts and media."""
    from gavel.benchmarks.registry import get_benchmark

    check_benchmark(benchmark)
    spec = get_benchmark(benchmark)
    model = _DeclaredModel(options.box_format, frames)
    prepared = spec.prepare(Path(data), model, _run_settings(benchmark, options))
    return list(prepared.requests)


class MessageBuilder:
    """The content of the user message gavel's OpenAI-compatible adapter sends for a request:
    the images (a video as its sampled frames) as data URLs, then the prompt.

    It is that adapter's own content builder, so the pixels, frames and encoding are the same;
    no server is ever contacted from here.
    """

    def __init__(
        self,
        *,
        max_image_side: int | None = None,
        frames: int | None = None,
        fps: float | None = None,
        max_frames: int | None = None,
        image_format: str = "auto",
    ):
        from gavel.models import openai_compat

        # The adapter notes (in its log) that no API key is set; none is needed here.
        quiet = logging.getLogger(openai_compat.__name__)
        was_disabled, quiet.disabled = quiet.disabled, True
        try:
            self._adapter = openai_compat.OpenAIChatModel(
                "content-only",
                base_urls=["http://127.0.0.1/v1"],  # never asked: only build_content is used
                api_key_env="GAVEL_CONTENT_ONLY_NO_KEY",
                max_image_side=max_image_side,
                frames=frames,
                fps=fps,
                max_frames=max_frames,
                image_format=image_format,
            )
        finally:
            quiet.disabled = was_disabled

    @property
    def frames(self) -> str:
        """How videos are sampled, in gavel's words (for the manifest)."""
        return self._adapter.sampling.describe()

    def content(self, request: Request) -> tuple[list[dict[str, Any]], tuple[int, int] | None]:
        """The OpenAI-style content parts and the first image's sent size."""
        return self._adapter.build_content(request)


def describe_sampling(
    frames: int | None = None, fps: float | None = None, max_frames: int | None = None
) -> str:
    """How videos are sampled under these options, in gavel's words; checks them."""
    from gavel.media.sampling import sampling_from_options

    return sampling_from_options(frames, fps, max_frames).describe()


def prediction(
    sample_id: str,
    response: str | None,
    *,
    model: str | None = None,
    box_format: str | None = None,
    sent_size: Iterable[int] | None = None,
    error: str | None = None,
    finish_reason: str | None = None,
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
) -> Prediction:
    """One line of a gavel predictions file, the raw text kept verbatim."""
    return Prediction(
        id=sample_id,
        response=response,
        model=model,
        box_format=box_format,
        sent_size=list(sent_size) if sent_size else None,
        error=error,
        finish_reason=finish_reason,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
    )


def prediction_to_dict(value: Prediction) -> dict[str, Any]:
    return msgspec.to_builtins(value)


def prediction_from_dict(value: Mapping[str, Any]) -> Prediction:
    return msgspec.convert(dict(value), Prediction)


def evaluate(
    benchmark: str,
    data: str | Path,
    predictions: Iterable[Prediction],
    options: TaskOptions,
    selection: Selection = ALL,
) -> tuple[Result, list[Score]]:
    """Score a run exactly as ``gavel score`` does: the predictions go through a predictions
    file and the benchmark's own ``evaluate``, so every rule and count is gavel's.

    ``selection`` scores part of the data as ``gavel score --limit``/``--sample-id`` does
    (:meth:`SampleScorer.selection` gives the one of a limited run)."""
    from gavel.benchmarks.registry import get_benchmark

    check_benchmark(benchmark)
    encoder = msgspec.json.Encoder()
    with tempfile.TemporaryDirectory(prefix="gavel-") as folder:
        path = Path(folder) / "predictions.jsonl"
        with path.open("wb") as handle:
            for item in predictions:
                handle.write(encoder.encode(item) + b"\n")
        return get_benchmark(benchmark).evaluate(
            Path(data), path, _run_settings(benchmark, options, selection)
        )


def add_judged(
    data: str | Path, options: TaskOptions, result: Result, scores: list[Score], judge: Any
) -> None:
    """Add a judge's records of a scored GAVEL run to it as ``gavel score --judge`` does:
    ``metrics.explanation``, ``counts.judge_error``, each score's judge fields, warnings."""
    from gavel.scoring.judging import add_judge_scores

    root = Path(options.image_root) if options.image_root else None
    add_judge_scores(judge, Path(data), root, None, result, scores)


def attach_judged(scored: Score, judged: Any) -> None:
    """A sample's judge record copied onto its score (``judge_score``, ...)."""
    from gavel.judge.items import attach

    attach([scored], [judged])  # type: ignore[list-item]


def flat_metrics(result: Result, *, counts: bool = True) -> dict[str, float]:
    """Every number among a result's metrics (and outcome counts) under a dotted name,
    ``verification.accuracy``; text, lists and missing values are left out.

    A result of part of the data also says how much: ``selection.chosen`` of
    ``selection.of`` samples (VideoHallucer: pairs), as ``gavel score``'s note under its table
    does."""
    flat: dict[str, float] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping):
            for key, inner in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), inner)
        elif isinstance(value, int | float) and math.isfinite(value):  # bool too, as 0 or 1
            flat[prefix] = float(value)

    metrics = dict(result.metrics)
    if isinstance(metrics.get("explanation"), Mapping):  # the judge's description is no metric
        metrics["explanation"] = {
            key: value for key, value in metrics["explanation"].items() if key != "judge"
        }
    walk("", metrics)
    if counts:
        walk("counts", result.counts)
    recorded = result.manifest.settings.get("selection")
    if recorded:
        flat["selection.chosen"] = float(recorded["chosen"])
        flat["selection.of"] = float(recorded["of"])
    return flat


class SampleScorer:
    """gavel's per-sample score of one answer, for frameworks that score sample by sample
    (inspect's log viewer shows it); the data is loaded once. The run's metrics still come
    from :func:`evaluate`, which also computes what only a whole run has (IoU groups, the
    bootstrap)."""

    def __init__(self, benchmark: str, data: str | Path, options: TaskOptions):
        check_benchmark(benchmark)
        self.benchmark = benchmark
        path = Path(data)
        root = Path(options.image_root) if options.image_root else None
        if benchmark == "gavel":
            from gavel.benchmarks.gavel.data import load_samples
            from gavel.benchmarks.gavel.scoring import GavelSettings, score_predictions

            samples, _ = load_samples(path, root)
            settings: Any = GavelSettings(match=options.match, box_format=options.box_format)
            self._items = {sample.id: sample for sample in samples}
        elif benchmark == "detailverify":
            from gavel.benchmarks.detailverify.data import read_samples
            from gavel.benchmarks.detailverify.scoring import (
                DetailVerifySettings,
                score_predictions,
            )

            samples, _ = read_samples(path)
            settings = DetailVerifySettings(mode=options.mode, thinking=options.thinking)
            self._items = {sample.id: sample for sample in samples}
        else:
            from gavel.benchmarks.videohallucer.data import SIDES, load_dataset
            from gavel.benchmarks.videohallucer.scoring import (
                VideoHallucerSettings,
                score_predictions,
            )

            pairs = load_dataset(path).pairs
            settings = VideoHallucerSettings(answer_rule=options.answer_rule)
            self._items = {pair.question_id(side): pair for pair in pairs for side in SIDES}
        self._score = score_predictions
        self._settings = settings
        #: The benchmark's samples (what --limit counts) in file order, by their ids.
        self._units = list(dict.fromkeys(item.id for item in self._items.values()))

    def selection(self, answered: Iterable[str]) -> Selection:
        """The selection that scores the samples with these answer ids, as
        ``gavel score --sample-id`` would: everything when every sample is among them.

        A VideoHallucer pair is one sample: one of its questions answered brings in the pair,
        and its other question, unanswered, counts as missing (as for ``gavel score``).
        Ids the data does not have are left to the scorer, which reports them as unknown.
        """
        chosen = {self._items[i].id for i in answered if i in self._items}
        if not chosen:
            raise ConfigError("none of the answers is for a sample of the data")
        if len(chosen) == len(self._units):
            return ALL
        return Selection(sample_ids=tuple(unit for unit in self._units if unit in chosen))

    def judge_item(self, scored: Score) -> Any:
        """What a judge is asked about one scored GAVEL sample (a ``JudgeItem``)."""
        from gavel.judge.items import judge_items

        (item,) = judge_items([self._items[scored.id]], [scored])  # type: ignore[list-item]
        return item

    def score(self, answer: Prediction) -> Score:
        item = self._items.get(answer.id)
        if item is None:
            raise ConfigError(f"sample {answer.id!r} is not in the data")
        scores = self._score([item], [answer], self._settings)[0]
        return next(score for score in scores if score.id == answer.id)


#: The types of a per-sample score's fields that are numbers or flags.
_NUMBERS = (bool, int, float)


def _is_number_field(kind: Any) -> bool:
    """Whether a field's type is a number or flag, possibly None (``float | None``)."""
    options = (
        typing.get_args(kind) if typing.get_origin(kind) in (typing.Union, UnionType) else (kind,)
    )
    kept = [option for option in options if option is not type(None)]
    return bool(kept) and all(option in _NUMBERS for option in kept)


def score_values(score: Score) -> dict[str, float | bool]:
    """A per-sample score's numbers and flags (``ok``: the answer could be scored).

    Every number field is there, NaN where the sample has none (an unparseable answer has no
    IoU): inspect's ``--epochs`` reduces each sample's epochs key by key and needs the same
    keys in each, and NaN is how inspect marks a value a sample does not have.
    """
    values: dict[str, float | bool] = {"ok": str(score.outcome) == "ok"}
    for field in msgspec.structs.fields(score):
        if not _is_number_field(field.type):
            continue
        value = getattr(score, field.name)
        finite = isinstance(value, bool) or (
            isinstance(value, int | float) and math.isfinite(value)
        )
        values[field.name] = value if finite else math.nan
    return values
