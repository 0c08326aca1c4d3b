"""What another evaluation framework (inspect_ai, lmms-eval) needs to ask and score as gavel does.

A task of another framework must send the same questions and score the same way as ``gavel
generate`` and ``gavel score``, so it calls gavel's own loaders, prompts and scorers, never
copies of them: the requests of a benchmark for a preset (:func:`load_requests`), the content of
the chat message gavel would send for one (:class:`MessageBuilder`), prediction records, the
score of one answer (:class:`SampleScorer`), the scoring of a whole run (:func:`evaluate`) and
its metrics as flat names (:func:`flat_metrics`). gavel's own integrations use only these.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import msgspec

from gavel.errors import ConfigError
from gavel.records import Prediction, Result, Score
from gavel.requests import Capabilities, Request
from gavel.scoring.samples import BENCHMARKS, SampleScorer, score_values
from gavel.selection import ALL, Selection

if TYPE_CHECKING:
    from gavel.benchmarks.spec import RunSettings

__all__ = [
    "BENCHMARKS",
    "Family",
    "MessageBuilder",
    "SampleScorer",
    "TaskOptions",
    "add_judged",
    "box_formats",
    "check_benchmark",
    "describe_sampling",
    "evaluate",
    "family",
    "flat_metrics",
    "generation_defaults",
    "load_requests",
    "prediction",
    "prediction_from_dict",
    "prediction_to_dict",
    "resolve_data",
    "resolve_source",
    "score_values",
]


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


def _run_settings(benchmark: str, options: TaskOptions, selection: Selection = ALL) -> RunSettings:
    """The benchmark's own settings record, from the options that benchmark declares."""
    from gavel.benchmarks.registry import echo_filter, get_benchmark
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
        echo=echo_filter(),
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

    def __init__(self, box_format: str, frames: Mapping[str, Any] | None):
        self.capabilities = Capabilities(multi_image=True, video=True, box_format=box_format)
        self._frames = frames

    def settings(self) -> dict[str, Any]:
        return {"frames": self._frames}

    def answer(self, request: Request) -> NoReturn:  # pragma: no cover - never asked
        raise NotImplementedError


def load_requests(
    benchmark: str,
    data: str | Path,
    options: TaskOptions,
    frames: Mapping[str, Any] | None = None,
) -> list[Request]:
    """The requests ``gavel generate`` would send for ``data``: same ids, prompts and media.
    ``frames`` is the video sampling to record (:attr:`MessageBuilder.frames`,
    :func:`describe_sampling`), as a model's settings record it."""
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
    def frames(self) -> dict[str, Any]:
        """How videos are sampled, as manifests record it (``{"mode": "uniform", "count":
        8}``)."""
        return self._adapter.sampling.describe()

    def content(self, request: Request) -> tuple[list[dict[str, Any]], tuple[int, int] | None]:
        """The OpenAI-style content parts and the first image's sent size."""
        return self._adapter.build_content(request)


def describe_sampling(
    frames: int | None = None, fps: float | None = None, max_frames: int | None = None
) -> dict[str, Any]:
    """How videos are sampled under these options, as manifests record it; checks them."""
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
    builtins: dict[str, Any] = msgspec.to_builtins(value)  # a Struct encodes as an object
    return builtins


def prediction_from_dict(value: Mapping[str, Any]) -> Prediction:
    return msgspec.convert(dict(value), Prediction)


def evaluate(
    benchmark: str,
    data: str | Path,
    predictions: Iterable[Prediction],
    options: TaskOptions,
    selection: Selection = ALL,
) -> tuple[Result, Sequence[Score]]:
    """Score a run exactly as ``gavel score`` does: the predictions go through a predictions
    file and the benchmark's own ``evaluate``, so every rule and count is gavel's.

    ``selection`` scores part of the data as ``gavel score --limit``/``--sample-id`` does
    (:meth:`SampleScorer.selection` gives the one of a limited run)."""
    from gavel.benchmarks.registry import get_benchmark
    from gavel.scoring.evaluate import evaluate_records

    check_benchmark(benchmark)
    run = _run_settings(benchmark, options, selection)
    return evaluate_records(get_benchmark(benchmark), Path(data), predictions, run)


def add_judged(
    data: str | Path,
    options: TaskOptions,
    result: Result,
    scores: Sequence[Score],
    judge: Any,
) -> None:
    """Add a judge's records of a scored GAVEL run to it as ``gavel score --judge`` does:
    ``metrics.explanation``, ``counts.judge_error``, each score's judge fields, warnings."""
    from gavel.scoring.judging import add_judge_scores

    root = Path(options.image_root) if options.image_root else None
    add_judge_scores(judge, Path(data), root, None, result, scores)


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


def box_formats() -> list[str]:
    """Every box convention a prompt can ask for and the scorer reads (``--box-format``), so a
    task exported for another framework offers exactly the conventions gavel scores."""
    from gavel.parsing import convention_names

    return convention_names()
