"""``gavel.generate``: ask a model about every sample of a benchmark, as ``gavel generate``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gavel.cost.report import dry_run_text
from gavel.errors import ConfigError
from gavel.execution.generation import SamplesFailed
from gavel.execution.settings import DTYPES, EXECUTORS, GenerateSettings, bound

__all__ = ["DTYPES", "EXECUTORS", "GenerateSettings", "Generation", "SamplesFailed", "bound",
           "dry_run_text", "from_parameters", "generate", "generate_with", "spent_by"]  # fmt: skip


@dataclass(frozen=True)
class Generation:
    """What a generation left: its predictions file (resumable), the run manifest beside it,
    and what the file now holds, counted over the whole file (a resumed run's earlier lines
    too), so the numbers do not depend on how many runs made it."""

    predictions: Path
    manifest: Path
    #: Lines in the predictions file: one per sample asked.
    samples: int
    #: Lines with a model's answer.
    answered: int
    #: Lines recording a failed request (scored as ``model_error``; a rerun asks them again).
    errors: int
    #: A dry run's estimate (``dry_run=True``): what would be sent and what it would cost.
    estimate: Any = None


def count_predictions(predictions: Path) -> tuple[int, int]:
    """``(lines, error lines)`` of a predictions file."""
    from gavel.io.predictions import PredictionReader

    lines = errors = 0
    for prediction in PredictionReader(predictions):
        lines += 1
        errors += prediction.error is not None
    return lines, errors


#: The parameters of ``gavel generate`` whose names are not the settings' (``--data``
#: arrives as ``data_file``).
_SETTING_OF = {"data_file": "data", "spec": "model", "base_urls": "base_url",
               "cache_path": "cache", "frame_count": "frames", "sample_ids": "sample_id"}  # fmt: skip


def from_parameters(values: Mapping[str, Any]) -> GenerateSettings:
    """:class:`GenerateSettings` from the values of ``gavel generate``'s parameters (by
    click's names, the chosen benchmark's own options among them), as the command line and
    ``gavel run`` hold them."""
    from gavel.benchmarks.registry import get_benchmark

    own = {o.name for o in get_benchmark(values["benchmark"]).options}
    return GenerateSettings(
        options={name: value for name, value in values.items() if name in own},
        **{_SETTING_OF.get(k, k): v for k, v in values.items() if k not in own},
    )


def settings_from(benchmark: str, given: Mapping[str, Any]) -> GenerateSettings:
    """:class:`GenerateSettings` from keywords: the settings' own names, and the benchmark's
    own settings by their flags' names (``prompt``, ``box_format``). A name neither is refused
    naming the benchmark it belongs to, or listing the settings there are."""
    from gavel.benchmarks.registry import benchmark_names, get_benchmark
    from gavel.execution.settings import SETTINGS
    from gavel.execution.settings import flag as flag_of
    from gavel.setting_checks import check_choice

    check_choice(flag_of("benchmark"), benchmark, benchmark_names())
    bench = get_benchmark(benchmark)
    own = {o.flag[2:].replace("-", "_"): o for o in bench.options_for("generate")}
    fields = {name: value for name, value in given.items() if name in SETTINGS}
    unknown = [name for name in given if name not in SETTINGS and name not in own]
    if unknown or "options" in fields:
        refuse_unknown(bench, [*unknown, *(["options"] if "options" in fields else [])], own)
    options = {own[name].name: value for name, value in given.items() if name in own}
    return GenerateSettings(benchmark=benchmark, options=options, **fields)


def refuse_unknown(bench: Any, unknown: list[str], own: Mapping[str, Any]) -> None:
    """A setting gavel generate does not take, refused naming the benchmark whose option it is
    (:func:`~gavel.benchmarks.registry.foreign_option`), else listing the settings there are."""
    from gavel.benchmarks.registry import foreign_option
    from gavel.execution.settings import SETTINGS

    for name in unknown:
        refusal = foreign_option(f"--{name.replace('_', '-')}", bench, ("generate",))
        if refusal is not None:
            raise ConfigError(refusal)
    known = ", ".join(sorted({*SETTINGS, *own} - {"options"}))
    raise ConfigError(f"{unknown[0]!r} is not a setting of gavel generate (its settings: {known})")


def generate_with(settings: GenerateSettings, configuration: Mapping[str, Any] | None = None,
                  *, spent_elsewhere: float = 0.0) -> Generation:  # fmt: skip
    """Run the generation ``settings`` describe (checked first, as the command line checks
    its flags). ``configuration``: the manifest's record of every setting and where it came
    from (None: none recorded); ``spent_elsewhere``: what the judge of the same run spent,
    counted in ``max_cost``. A dry run returns its estimate, printing nothing."""
    from gavel.execution.generation import generate as run
    from gavel.manifest import run_manifest_path

    outcome = run(settings, configuration, spent_elsewhere=spent_elsewhere)
    path = outcome.plan.out
    manifest = run_manifest_path(path)
    if outcome.summary is None or not path.is_file():  # a dry run, or requests only
        return Generation(path, manifest, 0, 0, 0, outcome.plan.estimate)
    lines, errors = count_predictions(path)
    return Generation(path, manifest, lines, lines - errors, errors)


def generate(benchmark: str, *, data: str | Path, model: str, out: str | Path,
             **settings: Any) -> Generation:  # fmt: skip
    """Ask ``model`` about every sample of ``data`` and write the answers to ``out``, exactly
    as ``gavel generate --benchmark BENCHMARK --data DATA --model MODEL --out OUT`` does.

    ``settings`` are the fields of :class:`~gavel.execution.settings.GenerateSettings` (the
    command's flags by name: ``max_tokens=256``, ``sample_id=[...]``, ``no_cache=True``) and
    the benchmark's own (``prompt=...``), with the same defaults and checks. An existing
    ``out`` is resumed. Progress and notes go to stderr as on the command line; a dry run
    prints its estimate as the command does. Raises :class:`~gavel.errors.GavelError` with
    the command line's message when a setting is refused or samples failed (their error lines
    are in ``out``; calling again asks them again).
    """
    from gavel.execution.settings import checked, configuration

    given = {"data": data, "model": model, "out": out, **settings}
    typed = checked(settings_from(benchmark, given))
    record = configuration(typed, {"benchmark", *given})
    generation = generate_with(typed, record)
    if generation.estimate is not None:
        import sys

        sys.stdout.write(dry_run_text([generation.estimate], record, typed.dry_run_format))
    return generation


def spent_by(predictions: Path, model: str, price: str | None, batch: bool = False) -> float:
    """What the usage a predictions file records cost (USD), at ``price`` (``IN,OUT``) or the
    built-in table's price of ``model`` (its batch price with ``batch``); 0 without a price.
    ``gavel run`` gives its judge what is left of one ``max_cost``."""
    from gavel.execution.pricing import spent_by_generation

    return spent_by_generation(price, model, predictions, batch)
