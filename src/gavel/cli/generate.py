"""``gavel generate``: run a model over a benchmark and write (or resume) a predictions file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from gavel.api.benchmarks import benchmark_names
from gavel.api.generation import DTYPES, EXECUTORS, bound, from_parameters, generate_with
from gavel.api.models import describe_models, preset_names
from gavel.cli import config_file, cost
from gavel.cli.batch_options import batch_options
from gavel.cli.benchmark_flags import BenchmarkCommand, selection_options
from gavel.cli.options import bound_type, data_path, folder_path
from gavel.cli.rate_options import rate_limit_options


@click.command(cls=BenchmarkCommand, benchmark_commands=("generate",))
@config_file.config_option
@click.option(
    "--benchmark", type=click.Choice(benchmark_names()), default="gavel", show_default=True
)
@click.option(
    "--data",
    "data_file",
    type=data_path(),
    required=True,
    help="Benchmark data (as for `gavel score`).",
)
@click.option("--model", "spec", required=True, help=f"Model to run: {describe_models()}.")
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
    type=bound_type(bound("concurrency")),
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
    type=bound_type(bound("max_tokens")),
    default=None,
    help="Token limit of an answer; openai: always sent [default: 1024].",
)
@click.option(
    "--timeout",
    type=bound_type(bound("timeout")),
    default=None,
    help="openai: seconds one attempt may take before it is retried [default: 300].",
)
@click.option(
    "--no-model-check",
    is_flag=True,
    help="openai: do not ask the server (GET /models) whether it serves the model before the "
    "run, for providers whose list omits it or refuses the call.",
)
@click.option("--temperature", type=bound_type(bound("temperature")), default=None)
@click.option(
    "--extra-body",
    default=None,
    metavar="JSON",
    help="openai: JSON merged into every request, for a server's own fields, e.g. "
    '\'{"top_k": 1}\' or \'{"chat_template_kwargs": {"enable_thinking": false}}\'.',
)
@click.option(
    "--image-cache-mb",
    type=bound_type(bound("image_cache_mb")),
    default=None,
    metavar="MIB",
    help="openai: memory for images already encoded, so a file sent again (several captions "
    "of one image, the questions of one video) is read and encoded once [default: 256]; 0 "
    "keeps none.",
)
@click.option("--device", default=None, help="hf: auto, cpu, cuda or cuda:N [default: auto].")
@click.option(
    "--dtype",
    type=click.Choice(DTYPES),
    default=None,
    help="hf: weights' dtype [default: auto].",
)
@click.option(
    "--batch-size",
    type=bound_type(bound("batch_size")),
    default=None,
    help="hf: requests per forward pass, similar lengths together; answers are written as "
    "each batch finishes [default: 8 on a GPU, 4 on the CPU]. Other models refuse it.",
)
@click.option(
    "--executor",
    type=click.Choice(EXECUTORS),
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
    type=bound_type(bound("workers")),
    default=None,
    help="Ray: model replicas [default: as many as the cluster's nodes hold].",
)
@click.option(
    "--gpus-per-worker",
    type=bound_type(bound("gpus_per_worker")),
    default=None,
    help="Ray: GPUs each replica asks for; fractions share a GPU (0.5: two per GPU). An hf: "
    "replica runs on its assigned GPU [default: 0].",
)
@click.option(
    "--cpus-per-worker",
    type=bound_type(bound("cpus_per_worker")),
    default=None,
    help="Ray: CPUs each replica asks for [default: 1].",
)
@click.option(
    "--placement-timeout",
    type=bound_type(bound("placement_timeout")),
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
    type=folder_path(),
    default=None,
    help="Folder the images (or, for VideoHallucer, the category folders with their "
    "videos/) are under [default: next to the data].",
)
@click.option(
    "--frames",
    "frame_count",
    type=bound_type(bound("frames")),
    default=None,
    help="VideoHallucer: frames sent per video, spread evenly over it [default: the preset's, "
    "else 8].",
)
@click.option(
    "--fps",
    type=bound_type(bound("fps")),
    default=None,
    help="VideoHallucer: instead of --frames, one frame every 1/F seconds (see --max-frames).",
)
@click.option(
    "--max-frames",
    type=bound_type(bound("max_frames")),
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
    type=bound_type(bound("seed")),
    default=0,
    show_default=True,
    help="Seed of --shuffle (gavel run: also of the bootstrap).",
)
@cost.cost_options("generate")
@batch_options("generate")
@rate_limit_options()
def generate(**given: Any) -> None:
    """Ask a model about every sample; each answer is saved verbatim as soon as it arrives.

    Failed calls (429, 5xx, timeouts, malformed replies) are retried with backoff; a run that
    keeps failing stops loudly with everything done so far kept. Rerunning the same command
    continues where it stopped, even after kill -9: answered samples are not sent again and no
    line is duplicated. Score the file with `gavel score`.
    """
    flags = cost.cost_flags()
    costs = {name: getattr(flags, name) for name in cost.COMMAND_FLAGS["generate"]}
    settings = from_parameters({**given, **costs})
    generation = generate_with(settings, config_file.resolved())
    if generation.estimate is not None:  # nothing sent, nothing written
        cost.show_dry_run([generation.estimate], flags.dry_run_format)
