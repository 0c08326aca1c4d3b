"""The benchmarks the command line knows, each as one small record of functions.

A benchmark module stays self-contained (load → prompt → parse → score); this file only adapts
each to the shared command-line options, so ``gavel synth|generate|score|demo`` treat all three
alike without switching on names anywhere else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gavel.errors import ConfigError
from gavel.models.base import Model, Request
from gavel.prompts import Template
from gavel.records import Result, Score
from gavel.tables import Table


@dataclass(frozen=True)
class Options:
    """Every command-line knob a benchmark may read; each benchmark reads its own."""

    image_root: Path | None = None
    box_format: str | None = None
    match: str = "union"
    prompt: str | None = None
    dvb_mode: str = "official"
    thinking: bool = False
    empty_groups: str = "null"
    answer_rule: str = "official"
    resamples: int = 1000
    seed: int = 0
    clean_share: float | None = None
    categories: dict[str, float] | None = None


@dataclass(frozen=True)
class Prepared:
    """What ``gavel generate`` needs: the requests, their number, and provenance."""

    requests: Iterator[Request]
    total: int
    data_sha256: str
    template: Template
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Benchmark:
    name: str
    summary: str
    data_help: str
    evaluate: Callable[[Path, Path, Options], tuple[Result, list[Score]]]
    prepare: Callable[[Path, Model, Options], Prepared]
    table: Callable[[Sequence[tuple[str, Result]]], Table]
    synth: Callable[[Path, int, int, str, Options, Callable[[], None] | None], Path]
    #: Whether samples are videos (``gavel generate`` then takes the frame sampling flags).
    videos: bool = False


_BENCHMARKS: dict[str, Benchmark] = {}


def register(benchmark: Benchmark) -> Benchmark:
    _BENCHMARKS[benchmark.name] = benchmark
    return benchmark


def get_benchmark(name: str) -> Benchmark:
    try:
        return _BENCHMARKS[name]
    except KeyError:
        raise ConfigError(
            f"unknown benchmark {name!r}; choose one of: {', '.join(_BENCHMARKS)}"
        ) from None


def benchmark_names() -> list[str]:
    return list(_BENCHMARKS)


# --- GAVEL ----------------------------------------------------------------------------------


def _gavel_evaluate(data: Path, predictions: Path, options: Options):
    from gavel.benchmarks.gavel.scoring import GavelSettings, evaluate_files

    settings = GavelSettings(
        match=options.match,
        box_format=options.box_format,
        resamples=options.resamples,
        seed=options.seed,
    )
    return evaluate_files(data, predictions, settings, image_root=options.image_root)


def _gavel_prepare(data: Path, model: Model, options: Options) -> Prepared:
    from gavel.benchmarks.gavel.data import load_samples
    from gavel.benchmarks.gavel.prompt import build_requests
    from gavel.prompts import load_template

    samples, loader = load_samples(data, options.image_root)
    template = load_template(options.prompt or "gavel_v1")
    root = options.image_root or data.parent
    requests = build_requests(samples, root, template, model.capabilities.box_format)
    return Prepared(requests, len(samples), loader.sha256, template)


def _gavel_table(runs):
    from gavel.benchmarks.gavel.table import gavel_table

    return gavel_table(runs)


def _gavel_synth(out: Path, n: int, seed: int, difficulty: str, options: Options, progress) -> Path:
    from gavel.synth.gavel_set import DEFAULT_CLEAN_SHARE, generate_gavel

    share = DEFAULT_CLEAN_SHARE if options.clean_share is None else options.clean_share
    return generate_gavel(out, n, seed, difficulty, share, options.categories, progress=progress)


register(
    Benchmark(
        "gavel",
        "caption verification, explanation and grounding boxes",
        "GAVEL JSONL file",
        _gavel_evaluate,
        _gavel_prepare,
        _gavel_table,
        _gavel_synth,
    )
)


# --- DetailVerifyBench ----------------------------------------------------------------------


def _dvb_evaluate(data: Path, predictions: Path, options: Options):
    from gavel.benchmarks.detailverify.scoring import DetailVerifySettings, evaluate_files

    settings = DetailVerifySettings(
        mode=options.dvb_mode,
        thinking=options.thinking,
        empty_groups=options.empty_groups,
        resamples=options.resamples,
        seed=options.seed,
    )
    return evaluate_files(data, predictions, settings)


def _dvb_prepare(data: Path, model: Model, options: Options) -> Prepared:
    from gavel.benchmarks.detailverify.data import read_samples
    from gavel.benchmarks.detailverify.prompt import build_requests, load_prompt

    samples, loader = read_samples(data)
    template = load_prompt(options.thinking)
    root = options.image_root or data.parent
    return Prepared(
        build_requests(samples, root, template),
        len(samples),
        loader.sha256,
        template,
        {"thinking": options.thinking},
    )


def _dvb_table(runs):
    from gavel.benchmarks.detailverify.table import detailverify_table

    return detailverify_table(runs)


def _dvb_synth(out: Path, n: int, seed: int, difficulty: str, options: Options, progress) -> Path:
    from gavel.synth.detailverify_set import DEFAULT_CLEAN_SHARE, generate_detailverify

    share = DEFAULT_CLEAN_SHARE if options.clean_share is None else options.clean_share
    return generate_detailverify(out, n, seed, difficulty, share, progress=progress)


register(
    Benchmark(
        "detailverify",
        "DetailVerifyBench: tag the hallucinated words of a long caption",
        "real_test or synthetic_test JSONL file",
        _dvb_evaluate,
        _dvb_prepare,
        _dvb_table,
        _dvb_synth,
    )
)


# --- VideoHallucer --------------------------------------------------------------------------


def _vh_evaluate(data: Path, predictions: Path, options: Options):
    from gavel.benchmarks.videohallucer.scoring import VideoHallucerSettings, evaluate_files

    settings = VideoHallucerSettings(
        answer_rule=options.answer_rule, resamples=options.resamples, seed=options.seed
    )
    return evaluate_files(data, predictions, settings)


def _vh_prepare(data: Path, model: Model, options: Options) -> Prepared:
    from gavel.benchmarks.videohallucer.data import load_dataset, video_root
    from gavel.benchmarks.videohallucer.prompt import OFFICIAL_TEMPLATE, build_requests

    dataset = load_dataset(data)
    root = options.image_root or video_root(data)
    return Prepared(
        build_requests(dataset.pairs, root),
        2 * len(dataset.pairs),
        dataset.sha256,
        OFFICIAL_TEMPLATE,
        # How the adapter chose each video's frames (None for models that read the files).
        {"hallucination_video": "own", "frames": model.settings().get("frames")},
    )


def _vh_table(runs):
    from gavel.benchmarks.videohallucer.table import videohallucer_table

    return videohallucer_table(runs)


def _vh_synth(out: Path, n: int, seed: int, difficulty: str, options: Options, progress) -> Path:
    from gavel.synth.videohallucer_set import generate_videohallucer

    return generate_videohallucer(out, n, seed, difficulty, progress=progress)


register(
    Benchmark(
        "videohallucer",
        "VideoHallucer: paired basic / hallucinated yes-no questions on videos",
        "folder in the official layout, or one category's JSON file",
        _vh_evaluate,
        _vh_prepare,
        _vh_table,
        _vh_synth,
        videos=True,
    )
)
