"""What ``gavel generate`` (and ``gavel.generate``) is asked to do, as one typed record.

:class:`GenerateSettings` has one field per flag of ``gavel generate``, with the flag's
default; the field's metadata names the flag and holds its bound or choices, which the
command line's click types read too (one declaration of each). :func:`checked` converts and
checks a record built from Python values as click checks flags, in click's words (a refusal
is a :class:`~gavel.errors.ConfigError` naming the flag), so the library refuses what the
command line refuses, whoever calls it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gavel.errors import ConfigError
from gavel.setting_checks import (
    MAX_CONCURRENCY,
    MAX_FPS,
    MAX_SEED,
    MIN_FPS,
    Bound,
    as_items,
    as_json_text,
    as_path,
    as_text,
    check_choice,
    refused,
)

if TYPE_CHECKING:
    pass

#: The executors: this process, or samples sharded over Ray actors.
EXECUTORS = ("local", "ray")
DTYPES = ("auto", "float32", "bfloat16", "float16")
DRY_RUN_FORMATS = ("table", "json")
BATCH_FALLBACKS = ("batch", "online")
#: The bounds the settings' numbers share (the flags' click types are made from them).
CONCURRENCY = Bound(int, 1, MAX_CONCURRENCY)
SEED = Bound(int, 0, MAX_SEED)
FPS = Bound(float, MIN_FPS, MAX_FPS)
AT_LEAST_ONE = Bound(int, 1)
NON_NEGATIVE = Bound(float, 0)
POSITIVE = Bound(float, 0, min_open=True)


def _meta(flag: str, bound: Bound | None = None,
          choices: tuple[str, ...] | None = None) -> dict[str, Any]:  # fmt: skip
    """A field's flag, and its bound or choices (the flag's click type reads them too)."""
    return {"flag": flag, "bound": bound, "choices": choices}


@dataclass(frozen=True)
class GenerateSettings:
    """Every setting of ``gavel generate`` (docs/running.md); None means "the default the
    model, preset or executor gives", as a flag not given does."""

    #: The benchmark (``gavel list benchmarks``).
    benchmark: str = field(default="gavel", metadata=_meta(flag="--benchmark"))
    #: Benchmark data: a file or folder, Parquet, ``hf:OWNER/NAME`` (as ``gavel score``).
    data: Path | None = field(default=None, metadata=_meta(flag="--data"))
    #: The model: ``openai:MODEL``, ``hf:PATH``, ``scene``, a plugin's.
    model: str | None = field(default=None, metadata=_meta(flag="--model"))
    #: The predictions JSONL; an existing file is resumed (failed samples asked again).
    out: Path | None = field(default=None, metadata=_meta(flag="--out"))
    #: The benchmark's own settings by option name (GAVEL: ``prompt``, ``box_format``, ...).
    options: Mapping[str, Any] = field(default_factory=dict, metadata=_meta(flag=""))
    #: Model family: its box convention, image size and GAVEL prompt.
    preset: str | None = field(default=None, metadata=_meta(flag="--preset"))
    #: Requests in flight [16 for remote models, 1 for local ones].
    concurrency: int | None = field(
        default=None, metadata=_meta(flag="--concurrency", bound=CONCURRENCY)
    )
    #: OpenAI-compatible endpoints; several spread the requests over their servers.
    base_url: tuple[str, ...] = field(default=(), metadata=_meta(flag="--base-url"))
    #: Environment variable holding the API key [OPENAI_API_KEY].
    api_key_env: str | None = field(default=None, metadata=_meta(flag="--api-key-env"))
    #: Token limit of an answer [1024].
    max_tokens: int | None = field(
        default=None, metadata=_meta(flag="--max-tokens", bound=AT_LEAST_ONE)
    )
    #: Seconds one attempt may take before it is retried [300].
    timeout: float | None = field(default=None, metadata=_meta(flag="--timeout", bound=POSITIVE))
    #: Do not ask the server whether it serves the model before the run.
    no_model_check: bool = field(default=False, metadata=_meta(flag="--no-model-check"))
    #: Sampling temperature [the server's or model's].
    temperature: float | None = field(
        default=None, metadata=_meta(flag="--temperature", bound=NON_NEGATIVE)
    )
    #: JSON object (or its text) merged into every request.
    extra_body: str | Mapping[str, Any] | None = field(
        default=None, metadata=_meta(flag="--extra-body")
    )
    #: MiB of encoded images kept for the requests that send a file again [256].
    image_cache_mb: float | None = field(
        default=None, metadata=_meta(flag="--image-cache-mb", bound=NON_NEGATIVE)
    )
    #: hf: auto, cpu, cuda or cuda:N [auto].
    device: str | None = field(default=None, metadata=_meta(flag="--device"))
    #: hf: the weights' dtype [auto].
    dtype: str | None = field(default=None, metadata=_meta(flag="--dtype", choices=DTYPES))
    #: hf: requests per forward pass [8 on a GPU, 4 on the CPU].
    batch_size: int | None = field(
        default=None, metadata=_meta(flag="--batch-size", bound=AT_LEAST_ONE)
    )
    #: local: this process; ray: samples sharded over Ray actors.
    executor: str = field(default="local", metadata=_meta(flag="--executor", choices=EXECUTORS))
    #: Ray cluster to join [$RAY_ADDRESS, else a local cluster].
    ray_address: str | None = field(default=None, metadata=_meta(flag="--ray-address"))
    #: Ray: model replicas [as many as the cluster's nodes hold].
    workers: int | None = field(default=None, metadata=_meta(flag="--workers", bound=AT_LEAST_ONE))
    #: Ray: GPUs each replica asks for [0].
    gpus_per_worker: float | None = field(
        default=None, metadata=_meta(flag="--gpus-per-worker", bound=NON_NEGATIVE)
    )
    #: Ray: CPUs each replica asks for [1].
    cpus_per_worker: float | None = field(
        default=None, metadata=_meta(flag="--cpus-per-worker", bound=NON_NEGATIVE)
    )
    #: Ray: seconds a joined cluster has to place the replicas [60].
    placement_timeout: float | None = field(
        default=None, metadata=_meta(flag="--placement-timeout", bound=NON_NEGATIVE)
    )
    #: SQLite answer cache for remote models [~/.cache/gavel/answers.sqlite].
    cache: Path | None = field(default=None, metadata=_meta(flag="--cache"))
    #: Neither read nor write the answer cache.
    no_cache: bool = field(default=False, metadata=_meta(flag="--no-cache"))
    #: Folder the images (VideoHallucer: category folders) are under [next to the data].
    image_root: Path | None = field(default=None, metadata=_meta(flag="--image-root"))
    #: VideoHallucer: frames sent per video [the preset's, else 8].
    frames: int | None = field(default=None, metadata=_meta(flag="--frames", bound=AT_LEAST_ONE))
    #: VideoHallucer: one frame every 1/F seconds instead of ``frames``.
    fps: float | None = field(default=None, metadata=_meta(flag="--fps", bound=FPS))
    #: With ``fps``: at most this many frames per video [32].
    max_frames: int | None = field(
        default=None, metadata=_meta(flag="--max-frames", bound=AT_LEAST_ONE)
    )
    #: No progress bar on stderr.
    no_progress: bool = field(default=False, metadata=_meta(flag="--no-progress"))
    #: Stop once more than N samples (or ``P%`` of those asked) failed.
    max_failures: str | None = field(default=None, metadata=_meta(flag="--max-failures"))
    #: Only the first N samples (N at random with ``shuffle``).
    limit: int | None = field(default=None, metadata=_meta(flag="--limit", bound=AT_LEAST_ONE))
    #: Only these samples (or ``@FILE`` naming a file of ids).
    sample_id: tuple[str, ...] = field(default=(), metadata=_meta(flag="--sample-id"))
    #: With ``limit``: that many samples at random (seeded by ``seed``), asked in file order.
    shuffle: bool = field(default=False, metadata=_meta(flag="--shuffle"))
    #: Seed of ``shuffle``.
    seed: int = field(default=0, metadata=_meta(flag="--seed", bound=SEED))
    #: Price the run and send nothing (``dry_run_format``: how the report is printed).
    dry_run: bool = field(default=False, metadata=_meta(flag="--dry-run"))
    #: How the dry run prints its report: table or json.
    dry_run_format: str = field(
        default="table", metadata=_meta(flag="--dry-run-format", choices=DRY_RUN_FORMATS)
    )
    #: The model's prices, ``IN,OUT`` USD per million tokens [a built-in table].
    price: str | None = field(default=None, metadata=_meta(flag="--price"))
    #: A local tokenizer folder, to count the dry run's tokens exactly.
    tokenizer: Path | None = field(default=None, metadata=_meta(flag="--tokenizer"))
    #: Stop sending once the recorded usage costs this much (USD).
    max_cost: float | None = field(
        default=None, metadata=_meta(flag="--max-cost", bound=NON_NEGATIVE)
    )
    #: openai: send the requests as one OpenAI Batch.
    batch: bool = field(default=False, metadata=_meta(flag="--batch"))
    #: What a batch did not answer: ``batch`` (a next round) or ``online`` [batch].
    batch_fallback: str | None = field(
        default=None, metadata=_meta(flag="--batch-fallback", choices=BATCH_FALLBACKS)
    )
    #: Batch rounds at most [3].
    batch_rounds: int | None = field(
        default=None, metadata=_meta(flag="--batch-rounds", bound=AT_LEAST_ONE)
    )
    #: Seconds between two questions about a batch's status [30].
    batch_poll: float | None = field(
        default=None, metadata=_meta(flag="--batch-poll", bound=POSITIVE)
    )
    #: Only write the requests not answered yet as Batch JSONL to this file.
    batch_requests_only: Path | None = field(
        default=None, metadata=_meta(flag="--batch-requests-only")
    )
    #: Merge this output of ``vllm run-batch`` into ``out``.
    from_batch_output: Path | None = field(default=None, metadata=_meta(flag="--from-batch-output"))
    #: Requests per minute each endpoint allows (requests wait their turn).
    rpm: float | None = field(default=None, metadata=_meta(flag="--rpm", bound=POSITIVE))
    #: Tokens per minute each endpoint allows (estimated, then corrected by usage).
    tpm: float | None = field(default=None, metadata=_meta(flag="--tpm", bound=POSITIVE))


SETTINGS = {f.name: f for f in dataclasses.fields(GenerateSettings)}
#: Settings that are paths, and those repeated.
_PATHS = ("data", "out", "cache", "image_root", "tokenizer", "batch_requests_only",
          "from_batch_output")  # fmt: skip
_REPEATED = ("base_url", "sample_id")
#: Settings every generation gives.
REQUIRED = ("data", "model", "out")


def bound(name: str) -> Bound:
    """The bound of a numeric setting (the flag's click type reads it)."""
    found = SETTINGS[name].metadata["bound"]
    assert found is not None, name
    return found


def flag(name: str) -> str:
    """The flag of a setting (``--max-tokens`` for ``max_tokens``), as refusals name it."""
    return SETTINGS[name].metadata["flag"]


def checked(settings: GenerateSettings) -> GenerateSettings:
    """``settings`` with each value converted and checked as its flag's click type would:
    numbers within their bounds, choices among theirs, texts made paths, one text given to a
    repeated setting made a one-item tuple, a dict given as ``extra_body`` made its JSON."""
    from gavel.benchmarks.registry import benchmark_names
    from gavel.models.presets import preset_names

    for name in REQUIRED:
        if getattr(settings, name) is None:  # in click's words for a flag not given
            raise ConfigError(f"Missing option '{flag(name)}'.")
    choices = {"benchmark": benchmark_names(), "preset": preset_names()}
    values: dict[str, Any] = {}
    for name, spec in SETTINGS.items():
        value = getattr(settings, name)
        meta = spec.metadata
        if name == "options":
            values[name] = options_checked(values["benchmark"], value)
        elif name in _REPEATED:
            values[name] = as_items(meta["flag"], value)
        elif value is None and (spec.default is None or isinstance(spec.default, bool)):
            values[name] = spec.default if isinstance(spec.default, bool) else None
        elif meta["bound"] is not None:
            values[name] = meta["bound"].check(meta["flag"], value)
        elif name in choices or meta["choices"] is not None:
            values[name] = check_choice(meta["flag"], value, choices.get(name) or meta["choices"])
        elif name in _PATHS:
            values[name] = as_path(meta["flag"], value)
        elif name == "extra_body":
            values[name] = as_json_text(meta["flag"], value)
        elif isinstance(spec.default, bool):
            if not isinstance(value, bool):  # "no" is no False
                raise refused(meta["flag"], f"{value!r} is not True or False.")
            values[name] = value
        else:
            values[name] = as_text(meta["flag"], value)
    return GenerateSettings(**values)


def options_checked(benchmark: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The benchmark's own settings among ``given`` (by option name), each checked
    (:func:`gavel.setting_checks.check_option`, as ``gavel.score`` checks them); a name the benchmark does not declare is refused, naming it."""
    from gavel.benchmarks.registry import get_benchmark
    from gavel.setting_checks import check_option

    bench = get_benchmark(benchmark)
    bench.values(given)
    declared = {o.name: o for o in bench.options}
    return {name: None if value is None else check_option(declared[name], value)
            for name, value in given.items()}  # fmt: skip


#: Where a setting's value came from, in the manifest's ``configuration``.
FROM_PYTHON = "python"


def configuration(settings: GenerateSettings, given: set[str]) -> dict[str, dict[str, Any]]:
    """The manifest's record of checked ``settings`` given from Python: each setting by its
    flag's name, its value and ``from`` (``python`` for those in ``given``, by setting name,
    else ``default``), in the order ``gavel generate`` records its flags. The benchmark's own
    settings are named by their flags too."""
    from gavel.benchmarks.registry import get_benchmark
    from gavel.manifest import redact_userinfo
    from gavel.setting_checks import plain

    def entry(name: str, value: Any) -> dict[str, Any]:
        return {"value": plain(value), "from": FROM_PYTHON if name in given else "default"}

    record: dict[str, dict[str, Any]] = {}
    for name in SETTINGS:
        if name == "options":
            bench = get_benchmark(settings.benchmark)
            for option in bench.options_for("generate"):
                key = option.flag[2:]
                default = bool(option.default) if option.kind is bool else option.default
                value = settings.options.get(option.name, default)
                record[key] = entry(key.replace("-", "_"), value)
        else:
            record[flag(name)[2:]] = entry(name, getattr(settings, name))
    return redact_userinfo(record)  # no password of a URL is recorded
