"""``gavel score``: predictions file + data -> results.json, per-sample scores, a table."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from gavel.api import benchmarks, scoring
from gavel.api.scoring import BOUNDS, CHOICES, ScoreSettings
from gavel.cli import config_file, cost
from gavel.cli.batch_options import batch_options
from gavel.cli.benchmark_flags import BenchmarkCommand, selection_options
from gavel.cli.options import bound_type, data_path, folder_path
from gavel.cli.rate_options import rate_limit_options
from gavel.errors import UsageError

#: ``gavel score``'s parameters whose setting is named otherwise (the flag's long name).
_RENAMED = {
    "data_file": "data",
    "style": "format",
    "resamples": "bootstrap",
    "judge_spec": "judge",
    "judge_base_urls": "judge_base_url",
    "sample_ids": "sample_id",
    "batch_judge": "judge_batch",
    "batch_judge_fallback": "judge_batch_fallback",
    "batch_judge_rounds": "judge_batch_rounds",
    "batch_judge_poll": "judge_batch_poll",
}


def settings_from_flags(values: Mapping[str, Any]) -> ScoreSettings:
    """The settings ``gavel score``'s parameter values (click's names) describe; the chosen
    benchmark's own options go into ``options`` under their setting names."""
    own = {option.name: option for option in benchmarks.benchmark(values["benchmark"]).spec.options}
    options = {own[name].setting: value for name, value in values.items() if name in own}
    rest = {_RENAMED.get(k, k): v for k, v in values.items() if k not in own}
    return ScoreSettings(**rest, options=options)


def judge_options(command):
    """The ``--judge`` flags, shared by ``gavel score`` and ``gavel run``."""
    options = [
        click.option(
            "--judge",
            "judge_spec",
            default=None,
            help="GAVEL: score explanations. openai:MODEL = the paper's LLM-judge protocol on "
            "any OpenAI-compatible server; offline = the embedding proxy (no network; "
            "labelled proxy); or a plugin's NAME[:ARG] (gavel list judges).",
        ),
        click.option(
            "--judge-base-url",
            "judge_base_urls",
            multiple=True,
            help="The judge's endpoint (repeat for several servers) [default: $OPENAI_BASE_URL, "
            "else api.openai.com].",
        ),
        click.option(
            "--judge-api-key-env",
            default=None,
            help="Environment variable with the judge's API key [default: OPENAI_API_KEY].",
        ),
        click.option(
            "--judge-concurrency",
            type=bound_type(BOUNDS["judge_concurrency"]),
            default=16,
            show_default=True,
            help="Judge requests in flight.",
        ),
        click.option(
            "--judge-max-tokens",
            type=bound_type(BOUNDS["judge_max_tokens"]),
            default=1024,
            show_default=True,
            help="Token limit of a judge reply (0: send none, e.g. for models that want "
            "max_completion_tokens in --judge-extra-body).",
        ),
        click.option(
            "--judge-temperature",
            type=bound_type(BOUNDS["judge_temperature"]),
            default=0.0,
            show_default=True,
            help="Judge sampling temperature.",
        ),
        click.option(
            "--judge-extra-body",
            default=None,
            help='JSON merged into every judge request, e.g. \'{"reasoning_effort": "low"}\'.',
        ),
        click.option(
            "--judge-retries",
            type=bound_type(BOUNDS["judge_retries"]),
            default=2,
            show_default=True,
            help="Re-asks after a reply without a valid score (each shows the judge its reply "
            "and asks for only the JSON object; 0: none), before judge_error.",
        ),
        click.option(
            "--judge-cache",
            type=click.Path(path_type=Path),
            default=None,
            help="SQLite cache of judge replies [default: ~/.cache/gavel/answers.sqlite].",
        ),
        click.option("--no-judge-cache", is_flag=True, help="Do not use the judge cache."),
        click.option(
            "--judge-timeout",
            type=bound_type(BOUNDS["judge_timeout"]),
            default=None,
            help="Seconds one judge request may take before it is retried [default: 300].",
        ),
        click.option(
            "--judge-price",
            default=None,
            metavar="IN,OUT",
            help="Judge prices in USD per million input and output tokens, e.g. 1.25,10: the "
            "ledger and manifest then record the cost.",
        ),
        click.option(
            "--no-judge-model-check",
            is_flag=True,
            help="Do not ask the judge's server (GET /models) whether it serves the judge "
            "model before judging, for providers whose list omits it or refuses the call.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@click.command(cls=BenchmarkCommand, benchmark_commands=("score",))
@config_file.config_option
@click.option(
    "--benchmark",
    type=click.Choice(benchmarks.benchmark_names()),
    default="gavel",
    show_default=True,
)
@click.option(
    "--data",
    "data_file",
    type=data_path(),
    required=True,
    help="Gold data: a GAVEL JSONL file, a DetailVerifyBench JSONL file, or the "
    "VideoHallucer folder (or one category's JSON file); or Parquet data, or "
    "hf:OWNER/NAME[@REVISION][:SPLIT] from the Hugging Face Hub.",
)
@click.option(
    "--predictions",
    type=click.Path(path_type=Path),
    required=True,
    help="Predictions JSONL, one line per sample (raw response and/or parsed fields), or an "
    "inspect_ai .eval log (docs/integrations.md).",
)
@click.option(
    "--epoch",
    type=bound_type(BOUNDS["epoch"]),
    default=None,
    help="--predictions is an inspect_ai log of several epochs (inspect eval --epochs N): "
    "score this epoch's answers (1 is the first).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Write results.json here (and per-sample scores beside it as *.scores.jsonl).",
)
@click.option(
    "--image-root",
    type=folder_path(),
    default=None,
    help="GAVEL: folder the image paths are relative to [default: the data file's folder].",
)
@click.option(
    "--format",
    "style",
    type=click.Choice(CHOICES["format"]),
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
    type=bound_type(BOUNDS["bootstrap"]),
    default=1000,
    show_default=True,
    help="Bootstrap resamples for 95% intervals (0 to skip).",
)
@click.option(
    "--seed",
    type=bound_type(BOUNDS["seed"]),
    default=0,
    show_default=True,
    help="Seed of the bootstrap and of --shuffle.",
)
@judge_options
@selection_options
@cost.cost_options("score")
@batch_options("judge")
@rate_limit_options(judge=True)
def score(benchmark: str, data_file: Path, predictions: Path, out: Path | None,
          image_root: Path | None, style: str, name: str | None, resamples: int, seed: int,
          judge_spec: str | None, limit: int | None = None, sample_ids: tuple[str, ...] = (),
          shuffle: bool = False, epoch: int | None = None, **flags) -> None:  # fmt: skip
    """Score saved predictions against gold data; the model is never needed again.

    Missing, failed and unparseable predictions are counted in results.json under "counts";
    how each metric treats them is written in docs/metrics.md and the benchmark's page.

    With --judge, explanations are scored too (metrics.explanation: Avg and one value per
    category, 0-100; docs/judge.md). An LLM judge's replies go beside --out as
    *.judge.jsonl and its token use into judge-ledger.jsonl; rerunning resumes.
    """
    costs = cost.cost_flags()
    settings = settings_from_flags({
        "benchmark": benchmark, "data_file": data_file, "predictions": predictions, "out": out,
        "image_root": image_root, "style": style, "name": name, "resamples": resamples,
        "seed": seed, "judge_spec": judge_spec, "limit": limit, "sample_ids": sample_ids,
        "shuffle": shuffle, "epoch": epoch, **flags, "dry_run": costs.dry_run,
        "dry_run_format": costs.dry_run_format, "judge_tokenizer": costs.judge_tokenizer,
        "max_cost": costs.max_cost,
    })  # fmt: skip
    try:
        if settings.dry_run:  # nothing is sent, nothing written
            report = scoring.score_dry_run(settings, config_file.resolved())
            return click.echo(report, nl=False)
        result = scoring.score_with(settings, configuration=config_file.resolved())
    except UsageError as error:
        raise click.UsageError(str(error)) from None
    show(result)


def show(result: scoring.Result) -> None:
    """Print a scored run (the files written, its warnings, its table); then raise why it is
    not complete, if it is not (everything is written; the exit status says so)."""
    if result.written:
        click.echo(f"wrote {' and '.join(map(str, result.written))}", err=True)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(result.table(), nl=False)
    if result.incomplete is not None:
        raise result.incomplete
