"""gavel's Python API: what the command line does, as functions a notebook or host calls.

``gavel.benchmark``, ``gavel.synthesize``, ``gavel.generate``, ``gavel.score`` and
``gavel.run`` take the command line's settings by the flags' names, with the same defaults
and checks, and give the same files; see docs/python-api.md. They are re-exported from ``gavel`` itself.
"""

from __future__ import annotations

from gavel.api.benchmarks import Benchmark, benchmark, benchmark_names
from gavel.api.generation import Generation, generate
from gavel.api.running import run
from gavel.api.scoring import Result, score
from gavel.api.synthesis import synthesize

__all__ = [
    "Benchmark",
    "Generation",
    "Result",
    "benchmark",
    "benchmark_names",
    "generate",
    "run",
    "score",
    "synthesize",
]
