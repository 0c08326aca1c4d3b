"""``gavel.synthesize``: a synthetic data set with exact gold, as ``gavel synth`` writes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gavel.api.settings import command_context, command_values


def synthesize(benchmark: str, *, out: str | Path, **settings: Any) -> Path:
    """Write a synthetic data set of ``benchmark`` into the folder ``out``, byte for byte what
    ``gavel synth --benchmark BENCHMARK --out OUT`` writes; returns what ``data=`` takes (the
    data file; VideoHallucer: the folder).

    ``settings`` are that command's flags by name, with its defaults and checks: ``n`` (100),
    ``seed`` (0), ``difficulty`` ("medium") and the benchmark's own (GAVEL: ``clean_share``,
    ``categories``).
    """
    from gavel.benchmarks.registry import get_benchmark
    from gavel.benchmarks.spec import RunSettings
    from gavel.cli.benchmark_flags import benchmark_values
    from gavel.cli.synth import synth as command

    ctx = command_context(command, benchmark)
    values = command_values(ctx, {"benchmark": benchmark, "out": out, **settings})
    spec = get_benchmark(values.pop("benchmark"))
    count, seed, difficulty = values.pop("count"), values.pop("seed"), values.pop("difficulty")
    path = values.pop("out")
    run = RunSettings(benchmark_values(spec, "synth", values), seed=seed)
    return spec.synth(path, count, seed, difficulty, run, None)
