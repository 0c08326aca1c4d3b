"""DetailVerifyBench: tag the hallucinated words of a long caption.

Read top-down: :mod:`.data` (loader), :mod:`.prompt` (the official prompt, requests),
:mod:`.tokens` (one answer -> per-sample token scores; the reduction), :mod:`.scoring`
(settings, files -> Result), :mod:`.table`, :mod:`.options`. This file adapts them to the
:class:`~gavel.benchmarks.spec.Benchmark` record, importing each only when used.
"""

from __future__ import annotations

from pathlib import Path

from gavel.benchmarks.detailverify.options import OPTIONS
from gavel.benchmarks.layout import Layout, RowWriter
from gavel.benchmarks.spec import Benchmark, Prepared, RunSettings
from gavel.prompts import PromptTexts
from gavel.requests import Model

NAME = "detailverify"


def evaluate(data: Path, predictions: Path, run: RunSettings):
    from gavel.benchmarks.detailverify.scoring import DetailVerifySettings, evaluate_files

    values = BENCHMARK.values(run.values)
    settings = DetailVerifySettings(
        mode=values["dvb_mode"],
        thinking=values["thinking"],
        empty_groups=values["empty_groups"],
        resamples=run.resamples,
        seed=run.seed,
        echo=run.echo,
    )
    return evaluate_files(data, predictions, settings, selection=run.selection)


def prepare(data: Path, model: Model, run: RunSettings) -> Prepared:
    from gavel.benchmarks.detailverify.data import read_samples
    from gavel.benchmarks.detailverify.prompt import build_requests, load_prompt

    values = BENCHMARK.values(run.values)
    samples, loader = read_samples(data)
    chosen = run.selection.pick(samples)
    template = load_prompt(values["thinking"])
    root = run.image_root or data.parent
    return Prepared(
        build_requests(chosen, root, template),
        len(chosen),
        loader.sha256,
        template,
        {"thinking": values["thinking"]},
        run.selection.recorded(len(chosen), len(samples)),
    )


def table(runs):
    from gavel.benchmarks.detailverify.table import detailverify_table
    from gavel.selection import selection_notes

    table = detailverify_table(runs)
    table.caveats += selection_notes(runs)  # a score of part of the data says so in every format
    return table


def synth(out: Path, n: int, seed: int, difficulty: str, run: RunSettings, progress) -> Path:
    from gavel.synth.detailverify_set import DEFAULT_CLEAN_SHARE, generate_detailverify

    values = BENCHMARK.values(run.values)
    share = DEFAULT_CLEAN_SHARE if values["clean_share"] is None else values["clean_share"]
    return generate_detailverify(out, n, seed, difficulty, share, progress=progress)


def prompts() -> PromptTexts:
    """The official prompt, without and with thinking."""
    from gavel.benchmarks.detailverify.prompt import declared_prompts

    return declared_prompts()


def write_rows(out: Path, root: Path, bound: Path | None) -> RowWriter:
    """The writer of a Hub or Parquet dataset's rows into this benchmark's files
    (:mod:`.layout`)."""
    from gavel.benchmarks.detailverify.layout import DetailVerifyLayout

    return DetailVerifyLayout(out, root, bound)


def check_rows(data: Path, image_root: Path) -> None:
    from gavel.benchmarks.detailverify.layout import check

    check(data, image_root)


LAYOUT = Layout(write_rows, check_rows, one_line_per_row=True)


BENCHMARK = Benchmark(
    NAME,
    "DetailVerifyBench: tag the hallucinated words of a long caption",
    "real_test or synthetic_test JSONL file",
    evaluate,
    prepare,
    table,
    synth,
    options=OPTIONS,
    sample_unit="sample",
    prompts=prompts,
    layout=LAYOUT,
)
