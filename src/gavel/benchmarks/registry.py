"""The benchmarks the command line knows, by name.

Each benchmark is a package that exposes one :class:`~gavel.benchmarks.spec.Benchmark` record
(its functions and its own options); this file only lists the built-in ones, so ``gavel
synth|generate|score|run|demo`` treat all alike without switching on names anywhere else.
"""

from __future__ import annotations

from gavel.benchmarks.detailverify import BENCHMARK as DETAILVERIFY
from gavel.benchmarks.gavel import BENCHMARK as GAVEL
from gavel.benchmarks.spec import Benchmark
from gavel.benchmarks.videohallucer import BENCHMARK as VIDEOHALLUCER
from gavel.errors import ConfigError

_BENCHMARKS: dict[str, Benchmark] = {b.name: b for b in (GAVEL, DETAILVERIFY, VIDEOHALLUCER)}


def register(benchmark: Benchmark) -> Benchmark:
    _BENCHMARKS[benchmark.name] = benchmark
    return benchmark


def get_benchmark(name: str) -> Benchmark:
    try:
        return _BENCHMARKS[name]
    except KeyError:
        raise ConfigError(
            f"unknown benchmark {name!r}; choose one of: {', '.join(_BENCHMARKS)}"
        ) from None


def benchmark_names() -> list[str]:
    return list(_BENCHMARKS)


def benchmarks() -> list[Benchmark]:
    return list(_BENCHMARKS.values())
