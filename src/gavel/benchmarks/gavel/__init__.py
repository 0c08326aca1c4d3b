"""GAVEL: verify a one-sentence caption, explain the error, box it.

Read top-down: :mod:`.data` (loading, validation), :mod:`.prompt` (requests), :mod:`.scoring`
(answers -> per-sample scores -> metrics -> Result), :mod:`.table`, :mod:`.options`; and the
data tools :mod:`.split` and :mod:`.stats`. This file only adapts them to the
:class:`~gavel.benchmarks.spec.Benchmark` record, importing each when it is used, so the command
line's start-up needs none of them.
"""

from __future__ import annotations

from pathlib import Path

from gavel.benchmarks.gavel.options import OPTIONS
from gavel.benchmarks.layout import Layout, RowWriter
from gavel.benchmarks.spec import Benchmark, Prepared, RunSettings
from gavel.prompts import PromptTexts
from gavel.requests import Model

NAME = "gavel"


def evaluate(data: Path, predictions: Path, run: RunSettings):
    from gavel.benchmarks.gavel.scoring import GavelSettings, evaluate_files

    values = BENCHMARK.values(run.values)
    settings = GavelSettings(
        match=values["match"],
        box_format=values["box_format"],
        resamples=run.resamples,
        seed=run.seed,
        echo=run.echo,
    )
    return evaluate_files(
        data, predictions, settings, image_root=run.image_root, selection=run.selection
    )


def prepare(data: Path, model: Model, run: RunSettings) -> Prepared:
    from gavel.benchmarks.gavel.data import load_samples
    from gavel.benchmarks.gavel.prompt import build_requests
    from gavel.prompts import load_template

    values = BENCHMARK.values(run.values)
    samples, loader = load_samples(data, run.image_root)
    chosen = run.selection.pick(samples)
    template = load_template(values["prompt"] or "gavel_v1")
    root = run.image_root or data.parent
    requests = build_requests(chosen, root, template, model.capabilities.box_format)
    recorded = run.selection.recorded(len(chosen), len(samples))
    return Prepared(requests, len(chosen), loader.sha256, template, selection=recorded)


def table(runs):
    from gavel.benchmarks.gavel.table import gavel_table
    from gavel.selection import selection_notes

    table = gavel_table(runs)
    table.caveats += selection_notes(runs)  # a score of part of the data says so in every format
    return table


def synth(out: Path, n: int, seed: int, difficulty: str, run: RunSettings, progress) -> Path:
    from gavel.synth.gavel_set import DEFAULT_CLEAN_SHARE, generate_gavel

    values = BENCHMARK.values(run.values)
    share = DEFAULT_CLEAN_SHARE if values["clean_share"] is None else values["clean_share"]
    return generate_gavel(out, n, seed, difficulty, share, values["categories"], progress=progress)


def prompts() -> PromptTexts:
    """The default prompt and the box instruction it is sent with (``--prompt`` chooses among
    the template files, which every echo filter holds anyway)."""
    from gavel.benchmarks.gavel.prompt import declared_prompts

    return declared_prompts()


def write_rows(out: Path, root: Path, bound: Path | None) -> RowWriter:
    """The writer of a Hub or Parquet dataset's rows into this benchmark's files
    (:mod:`.layout`)."""
    from gavel.benchmarks.gavel.layout import GavelLayout

    return GavelLayout(out, root, bound)


def check_rows(data: Path, image_root: Path) -> None:
    from gavel.benchmarks.gavel.layout import check

    check(data, image_root)


LAYOUT = Layout(write_rows, check_rows, one_line_per_row=True)


BENCHMARK = Benchmark(
    NAME,
    "caption verification, explanation and grounding boxes",
    "GAVEL JSONL file",
    evaluate,
    prepare,
    table,
    synth,
    options=OPTIONS,
    sample_unit="sample",
    prompts=prompts,
    layout=LAYOUT,
)
