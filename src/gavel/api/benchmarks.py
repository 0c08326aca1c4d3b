"""``gavel.benchmark``: what one benchmark is — its options, how it reads data, what it asks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gavel.benchmarks.spec import Benchmark as BenchmarkSpec
from gavel.benchmarks.spec import BenchmarkOption, Prepared


@dataclass(frozen=True)
class Benchmark:
    """One benchmark as a Python caller sees it.

    ``spec`` is the record every part of gavel uses (:class:`gavel.benchmarks.spec.Benchmark`:
    its ``evaluate``, ``prepare``, ``table``, ``synth``); the rest says it in a caller's words.
    """

    spec: BenchmarkSpec

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def summary(self) -> str:
        return self.spec.summary

    @property
    def sample_unit(self) -> str:
        """What one sample is: what ``limit`` counts and ``sample_id`` names."""
        return self.spec.sample_unit

    @property
    def options(self) -> dict[str, BenchmarkOption]:
        """The benchmark's own settings by the names the API takes them under (the flag
        without dashes: DetailVerifyBench's ``--mode`` is ``mode``), each with its flag,
        default, choices and the steps that take it (``generate``, ``score``, ``synth``)."""
        return {option.setting: option for option in self.spec.options}

    def prepare(self, data: str | Path, model: str = "scene", *, image_root: str | Path | None = None,
                **options: Any) -> Prepared:  # fmt: skip
        """Read ``data`` and build what ``gavel generate --model MODEL`` would send for it,
        sending nothing: ``.requests`` (each with its sample id, prompt text and media),
        ``.total``, ``.template`` (the prompt template and its SHA-256) and ``.data_sha256``.

        ``data`` is what ``--data`` takes (a file or folder, Parquet, ``hf:OWNER/NAME``);
        ``options`` are the benchmark's own (:attr:`options`); a name it does not declare is
        an error naming its options. ``model`` matters for what it declares (GAVEL asks for
        boxes in the model's convention).
        """
        from gavel.benchmarks.spec import RunSettings
        from gavel.models.registry import load_model
        from gavel.sources import resolve_data

        declared = self.options  # a name it does not declare: spec.values refuses it
        values = self.spec.values({declared[k].name if k in declared else k: v
                                   for k, v in options.items()})  # fmt: skip
        root = Path(image_root) if image_root is not None else None
        path, root, _ = resolve_data(self.name, data, root)
        return self.spec.prepare(path, load_model(model), RunSettings(values, root))


def benchmark(name: str) -> Benchmark:
    """The benchmark called ``name`` (``gavel``, ``detailverify``, ``videohallucer``, or a
    plugin's; ``gavel list benchmarks`` names them). An unknown name is a
    :class:`~gavel.errors.ConfigError` naming the known ones."""
    from gavel.benchmarks.registry import get_benchmark

    return Benchmark(get_benchmark(name))


def benchmark_names() -> list[str]:
    """Every benchmark installed: the built-in ones, then the plugins'."""
    from gavel.benchmarks.registry import benchmark_names as names

    return names()
