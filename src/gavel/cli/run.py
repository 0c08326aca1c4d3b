"""``gavel run``: generate then score, into one run folder."""

from __future__ import annotations

from pathlib import Path

import click

from gavel.api.benchmarks import benchmark
from gavel.api.generation import from_parameters
from gavel.api.running import run_with
from gavel.cli import config_file, cost
from gavel.cli.batch_options import JUDGE_BATCH_PARAMS
from gavel.cli.benchmark_flags import BenchmarkCommand
from gavel.cli.generate import generate
from gavel.cli.score import score, settings_from_flags, show

#: Options of ``gavel score`` that ``gavel run`` passes through (besides data and benchmark).
#: The benchmark's own options and the selection flags (with --seed) come from the benchmark
#: and from generate, and go to both commands.
SCORE_OPTIONS = (
    "style",
    "name",
    "resamples",
    "judge_spec",
    "judge_base_urls",
    "judge_api_key_env",
    "judge_concurrency",
    "judge_max_tokens",
    "judge_temperature",
    "judge_extra_body",
    "judge_retries",
    "judge_cache",
    "no_judge_cache",
    "judge_price",
    "judge_timeout",
    *JUDGE_BATCH_PARAMS,
    "no_judge_model_check",
    "judge_rpm",
    "judge_tpm",
)


def _options(command: click.Command, names: set[str]) -> list[click.Parameter]:
    return [p for p in command.params if p.name in names]


def _run(**kwargs) -> None:
    """Ask the model (as `gavel generate`), then score (as `gavel score`).

    Everything goes to --out DIR: predictions.jsonl, predictions.manifest.json, results.json
    and results.scores.jsonl. Rerunning resumes the generation and scores again.
    """
    out: Path = kwargs.pop("out")
    flags = cost.pop_cost_flags(kwargs)
    scoring = {name: kwargs.pop(name) for name in SCORE_OPTIONS}
    bench = benchmark(kwargs["benchmark"]).spec
    own = {o.name: kwargs.pop(o.name) for o in bench.options if o.name in kwargs}
    selection = {name: kwargs[name] for name in ("limit", "sample_ids", "shuffle", "seed")}
    predictions = out / "predictions.jsonl"
    costs = {n: getattr(flags, n) for n in cost.COMMAND_FLAGS["generate"]}
    generation = from_parameters(
        {**kwargs, **_for(bench, "generate", own), "out": predictions, **costs}
    )
    scored = settings_from_flags({
        "benchmark": kwargs["benchmark"], "data_file": kwargs["data_file"],
        "predictions": predictions, "out": out / "results.json",
        "image_root": kwargs["image_root"], **selection, **scoring,
        **_for(bench, "score", own), "judge_tokenizer": flags.judge_tokenizer,
    })  # fmt: skip
    outcome = run_with(generation, scored, config_file.resolved())
    if isinstance(outcome, str):  # the dry run's report
        return click.echo(outcome, nl=False)
    show(outcome)


def _for(bench, command: str, values: dict) -> dict:
    """The values of the benchmark's options that ``command`` takes."""
    return {o.name: values[o.name] for o in bench.options_for(command) if o.name in values}


_generate_params = [p for p in generate.params if p.name != "out"]
_score_params = _options(score, set(SCORE_OPTIONS))
_cost_params = _options(score, {"judge_tokenizer"})
run = BenchmarkCommand(
    "run",
    benchmark_commands=("generate", "score"),
    callback=_run,
    params=[
        *_generate_params,
        *_score_params,
        *_cost_params,
        click.Option(
            ["--out"],
            type=click.Path(path_type=Path),
            required=True,
            help="Run folder: predictions, run manifest, results and per-sample scores.",
        ),
    ],
    help=_run.__doc__,
    short_help="Generate predictions, then score them, into one run folder.",
)
