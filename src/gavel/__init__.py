"""gavel: measure how well vision-language models find, explain and localize hallucinations.

The Python API (docs/python-api.md) is imported on first use, so ``import gavel`` (and the
command line's start) stays light: ``gavel.score`` loads what scoring needs, nothing else.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Each public name and the module that defines it.
_EXPORTS = {
    "__version__": "gavel.version",
    "Benchmark": "gavel.api.benchmarks",
    "benchmark": "gavel.api.benchmarks",
    "benchmark_names": "gavel.api.benchmarks",
    "Generation": "gavel.api.generation",
    "GenerateSettings": "gavel.api.generation",
    "generate": "gavel.api.generation",
    "Result": "gavel.api.scoring",
    "ScoreSettings": "gavel.api.scoring",
    "score": "gavel.api.scoring",
    "run": "gavel.api.running",
    "synthesize": "gavel.api.synthesis",
    "Prediction": "gavel.records",
    "Score": "gavel.records",
    "GavelError": "gavel.errors",
    "ConfigError": "gavel.errors",
    "DataError": "gavel.errors",
}

__all__ = [
    "Benchmark",
    "ConfigError",
    "DataError",
    "GavelError",
    "GenerateSettings",
    "Generation",
    "Prediction",
    "Result",
    "Score",
    "ScoreSettings",
    "__version__",
    "benchmark",
    "benchmark_names",
    "generate",
    "run",
    "score",
    "synthesize",
]

if TYPE_CHECKING:
    from gavel.api.benchmarks import Benchmark, benchmark, benchmark_names
    from gavel.api.generation import GenerateSettings, Generation, generate
    from gavel.api.running import run
    from gavel.api.scoring import Result, ScoreSettings, score
    from gavel.api.synthesis import synthesize
    from gavel.errors import ConfigError, DataError, GavelError
    from gavel.records import Prediction, Score
    from gavel.version import __version__


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'gavel' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
