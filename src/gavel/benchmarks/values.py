"""A benchmark's option values for one command, picked out of a command's parameter values."""

from __future__ import annotations

from typing import Any

from gavel.benchmarks.spec import Benchmark


def benchmark_values(bench: Benchmark, command: str, given: dict[str, Any]) -> dict[str, Any]:
    """From a callback's keyword arguments, the values of ``bench``'s options for ``command``
    (popped from ``given``, which then holds the command's other arguments only)."""
    names = {o.name for o in bench.options}
    values = {name: given.pop(name) for name in list(given) if name in names}
    wanted = {o.name for o in bench.options_for(command)}
    return {name: value for name, value in values.items() if name in wanted}
