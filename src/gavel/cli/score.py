"""``gavel score``: predictions file + data -> results.json, per-sample scores, a table."""

from __future__ import annotations

from pathlib import Path

import click
import msgspec

from gavel.benchmarks.registry import Options, benchmark_names, get_benchmark
from gavel.io.files import atomic_write_bytes, atomic_write_lines
from gavel.matching import policy_names
from gavel.parsing import convention_names
from gavel.records import Result, Score
from gavel.report.tables import FORMATS, render


def scores_path(results_path: Path) -> Path:
    """``run/results.json`` -> ``run/results.scores.jsonl`` (per-sample scores beside results)."""
    return results_path.with_name(results_path.stem + ".scores.jsonl")


def write_run(out: Path, result: Result, scores: list[Score]) -> Path:
    encoder = msgspec.json.Encoder()
    atomic_write_bytes(out, msgspec.json.format(encoder.encode(result), indent=2) + b"\n")
    per_sample = scores_path(out)
    atomic_write_lines(per_sample, (encoder.encode(s) for s in scores))
    return per_sample


def run_name(result: Result, predictions: Path, name: str | None) -> str:
    return name or result.manifest.model or predictions.stem


@click.command()
@click.option(
    "--benchmark", type=click.Choice(benchmark_names()), default="gavel", show_default=True
)
@click.option(
    "--data",
    "data_file",
    type=click.Path(path_type=Path),
    required=True,
    help="Gold data: a GAVEL JSONL file, a DetailVerifyBench JSONL file, or the "
    "VideoHallucer folder (or one category's JSON file).",
)
@click.option(
    "--predictions",
    type=click.Path(path_type=Path),
    required=True,
    help="Predictions JSONL, one line per sample (raw response and/or parsed fields).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Write results.json here (and per-sample scores beside it as *.scores.jsonl).",
)
@click.option(
    "--image-root",
    type=click.Path(path_type=Path),
    default=None,
    help="GAVEL: folder the image paths are relative to [default: the data file's folder].",
)
@click.option(
    "--box-format",
    type=click.Choice(convention_names()),
    default=None,
    help="GAVEL: coordinate convention of boxes in responses, for predictions that do "
    "not declare their own box_format. Never guessed.",
)
@click.option(
    "--match",
    type=click.Choice(policy_names()),
    default="union",
    show_default=True,
    help="GAVEL: how several predicted/gold boxes become one IoU per sample.",
)
@click.option(
    "--mode",
    "dvb_mode",
    type=click.Choice(["official", "strict"]),
    default="official",
    show_default=True,
    help="DetailVerifyBench: official drops invalid answers from "
    "scoring (and counts them); strict scores them as flagging nothing.",
)
@click.option(
    "--thinking",
    is_flag=True,
    help="DetailVerifyBench: read answers as the official thinking-mode run does.",
)
@click.option(
    "--answer-rule",
    type=click.Choice(["official", "strict"]),
    default="official",
    show_default=True,
    help="VideoHallucer: official = the gold word anywhere as a "
    "whole word; strict = an unhedged yes/no, else unknown.",
)
@click.option(
    "--format",
    "style",
    type=click.Choice(FORMATS),
    default="table",
    show_default=True,
    help="How to print the table.",
)
@click.option(
    "--name", default=None, help="Row label [default: the model named in the predictions]."
)
@click.option(
    "--bootstrap",
    "resamples",
    type=click.IntRange(min=0),
    default=1000,
    show_default=True,
    help="Bootstrap resamples for 95% intervals (0 to skip).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
def score(benchmark: str, data_file: Path, predictions: Path, out: Path | None,
          image_root: Path | None, box_format: str | None, match: str, dvb_mode: str,
          thinking: bool, answer_rule: str, style: str, name: str | None, resamples: int,
          seed: int) -> None:  # fmt: skip
    """Score saved predictions against gold data; the model is never needed again.

    Missing, failed and unparseable predictions are counted in results.json under "counts";
    how each metric treats them is written in docs/metrics.md and the benchmark's page.
    """
    options = Options(
        image_root=image_root, box_format=box_format, match=match, dvb_mode=dvb_mode,
        thinking=thinking, answer_rule=answer_rule, resamples=resamples, seed=seed,
    )  # fmt: skip
    spec = get_benchmark(benchmark)
    result, scores = spec.evaluate(data_file, predictions, options)
    label = run_name(result, predictions, name)
    if out is not None:
        per_sample = write_run(out, result, scores)
        click.echo(f"wrote {out} and {per_sample}", err=True)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(render(spec.table([(label, result)]), style, [(label, result)]), nl=False)
