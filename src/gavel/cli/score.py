"""``gavel score``: predictions file + data -> results.json, per-sample scores, a table."""

from __future__ import annotations

from pathlib import Path

import click
import msgspec

from gavel.benchmarks.registry import benchmark_names, get_benchmark
from gavel.benchmarks.spec import Benchmark, RunSettings
from gavel.cli import config_file, cost
from gavel.cli.batch_options import batch_options, take_judge_flags, use_batch
from gavel.cli.benchmark_flags import (
    BenchmarkCommand,
    benchmark_values,
    make_selection,
    selection_options,
)
from gavel.cli.options import FiniteFloat, bootstrap_type, concurrency_type, json_object, seed_type
from gavel.cli.rate_options import rate_limit_options
from gavel.errors import ConfigError, GavelError
from gavel.integrations.inspect_log import is_inspect_log, reading_epoch
from gavel.io.files import append_line, write_together
from gavel.io.run_files import (
    LEDGER_ENTRY,
    file_sha256,
    judge_replies_path,
    ledger_line,
    ledger_path,
    scores_path,
    sha256_of,
)
from gavel.manifest import redact_userinfo
from gavel.records import Result, Score
from gavel.report.tables import FORMATS, render
from gavel.sources import resolve_data


def write_run(
    out: Path, result: Result, scores: list[Score], ledger_entry: dict | None = None
) -> Path:
    """Write a run's files as one change: per-sample scores, the judge's ledger line, then
    results.json naming the SHA-256 of each (io.files.write_together, io.run_files).

    A failed write (full disk, size limit, read-only folder) leaves every file as it was.
    """
    encoder = msgspec.json.Encoder()
    per_sample = scores_path(out)
    scores = [_without_userinfo(s) for s in scores]
    result.warnings = redact_userinfo(result.warnings)
    lines = b"".join(encoder.encode(s) + b"\n" for s in scores)
    files = {per_sample.name: sha256_of(lines)}
    replies = judge_replies_path(out)
    if ledger_entry is not None and replies.is_file():
        files[replies.name] = file_sha256(replies)
    line = None
    if ledger_entry is not None:
        line = ledger_line(ledger_entry)
        files[LEDGER_ENTRY] = sha256_of(line)
    result.files = files
    summary = msgspec.json.format(encoder.encode(result), indent=2) + b"\n"
    before = None if line is None else (lambda: append_line(ledger_path(out), line))
    write_together([(per_sample, lines), (out, summary)], before_commit=before)
    return per_sample


def _without_userinfo(score: Score) -> Score:
    """A judge's error detail names its endpoint: never with the URL's password."""
    if not getattr(score, "judge_detail", None):  # only GAVEL's scores have a judge
        return score
    return msgspec.structs.replace(score, judge_detail=redact_userinfo(score.judge_detail))


def run_name(result: Result, predictions: Path, name: str | None) -> str:
    return name or result.manifest.model or predictions.stem


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
            type=concurrency_type(),
            default=16,
            show_default=True,
            help="Judge requests in flight.",
        ),
        click.option(
            "--judge-max-tokens",
            type=click.IntRange(min=0),
            default=1024,
            show_default=True,
            help="Token limit of a judge reply (0: send none, e.g. for models that want "
            "max_completion_tokens in --judge-extra-body).",
        ),
        click.option(
            "--judge-temperature",
            type=FiniteFloat(min=0),
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
            type=click.IntRange(min=0),
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
            type=FiniteFloat(min=0, min_open=True),
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


def make_judge(out: Path | None, judge_spec: str, judge_base_urls: tuple[str, ...],
               judge_api_key_env: str | None, judge_concurrency: int, judge_max_tokens: int,
               judge_temperature: float, judge_extra_body: str | None, judge_retries: int,
               judge_cache: Path | None, no_judge_cache: bool, judge_price: str | None = None,
               judge_timeout: float | None = None, no_judge_model_check: bool = False,
               progress: bool = True, judge_rpm: float | None = None,
               judge_tpm: float | None = None):  # fmt: skip
    """The judge the flags describe; an LLM judge's replies go beside ``out``."""
    from gavel.execution.cache import default_cache
    from gavel.judge.apply import JudgeOptions, load_judge

    extra = json_object(judge_extra_body, "--judge-extra-body")
    cache = None if no_judge_cache else (judge_cache or default_cache())
    price = _price(judge_price)
    options = JudgeOptions(
        base_urls=judge_base_urls, api_key_env=judge_api_key_env,
        concurrency=judge_concurrency, max_tokens=judge_max_tokens,
        temperature=judge_temperature, extra_body=extra, invalid_retries=judge_retries,
        cache=cache, replies=judge_replies_path(out) if out is not None else None,
        progress=progress, timeout=judge_timeout, model_check=not no_judge_model_check,
        rpm=judge_rpm, tpm=judge_tpm,
    )  # fmt: skip
    judge = load_judge(judge_spec, options)
    if price is not None and hasattr(judge, "prices"):
        judge.prices = {judge.name: price.per_thousand()}  # the runner's unit
    return judge


def _price(text: str | None):
    from gavel.cost.prices import parse_price

    return None if text is None else parse_price(text, "--judge-price")


def judge_for(benchmark: str, out: Path | None, judge_spec: str | None, **flags):
    """The judge the flags ask for, or None; built before any scoring or generation, so a
    wrong flag or a missing extra is reported before the expensive work, not after it."""
    if judge_spec is None:
        return None
    if benchmark != "gavel":
        raise ConfigError("--judge scores GAVEL explanations; it does not apply to " + benchmark)
    return make_judge(out, judge_spec, **flags)


def add_judge_scores(judge, data_file: Path, image_root: Path | None, out: Path | None,
                     result: Result, scores: list) -> dict | None:  # fmt: skip
    """Run the judge over a scored GAVEL run and record it (metrics, manifest); the ledger
    entry to append when the run's files are written, if any."""
    from gavel.benchmarks.gavel.data import load_samples
    from gavel.judge.apply import judge_result

    samples, _ = load_samples(data_file, image_root)
    scored = {score.id for score in scores}  # a selection scores some samples only
    samples = [sample for sample in samples if sample.id in scored]
    judge_result(result, samples, scores, judge, progress=True)
    usage = result.metrics["explanation"]["judge"].get("usage")
    if usage and usage.get("sent"):
        refused = f", {usage['refused']} without a valid score" if usage.get("refused") else ""
        repaired = f", {usage['repaired']} scored after a repair" if usage.get("repaired") else ""
        click.echo(
            f"judge {judge.name}: {usage['answered'] - usage['errors']} answered "
            f"({usage['cached']} from the cache), {usage['errors']} failed{refused}{repaired}, "
            f"tokens {usage['prompt_tokens']:,} in / {usage['completion_tokens']:,} out",
            err=True,
        )
    if usage is not None and out is not None:
        return {"judge": judge.name, "results": str(out), **usage}
    return None


def evaluate_run(spec: Benchmark, data_file: Path, predictions: Path, run: RunSettings,
                 epoch: int | None, data_source: dict | None, judge, image_root: Path | None,
                 out: Path | None) -> tuple[Result, list[Score], dict | None]:  # fmt: skip
    """Score a run and record where it came from (the epoch of an inspect log, the data's
    source, the resolved settings), then judge it when a judge is given: the result, the
    per-sample scores and the judge's ledger entry, before anything is written (``gavel
    score`` and ``gavel.score`` both call this)."""
    with reading_epoch(epoch):
        result, scores = spec.evaluate(data_file, predictions, run)
    if epoch is not None:
        result.manifest.settings["inspect_epoch"] = epoch
    result.manifest.data_source = data_source
    result.manifest.settings |= config_file.recorded()
    ledger_entry = None
    if judge is not None:
        ledger_entry = add_judge_scores(judge, data_file, image_root, out, result, scores)
    return result, scores, ledger_entry


@click.command(cls=BenchmarkCommand, benchmark_commands=("score",))
@config_file.config_option
@click.option(
    "--benchmark", type=click.Choice(benchmark_names()), default="gavel", show_default=True
)
@click.option(
    "--data",
    "data_file",
    type=click.Path(path_type=Path),
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
    type=click.IntRange(min=1),
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
    type=click.Path(path_type=Path),
    default=None,
    help="GAVEL: folder the image paths are relative to [default: the data file's folder].",
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
    type=bootstrap_type(),
    default=1000,
    show_default=True,
    help="Bootstrap resamples for 95% intervals (0 to skip).",
)
@click.option(
    "--seed",
    type=seed_type(),
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
    if epoch is not None and not is_inspect_log(predictions):
        raise click.UsageError(f"--epoch chooses an epoch of an inspect .eval log: {predictions}")
    data_file, image_root, data_source = resolve_data(benchmark, data_file, image_root)
    spec = get_benchmark(benchmark)
    values = benchmark_values(spec, "score", flags)  # the rest of ``flags``: the judge's
    selection = make_selection(limit, sample_ids, shuffle, seed)
    run = RunSettings(values, image_root, resamples, seed, selection)
    judge_batch = take_judge_flags(flags, judge_spec, out)
    judge = judge_for(benchmark, out, judge_spec, **flags)
    use_batch(judge, judge_batch)
    costs, judge_price = cost.cost_flags(), flags.get("judge_price")
    if costs.dry_run:  # nothing is sent, nothing written
        with reading_epoch(epoch):
            return cost.score_dry_run(costs, judge, spec, data_file, predictions, run, judge_price)
    cost.judge_budget(costs, judge, judge_price)
    result, scores, ledger_entry = evaluate_run(
        spec, data_file, predictions, run, epoch, data_source, judge, image_root, out
    )
    label = run_name(result, predictions, name)
    if out is not None:
        per_sample = write_run(out, result, scores, ledger_entry)
        click.echo(f"wrote {out} and {per_sample}", err=True)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(render(spec.table([(label, result)]), style, [(label, result)]), nl=False)
    stopped = getattr(judge, "stopped", None)
    if stopped:  # everything is written; the exit status says the judging is not complete
        error = GavelError(f"the judge did not finish: {stopped}")
        error.exit_code = getattr(judge, "exit_code", 2)  # type: ignore[attr-defined]
        raise error
