"""The benchmarks the command line knows, by name: the built-in ones and plugins.

Each benchmark is a package that exposes one :class:`~gavel.benchmarks.spec.Benchmark` record
(its functions and its own options); this file lists the built-in ones and adds those other
distributions declare in the ``gavel.benchmarks`` entry-point group (:mod:`gavel.plugins`), so
``gavel synth|generate|score|run|demo`` treat all alike without switching on names anywhere
else. A plugin is imported only when it is chosen by name.
"""

from __future__ import annotations

from collections.abc import Sequence

from gavel.benchmarks.detailverify import BENCHMARK as DETAILVERIFY
from gavel.benchmarks.echo import with_declared
from gavel.benchmarks.gavel import BENCHMARK as GAVEL
from gavel.benchmarks.spec import Benchmark
from gavel.benchmarks.videohallucer import BENCHMARK as VIDEOHALLUCER
from gavel.errors import ConfigError
from gavel.parsing.echo import EchoFilter
from gavel.plugins import plugin_names, plugins, warn_if_shadowed

_BENCHMARKS: dict[str, Benchmark] = {b.name: b for b in (GAVEL, DETAILVERIFY, VIDEOHALLUCER)}


def register(benchmark: Benchmark) -> Benchmark:
    _BENCHMARKS[benchmark.name] = benchmark
    return benchmark


def get_benchmark(name: str) -> Benchmark:
    """The benchmark called ``name``: a built-in one, else a plugin (imported now)."""
    if name in _BENCHMARKS:
        warn_if_shadowed("benchmark", name)
        return _BENCHMARKS[name]
    plugin = plugins("benchmark").get(name)
    if plugin is None:
        raise ConfigError(
            f"unknown benchmark {name!r}; choose one of: {', '.join(benchmark_names())}"
        )
    benchmark = plugin.load()
    if not isinstance(benchmark, Benchmark):
        raise plugin.refuse(
            f"is a {type(benchmark).__name__}, not a gavel.benchmarks.spec.Benchmark"
        )
    if benchmark.name != name:
        raise plugin.refuse(f"names its Benchmark {benchmark.name!r}; the two must agree")
    return benchmark


def builtin_names() -> list[str]:
    return list(_BENCHMARKS)


def benchmark_names() -> list[str]:
    """Built-in names, then the plugins' (found without importing any)."""
    return [*_BENCHMARKS, *plugin_names("benchmark", list(_BENCHMARKS))]


def benchmarks() -> list[Benchmark]:
    """The built-in benchmarks and the plugins already imported (none is imported here, so a
    broken plugin never breaks a run of another benchmark)."""
    loaded = [p.loaded for n, p in plugins("benchmark").items() if n not in _BENCHMARKS]
    return [*_BENCHMARKS.values(), *(b for b in loaded if isinstance(b, Benchmark))]


def echo_filter() -> EchoFilter:
    """The filter of every prompt sent: the shipped templates', the judge's, and those of
    every benchmark known (built once for each set of benchmarks; :mod:`gavel.benchmarks.echo`).
    Callers that score hand it to the benchmark (``RunSettings.echo``)."""
    return with_declared(tuple(b.prompts() for b in benchmarks() if b.prompts is not None))


def option_owners(flag: str, commands: Sequence[str]) -> list[str]:
    """The benchmarks that have ``flag`` on any of ``commands``."""
    return [
        b.name
        for b in benchmarks()
        if any(o.flag == flag for c in commands for o in b.options_for(c))
    ]


def foreign_option(flag: str, bench: Benchmark, commands: Sequence[str]) -> str | None:
    """Why ``flag`` is refused when only other benchmarks have it on ``commands`` (``--mode
    is a detailverify option; this run's benchmark is gavel``); None when it is not theirs."""
    if any(o.flag == flag for c in commands for o in bench.options_for(c)):
        return None
    others = option_owners(flag, commands)
    if not others:
        return None
    return f"{flag} is a {' and '.join(others)} option; this run's benchmark is {bench.name}"
