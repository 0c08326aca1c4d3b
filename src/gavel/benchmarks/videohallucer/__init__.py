"""VideoHallucer: paired basic / hallucinated yes-no questions on videos.

Read top-down: :mod:`.data` (the official layout, pairs), :mod:`.prompt` (one call per
question, with its own video), :mod:`.scoring` (answer rules -> per-question scores -> paired
metrics -> Result), :mod:`.table`, :mod:`.options`. One *sample* is a pair (id
``{category}/{index}``): ``--limit`` counts pairs and a pair is never split. This file adapts
the modules to the :class:`~gavel.benchmarks.spec.Benchmark` record, importing each when used.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from gavel.benchmarks.layout import Layout, RowWriter
from gavel.benchmarks.spec import Benchmark, Prepared, RunSettings
from gavel.benchmarks.videohallucer.options import OPTIONS
from gavel.prompts import PromptTexts
from gavel.requests import Model

NAME = "videohallucer"


def evaluate(data: Path, predictions: Path, run: RunSettings):
    from gavel.benchmarks.videohallucer.scoring import VideoHallucerSettings, evaluate_files

    values = BENCHMARK.values(run.values)
    settings = VideoHallucerSettings(
        answer_rule=values["answer_rule"],
        resamples=run.resamples,
        seed=run.seed,
        echo=run.echo,
    )
    return evaluate_files(data, predictions, settings, selection=run.selection)


def prepare(data: Path, model: Model, run: RunSettings) -> Prepared:
    from gavel.benchmarks.videohallucer.data import load_dataset, video_root
    from gavel.benchmarks.videohallucer.prompt import OFFICIAL_TEMPLATE, build_requests

    BENCHMARK.values(run.values)  # refuses an option VideoHallucer does not have
    dataset = load_dataset(data)
    pairs = run.selection.pick(dataset.pairs, "pair")
    root = run.image_root or video_root(data)
    return Prepared(
        build_requests(pairs, root),
        2 * len(pairs),
        dataset.sha256,
        OFFICIAL_TEMPLATE,
        # How the adapter chose each video's frames (None for models that read the files).
        {"hallucination_video": "own", "frames": model.settings().get("frames")},
        run.selection.recorded(len(pairs), len(dataset.pairs), "pair"),
    )


def table(runs):
    from gavel.benchmarks.videohallucer.table import videohallucer_table
    from gavel.selection import selection_notes

    table = videohallucer_table(runs)
    table.caveats += selection_notes(runs)  # a score of part of the data says so in every format
    return table


def synth(out: Path, n: int, seed: int, difficulty: str, run: RunSettings, progress) -> Path:
    from gavel.synth.videohallucer_set import generate_videohallucer

    BENCHMARK.values(run.values)
    return generate_videohallucer(out, n, seed, difficulty, progress=progress)


def prompts() -> PromptTexts:
    """The official prompt (each question is filled in)."""
    from gavel.benchmarks.videohallucer.prompt import declared_prompts

    return declared_prompts()


def write_rows(out: Path, root: Path, bound: Path | None) -> RowWriter:
    """The writer of a Hub or Parquet dataset's rows into this benchmark's files
    (:mod:`.layout`)."""
    from gavel.benchmarks.videohallucer.layout import VideoHallucerLayout

    return VideoHallucerLayout(out, root, bound)


def check_rows(data: Path, image_root: Path) -> None:
    from gavel.benchmarks.videohallucer.layout import check

    check(data, image_root)


def release_files(folder: Path) -> Sequence[Path] | None:
    """The release's annotation files when ``folder`` is in its own layout (read in place)."""
    from gavel.benchmarks.videohallucer.layout import release_files

    return release_files(folder)


LAYOUT = Layout(write_rows, check_rows, in_place=release_files)


BENCHMARK = Benchmark(
    NAME,
    "VideoHallucer: paired basic / hallucinated yes-no questions on videos",
    "folder in the official layout, or one category's JSON file",
    evaluate,
    prepare,
    table,
    synth,
    options=OPTIONS,
    sample_unit="pair",
    videos=True,
    prompts=prompts,
    layout=LAYOUT,
)
