"""``gavel generate``: run a model over a benchmark and write (or resume) a predictions file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import msgspec

from gavel.benchmarks.registry import benchmark_names, get_benchmark
from gavel.benchmarks.spec import Benchmark, RunSettings
from gavel.cli import config_file, cost
from gavel.cli.batch_options import batch_options, take_generate_flags
from gavel.cli.benchmark_flags import (
    BenchmarkCommand,
    benchmark_values,
    make_selection,
    selection_options,
)
from gavel.cli.options import FiniteFloat, concurrency_type, fps_type, seed_type
from gavel.cli.rate_options import model_rate_options, rate_limit_options
from gavel.errors import GavelError
from gavel.io.files import atomic_write_bytes
from gavel.manifest import build_manifest, run_manifest_path
from gavel.models.presets import Preset, get_preset, preset_names
from gavel.models.registry import builtin_prefixes, describe_specs, load_model
from gavel.runner.async_runner import AsyncRunSummary, run_sync
from gavel.runner.cache import default_cache
from gavel.runner.max_failures import MaxFailures
from gavel.setting_checks import json_object
from gavel.sources import resolve_data

#: Requests sent to a Ray replica at a time (``run_ray``'s own default).
RAY_REQUESTS_PER_TASK = 32

#: The model flags only some kinds of model take: flag -> (the adapters' option, the kinds).
#: Checked here so a refusal names the flag, not the option it becomes.
MODEL_FLAGS: dict[str, tuple[str, tuple[str, ...]]] = {
    "--base-url": ("base_urls", ("openai",)),
    "--api-key-env": ("api_key_env", ("openai",)),
    "--timeout": ("timeout", ("openai",)),
    "--no-model-check": ("model_check", ("openai",)),
    "--extra-body": ("extra_body", ("openai",)),
    "--max-tokens": ("max_tokens", ("openai", "hf")),
    "--temperature": ("temperature", ("openai", "hf")),
    "--device": ("device", ("hf",)),
    "--dtype": ("dtype", ("hf",)),
    "--batch-size": ("batch_size", ("hf",)),
    "--frames": ("frames", ("openai", "hf")),
    "--fps": ("fps", ("openai", "hf")),
    "--max-frames": ("max_frames", ("openai", "hf")),
}
#: What to do instead, for a flag given to a kind of model that does not take it.
INSTEAD = {
    ("--batch-size", "openai"): "a served model batches requests on its server, so send more "
    "at once with --concurrency instead",
}


def refuse_foreign_flags(spec: str, given: dict[str, Any]) -> None:
    """A usage error naming the first model flag given (``given``: option -> value) that the
    kind of model ``spec`` names does not take."""
    kind = spec.partition(":")[0]
    if kind not in builtin_prefixes():
        return  # load_model names an unknown model; a plugin's factory judges its options
    for flag, (option, kinds) in MODEL_FLAGS.items():
        if kind not in kinds and given.get(option) not in (None, (), ""):
            names = " and ".join(f"{k}:" for k in kinds)
            instead = INSTEAD.get((flag, kind))
            raise click.UsageError(
                f"{flag} applies to {names} models only" + (f"; {instead}" if instead else "")
            )


def batch_window(model, executor: str) -> int:
    """Requests sorted together before they are cut into batches: the batched runner's window,
    or on Ray the requests one replica is sent at a time (at least the runner's default)."""
    from gavel.runner.batched import WINDOW_BATCHES

    window = WINDOW_BATCHES * model.batch_size
    return max(window, RAY_REQUESTS_PER_TASK) if executor == "ray" else window


def batching_settings(model, window: int | None) -> dict[str, object]:
    """How requests were grouped, for the manifest (batches pad, and padding can move
    floating-point results a little, so the grouping is part of what made the answers)."""
    return {
        "batch_size": model.batch_size,
        "order": "longest first within each window",
        "window": window,
    }


@click.command(cls=BenchmarkCommand, benchmark_commands=("generate",))
@config_file.config_option
@click.option(
    "--benchmark", type=click.Choice(benchmark_names()), default="gavel", show_default=True
)
@click.option(
    "--data",
    "data_file",
    type=click.Path(path_type=Path),
    required=True,
    help="Benchmark data (as for `gavel score`).",
)
@click.option("--model", "spec", required=True, help=f"Model to run: {describe_specs()}.")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="Predictions JSONL. An existing file is resumed: answered ids are skipped and "
    "failed ones asked again.",
)
@click.option(
    "--preset",
    type=click.Choice(preset_names()),
    default=None,
    help="Model family: declares its box convention, image size and GAVEL prompt.",
)
@click.option(
    "--concurrency",
    type=concurrency_type(),
    default=None,
    help="Requests in flight [default: 16 for remote models, 1 for local ones].",
)
@click.option(
    "--base-url",
    "base_urls",
    multiple=True,
    help="OpenAI-compatible endpoint; repeat to spread requests over several servers.",
)
@click.option(
    "--api-key-env",
    default=None,
    help="Environment variable holding the API key [default: OPENAI_API_KEY].",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="Token limit of an answer; openai: always sent [default: 1024].",
)
@click.option(
    "--timeout",
    type=FiniteFloat(min=0, min_open=True),
    default=None,
    help="openai: seconds one attempt may take before it is retried [default: 300].",
)
@click.option(
    "--no-model-check",
    is_flag=True,
    help="openai: do not ask the server (GET /models) whether it serves the model before the "
    "run, for providers whose list omits it or refuses the call.",
)
@click.option("--temperature", type=FiniteFloat(min=0), default=None)
@click.option(
    "--extra-body",
    default=None,
    metavar="JSON",
    help="openai: JSON merged into every request, for a server's own fields, e.g. "
    '\'{"top_k": 1}\' or \'{"chat_template_kwargs": {"enable_thinking": false}}\'.',
)
@click.option("--device", default=None, help="hf: auto, cpu, cuda or cuda:N [default: auto].")
@click.option(
    "--dtype",
    type=click.Choice(["auto", "float32", "bfloat16", "float16"]),
    default=None,
    help="hf: weights' dtype [default: auto].",
)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=None,
    help="hf: requests per forward pass, similar lengths together; answers are written as "
    "each batch finishes [default: 8 on a GPU, 4 on the CPU]. Other models refuse it.",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="local: this process, bounded async concurrency; ray: samples sharded over Ray actors "
    "that each hold a model replica.",
)
@click.option(
    "--ray-address",
    default=None,
    help="Ray cluster to join [default: $RAY_ADDRESS, else a local cluster is started].",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Ray: model replicas [default: as many as the cluster's nodes hold].",
)
@click.option(
    "--gpus-per-worker",
    type=FiniteFloat(min=0),
    default=None,
    help="Ray: GPUs each replica asks for; fractions share a GPU (0.5: two per GPU). An hf: "
    "replica runs on its assigned GPU [default: 0].",
)
@click.option(
    "--cpus-per-worker",
    type=FiniteFloat(min=0),
    default=None,
    help="Ray: CPUs each replica asks for [default: 1].",
)
@click.option(
    "--placement-timeout",
    type=FiniteFloat(min=0),
    default=None,
    help="Ray: seconds a joined cluster has to find the replicas' resources before the run "
    "stops [default: 60]; a local cluster that cannot hold them fails at once.",
)
@click.option(
    "--cache",
    "cache_path",
    type=click.Path(path_type=Path),
    default=None,
    help="SQLite answer cache for remote models [default: ~/.cache/gavel/answers.sqlite].",
)
@click.option("--no-cache", is_flag=True, help="Do not read or write the answer cache.")
@click.option(
    "--image-root",
    type=click.Path(path_type=Path),
    default=None,
    help="Folder the images (or, for VideoHallucer, the category folders with their "
    "videos/) are under [default: next to the data].",
)
@click.option(
    "--frames",
    "frame_count",
    type=click.IntRange(min=1),
    default=None,
    help="VideoHallucer: frames sent per video, spread evenly over it [default: the preset's, "
    "else 8].",
)
@click.option(
    "--fps",
    type=fps_type(),
    default=None,
    help="VideoHallucer: instead of --frames, one frame every 1/F seconds (see --max-frames).",
)
@click.option(
    "--max-frames",
    type=click.IntRange(min=1),
    default=None,
    help="With --fps: at most M frames per video, evenly thinned [default: 32].",
)
@click.option("--no-progress", is_flag=True, help="Do not show the progress bar.")
@click.option(
    "--max-failures",
    default=None,
    metavar="N|P%",
    help="Stop once more than N samples (or P% of those asked) failed [default: a run whose "
    "server answers goes on to the end, each refused sample getting its error line].",
)
@selection_options
@click.option(
    "--seed",
    type=seed_type(),
    default=0,
    show_default=True,
    help="Seed of --shuffle (gavel run: also of the bootstrap).",
)
@cost.cost_options("generate")
@batch_options("generate")
@rate_limit_options()
def generate(benchmark: str, data_file: Path, spec: str, out: Path, preset: str | None,
             concurrency: int | None, base_urls: tuple[str, ...], api_key_env: str | None,
             max_tokens: int | None, timeout: float | None, temperature: float | None,
             device: str | None, dtype: str | None, batch_size: int | None, executor: str,
             ray_address: str | None, workers: int | None, gpus_per_worker: float | None,
             cpus_per_worker: float | None, placement_timeout: float | None, cache_path: Path | None,
             no_cache: bool, image_root: Path | None,
             frame_count: int | None, fps: float | None, max_frames: int | None, no_progress: bool,
             no_model_check: bool = False, rpm: float | None = None, tpm: float | None = None,
             max_failures: str | None = None, extra_body: str | None = None,
             limit: int | None = None, sample_ids: tuple[str, ...] = (), shuffle: bool = False,
             seed: int = 0, **benchmark_options) -> None:  # fmt: skip
    """Ask a model about every sample; each answer is saved verbatim as soon as it arrives.

    Failed calls (429, 5xx, timeouts, malformed replies) are retried with backoff; a run that
    keeps failing stops loudly with everything done so far kept. Rerunning the same command
    continues where it stopped, even after kill -9: answered samples are not sent again and no
    line is duplicated. Score the file with `gavel score`.
    """
    ray_flags = {"--workers": workers, "--gpus-per-worker": gpus_per_worker,
                 "--cpus-per-worker": cpus_per_worker, "--placement-timeout": placement_timeout,
                 "--ray-address": ray_address}  # fmt: skip
    given = [flag for flag, value in ray_flags.items() if value is not None]
    if given and executor != "ray":
        raise click.UsageError(f"{', '.join(given)}: only with --executor ray")
    failure_limit = MaxFailures.parse(max_failures) if max_failures is not None else None
    family = get_preset(preset) if preset else None
    remote = spec.startswith("openai:")
    options: dict[str, Any] = {
        "base_urls": base_urls, "api_key_env": api_key_env, "max_tokens": max_tokens,
        "temperature": temperature,
        "box_format": family.box_format if family else None,
        "max_image_side": family.max_image_side if family else None,
    }  # fmt: skip
    # Options only some models take go to them only when given.
    taken = (("device", device), ("dtype", dtype), ("batch_size", batch_size), ("timeout", timeout))
    options |= {k: v for k, v in taken if v is not None}
    if no_model_check:
        options["model_check"] = False
    if extra_body is not None:
        options["extra_body"] = json_object(extra_body, "--extra-body")
    options |= _frame_options(get_benchmark(benchmark), family, frame_count, fps, max_frames)
    options |= model_rate_options(spec, rpm, tpm, executor)
    refuse_foreign_flags(spec, {"base_urls": base_urls, "api_key_env": api_key_env,
                                "timeout": timeout, "max_tokens": max_tokens,
                                "model_check": False if no_model_check else None,
                                "extra_body": extra_body,
                                "temperature": temperature, "device": device, "dtype": dtype,
                                "batch_size": batch_size, "frames": frame_count, "fps": fps,
                                "max_frames": max_frames})  # fmt: skip
    data_file, image_root, data_source = resolve_data(benchmark, data_file, image_root)
    batch_api = take_generate_flags(benchmark_options, spec, executor, options)
    if failure_limit is not None and (batch_api.active or executor == "ray"):
        raise click.UsageError("--max-failures: only for requests sent online by this process "
                               "(not with --batch or --executor ray)")  # fmt: skip
    if executor == "ray":  # the replicas load the model; the driver only describes it
        from gavel.runner.ray_executor import driver_model

        model = driver_model(spec, options, gpus_per_worker)
    else:
        model = load_model(spec, **options)
    batching = callable(getattr(model, "answer_batch", None))
    window = batch_window(model, executor) if batching else None
    bench = get_benchmark(benchmark)
    values = benchmark_values(bench, "generate", benchmark_options)
    if family and values.get("prompt", "") is None:  # the preset's prompt of its benchmark
        values["prompt"] = family.gavel_prompt
    selection = make_selection(limit, sample_ids, shuffle, seed)
    run = RunSettings(values, image_root, seed=seed, selection=selection)
    prepared = bench.prepare(data_file, model, run)
    flags = cost.cost_flags()
    cache = None if no_cache or not remote else (cache_path or default_cache())
    if flags.dry_run:  # nothing is sent, nothing written
        estimate = cost.generation_estimate(flags, model, preset, prepared.requests, out, cache,
                                            batch=batch_api.settings is not None)  # fmt: skip
        return cost.show_dry_run([estimate], flags.dry_run_format)
    offline = batch_api.requests_only or batch_api.from_output  # nothing sent: nothing to hold
    budget = None if offline else cost.generation_budget(
        flags, model, out, remote and executor == "local" and not batching, preset,
        batch_api.settings is not None)  # fmt: skip
    manifest = build_manifest(
        benchmark,
        data_file=str(data_file),
        data_sha256=prepared.data_sha256,
        data_source=data_source,
        predictions_file=str(out),
        model=model.name,
        adapter={"spec": spec, **model.settings(), "box_format": model.capabilities.box_format},
        prompt_sha256=prepared.template.sha256,
        settings={"prompt_template": prepared.template.name, "preset": preset, **prepared.settings},
    )
    if prepared.selection is not None:
        manifest.settings["selection"] = prepared.selection
    manifest.settings |= config_file.recorded()
    if batching:
        manifest.settings["batching"] = batching_settings(model, window)
    if rpm or tpm:
        manifest.settings["rate_limits"] = {"rpm": rpm, "tpm": tpm}
    if batch_api.active:
        summary = batch_api.run(model, prepared, out, cache_path, no_cache, not no_progress,
                                concurrency, budget, cost.runner_prices(flags, model))  # fmt: skip
    elif executor == "ray":
        from gavel.runner.ray_executor import run_ray

        # retry_errors: as the local executor, failed samples are asked again.
        summary = run_ray(spec, options, prepared.requests, out, workers=workers, retry_errors=True,
                          ray_address=ray_address, total=prepared.total, progress=not no_progress,
                          batch_size=window or RAY_REQUESTS_PER_TASK,
                          gpus_per_worker=gpus_per_worker, cpus_per_worker=cpus_per_worker,
                          **_placement_timeout(placement_timeout))  # fmt: skip
        if summary.resources is not None:
            manifest.settings["ray"] = summary.ray_settings()
    elif batching:
        if failure_limit is not None:
            raise click.UsageError(f"--max-failures does not apply to {spec}: it answers in "
                                   "batches, with its own failure budget")  # fmt: skip
        if concurrency is not None:
            click.echo(f"note: --concurrency does not apply to {spec}: it answers one batch "
                       "at a time (--batch-size)", err=True)  # fmt: skip
        from gavel.runner.batched import run_batched

        summary = run_batched(model, prepared.requests, out, total=prepared.total,
                              progress=not no_progress)  # fmt: skip
    else:
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
        live = AsyncRunSummary(model=model.name)  # a --max-cost budget reads its tokens
        summary = run_sync(
            model,
            budget.limit(prepared.requests, live) if budget else prepared.requests,
            out,
            summary=live,
            concurrency=concurrency or (16 if remote else 1),
            total=prepared.total,
            progress=not no_progress,
            cache=cache,
            prices=cost.runner_prices(flags, model),
            max_failures=failure_limit,
        )
    served = getattr(model, "served", None)
    if callable(served) and served():  # the model that answered (carried into results.json)
        manifest.adapter["served_model"] = served()
    atomic_write_bytes(run_manifest_path(out), msgspec.json.format(msgspec.json.encode(manifest)))
    click.echo(f"{out}: {summary.describe()}", err=True)
    _judge_the_outcome(summary, out)
    if getattr(summary, "stopped", None):  # a batch run that stopped (cancelled, budget)
        raise GavelError(summary.stopped)
    cost.stop_if_spent(budget, out)
    if summary.errors:
        raise SamplesFailed(
            f"{summary.errors} of {summary.answered} samples asked failed; their error lines, "
            f"with the server's words, are in {out} (scored as model_error). Rerun the same "
            "command to ask only those again"
        )


class SamplesFailed(GavelError):
    """The run finished, but some samples got an error line instead of an answer (exit 2)."""


def _judge_the_outcome(summary, out: Path) -> None:
    """Show the failed samples by cause; fail a run in which every request sent failed (a
    run in which some did exits 2 too, once its manifest is written: :class:`SamplesFailed`).

    The failure budget stops a long run that keeps failing, but a short one (fewer requests
    than the budget looks at) could fail on every sample and still end "successfully". The
    error lines stay in ``out``: a rerun asks those samples again.
    """
    causes = getattr(summary, "describe_failures", None)
    if callable(causes) and causes():
        click.echo(causes(), err=True)
    answers = summary.answered - summary.errors  # ``answered`` counts error lines too
    if summary.errors and answers == 0:
        raise GavelError(
            f"no request was answered: all {summary.errors} sent failed (their errors are in "
            f"{out}; rerun the same command to ask them again)"
        )


def _placement_timeout(seconds: float | None) -> dict[str, Any]:
    """``run_ray``'s ``placement_timeout`` when given (else its own default)."""
    return {} if seconds is None else {"placement_timeout": seconds}


def _frame_options(bench: Benchmark, family: Preset | None, count: int | None,
                   fps: float | None, max_frames: int | None) -> dict[str, Any]:  # fmt: skip
    """The adapter options choosing a video's frames: the flags, else the preset's default."""
    given = {"frames": count, "fps": fps, "max_frames": max_frames}
    flags = [f"--{name.replace('_', '-')}" for name, value in given.items() if value is not None]
    if flags and not bench.videos:
        raise click.UsageError(f"{' and '.join(flags)}: only for video benchmarks (videohallucer)")
    if count is not None and fps is not None:
        raise click.UsageError("give --frames (a count) or --fps (a rate), not both")
    if max_frames is not None and fps is None:
        raise click.UsageError("--max-frames caps the --fps sampling: give --fps too")
    if flags:
        return {name: value for name, value in given.items() if value is not None}
    if bench.videos and family is not None and family.frames is not None:
        return family.frames.options()
    return {}
