"""``gavel.synthesize``: a synthetic data set with exact gold, as ``gavel synth`` writes it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from gavel.benchmarks.synthesis import BOUNDS, SynthSettings, difficulties

__all__ = ["BOUNDS", "SynthSettings", "difficulties", "from_parameters", "synthesize",
           "synthesize_with"]  # fmt: skip

#: The settings every benchmark's synthesis takes (its own options aside).
_SHARED = ("benchmark", "n", "seed", "out", "difficulty")


def synthesize(benchmark: str, *, out: str | Path, **settings: Any) -> Path:
    """Write a synthetic data set of ``benchmark`` into the folder ``out``, byte for byte what
    ``gavel synth --benchmark BENCHMARK --out OUT`` writes; returns what ``data=`` takes (the
    data file; VideoHallucer: the folder).

    ``settings`` are that command's flags by name, with its defaults and checks: ``n`` (100),
    ``seed`` (0), ``difficulty`` ("medium") and the benchmark's own (GAVEL: ``clean_share``,
    ``categories``).
    """
    from gavel.benchmarks.registry import benchmark_names, foreign_option, get_benchmark
    from gavel.errors import ConfigError
    from gavel.setting_checks import check_choice

    check_choice("--benchmark", benchmark, benchmark_names())
    spec = get_benchmark(benchmark)
    own = {option.setting: option for option in spec.options_for("synth")}
    unknown = [name for name in settings if name not in _SHARED and name not in own]
    if unknown:
        flags = [f"--{name.replace('_', '-')}" for name in unknown]
        refusal = next(filter(None, (foreign_option(f, spec, ("synth",)) for f in flags)), None)
        known = ", ".join(sorted({*_SHARED, *own}))
        raise ConfigError(
            refusal or f"{unknown[0]!r} is not a setting of gavel synth (its settings: {known})"
        )
    options = {own[name].name: value for name, value in settings.items() if name in own}
    shared = {name: value for name, value in settings.items() if name in _SHARED}
    return synthesize_with(SynthSettings(out, benchmark, **shared, options=options))


def from_parameters(values: Mapping[str, Any]) -> SynthSettings:
    """:class:`SynthSettings` from the values of ``gavel synth``'s parameters (by click's
    names, the chosen benchmark's own options among them)."""
    from gavel.benchmarks.registry import get_benchmark
    from gavel.benchmarks.values import benchmark_values

    rest = dict(values)
    options = benchmark_values(get_benchmark(rest["benchmark"]), "synth", rest)
    return SynthSettings(rest.pop("out"), rest.pop("benchmark"), rest.pop("count"), **rest,
                         options=options)  # fmt: skip


def synthesize_with(settings: SynthSettings, progress: Callable[[], None] | None = None) -> Path:
    """Write the data set ``settings`` describe (checked when they were made): what
    :func:`synthesize` writes. ``progress`` is called once per sample written, for a
    progress bar."""
    from gavel.benchmarks.synthesis import synthesize as write

    return write(settings, progress)
