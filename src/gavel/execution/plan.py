"""One generation, planned: everything decided before the first request is sent.

:func:`plan` turns checked :class:`~gavel.execution.settings.GenerateSettings` into a
:class:`RunPlan` in the order the command line always checked them (so the same setting is
refused first), loading the model, preparing the benchmark's requests, choosing the executor,
pricing the run and building its manifest; nothing is sent and no file is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gavel.errors import UsageError
from gavel.execution.settings import GenerateSettings, checked

if TYPE_CHECKING:
    from gavel.benchmarks.spec import Prepared
    from gavel.execution.batch_request import BatchRequest
    from gavel.manifest import Manifest
    from gavel.runner.max_failures import MaxFailures

#: The Ray flags, which only ``--executor ray`` takes.
RAY_SETTINGS = ("workers", "gpus_per_worker", "cpus_per_worker", "placement_timeout",
                "ray_address")  # fmt: skip


@dataclass
class RunPlan:
    """What one generation will do, decided; :func:`gavel.execution.executor.run` runs it."""

    settings: GenerateSettings
    #: The requests to send (resumed ones skipped by the executor as it reads ``out``).
    prepared: Prepared
    #: The loaded model (on Ray: the driver's description of it).
    model: Any
    #: The options the model was loaded with (Ray's replicas load it from them).
    options: dict[str, Any]
    #: The answer cache (None: none, for local models or ``no_cache``).
    cache: Path | None
    #: The ``max_cost`` budget (None: none).
    budget: Any
    manifest: Manifest
    #: The predictions file; when it exists, answered samples are skipped, failed ones asked
    #: again.
    out: Path
    #: What the batch settings ask for (the batch API, or a requests file only).
    batch: BatchRequest
    #: How many requests are sorted together before being cut into batches (batching models).
    window: int | None
    failure_limit: MaxFailures | None
    #: Whether the model answers a batch of requests at once (its own loop runs the plan).
    batching: bool
    #: The dry run's estimate (``dry_run``): nothing is to be sent.
    estimate: Any = None

    @property
    def prices(self) -> dict[str, tuple[float, float]] | None:
        """The runner's price table, so its summary states the cost (``price`` given)."""
        from gavel.execution.pricing import runner_prices

        return runner_prices(self.settings.price, self.model)


def refuse_ray_settings(settings: GenerateSettings) -> None:
    from gavel.execution.settings import flag

    given = [flag(name) for name in RAY_SETTINGS if getattr(settings, name) is not None]
    if given and settings.executor != "ray":
        raise UsageError(f"{', '.join(given)}: only with --executor ray")


def plan(settings: GenerateSettings, configuration: Mapping[str, Any] | None = None, *,
         spent_elsewhere: float = 0.0) -> RunPlan:  # fmt: skip
    """The plan of a generation asked for by ``settings``.

    ``configuration``: every setting's value and where it came from (``{"max-tokens":
    {"value": 256, "from": "config"}}``), recorded in the manifest as given. ``spent_elsewhere``:
    what the judge of the same ``gavel run`` spent already (its one ``max_cost`` counts it).
    """
    from gavel.benchmarks.registry import get_benchmark
    from gavel.benchmarks.spec import RunSettings
    from gavel.execution import pricing
    from gavel.execution.batch_request import batch_request
    from gavel.execution.model_options import adapter_options
    from gavel.execution.windows import window_for
    from gavel.manifest import build_manifest
    from gavel.models.presets import get_preset
    from gavel.runner.defaults import answer_cache_for, is_remote
    from gavel.runner.max_failures import MaxFailures
    from gavel.selection import make_selection
    from gavel.sources import resolve_data

    s = checked(settings)
    assert s.data is not None and s.model is not None and s.out is not None  # checked
    spec, out = s.model, s.out
    refuse_ray_settings(s)
    failure_limit = MaxFailures.parse(s.max_failures) if s.max_failures is not None else None
    family = get_preset(s.preset) if s.preset else None
    remote = is_remote(spec)
    bench = get_benchmark(s.benchmark)
    options = adapter_options(s, bench, family)
    data_file, image_root, data_source = resolve_data(s.benchmark, s.data, s.image_root)
    batch = batch_request(s, options)
    if failure_limit is not None and (batch.active or s.executor == "ray"):
        raise UsageError("--max-failures: only for requests sent online by this process "
                         "(not with --batch or --executor ray)")  # fmt: skip
    if s.executor == "ray":  # the replicas load the model; the driver only describes it
        from gavel.runner.ray_executor import driver_model

        model = driver_model(spec, options, s.gpus_per_worker)
    else:
        from gavel.models.registry import load_model

        model = load_model(spec, **options)
    batching = callable(getattr(model, "answer_batch", None))
    window = window_for(model, s.executor) if batching else None
    values = bench.values(s.options)
    values = {o.name: values[o.name] for o in bench.options_for("generate")}
    if family and values.get("prompt", "") is None:  # the preset's prompt of its benchmark
        values["prompt"] = family.gavel_prompt
    selection = make_selection(s.limit, s.sample_id, s.shuffle, s.seed)
    prepared = bench.prepare(data_file, model, RunSettings(values, image_root, seed=s.seed,
                                                           selection=selection))  # fmt: skip
    cache = answer_cache_for(spec, s.cache, s.no_cache)
    estimate = budget = None
    if s.dry_run:  # nothing is sent, nothing written
        estimate = pricing.generation_estimate(model, s.preset, prepared.requests, out, cache,
                                               price=s.price, tokenizer=s.tokenizer,
                                               batch=batch.settings is not None)  # fmt: skip
    elif not (batch.requests_only or batch.from_output):  # nothing sent: nothing to hold
        budget = pricing.generation_budget(
            model,
            out,
            remote and s.executor == "local" and not batching,
            max_cost=s.max_cost,
            price=s.price,
            tokenizer=s.tokenizer,
            preset=s.preset,
            batch=batch.settings is not None,
            spent_elsewhere=spent_elsewhere,
        )
    manifest = build_manifest(
        s.benchmark,
        data_file=str(data_file),
        data_sha256=prepared.data_sha256,
        data_source=data_source,
        predictions_file=str(out),
        model=model.name,
        adapter={"spec": spec, **model.settings(), "box_format": model.capabilities.box_format},
        prompt_sha256=prepared.template.sha256,
        settings={
            "prompt_template": prepared.template.name,
            "preset": s.preset,
            **prepared.settings,
        },
    )
    if prepared.selection is not None:
        manifest.settings["selection"] = prepared.selection
    if configuration is not None:
        manifest.settings["configuration"] = dict(configuration)
    if batching:
        manifest.settings["batching"] = batching_settings(model, window)
    if s.rpm or s.tpm:
        manifest.settings["rate_limits"] = {"rpm": s.rpm, "tpm": s.tpm}
    return RunPlan(
        settings=s, prepared=prepared, model=model, options=options, cache=cache,
        budget=budget, manifest=manifest, out=out, batch=batch, window=window,
        failure_limit=failure_limit, batching=batching, estimate=estimate,
    )  # fmt: skip


def batching_settings(model: Any, window: int | None) -> dict[str, object]:
    """How requests were grouped, for the manifest (batches pad, and padding can move
    floating-point results a little, so the grouping is part of what made the answers)."""
    return {
        "batch_size": model.batch_size,
        "order": "longest first within each window",
        "window": window,
    }
