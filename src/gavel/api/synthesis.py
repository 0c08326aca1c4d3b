"""``gavel.synthesize``: a synthetic data set with exact gold, as ``gavel synth`` writes it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
    from gavel.cli.synth import synth as command

    ctx = command_context(command, benchmark)
    values = command_values(ctx, {"benchmark": benchmark, "out": out, **settings})
    name = values.pop("benchmark")
    count, seed, difficulty = values.pop("count"), values.pop("seed"), values.pop("difficulty")
    path = values.pop("out")
    return write_synthetic(name, path, count, seed=seed, difficulty=difficulty, options=values)


def write_synthetic(
    benchmark: str,
    out: str | Path,
    count: int,
    *,
    seed: int,
    difficulty: str,
    options: Mapping[str, Any],
    progress: Callable[[], None] | None = None,
) -> Path:
    """What :func:`synthesize` writes, from values already checked (the command line's parsed
    flags): ``options`` may hold any command's values, only ``benchmark``'s own synth options
    are taken. ``progress`` is called once per sample written, for a progress bar."""
    from gavel.benchmarks.registry import get_benchmark
    from gavel.benchmarks.spec import RunSettings
    from gavel.cli.benchmark_flags import benchmark_values

    spec = get_benchmark(benchmark)
    run = RunSettings(benchmark_values(spec, "synth", dict(options)), seed=seed)
    return spec.synth(Path(out), count, seed, difficulty, run, progress)


def difficulties() -> list[str]:
    """The difficulty levels, easiest first (``gavel synth --difficulty``)."""
    from gavel.synth.scenes import DIFFICULTIES

    return list(DIFFICULTIES)
