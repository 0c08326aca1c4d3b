"""What one ``gavel synth`` is asked to write, as one checked record, and the writing itself.

:class:`SynthSettings` has one field per flag of ``gavel synth``, with the flag's default; its
numbers are checked against :data:`BOUNDS`, which the flags' click types are made from too, so
``--n 0`` and ``SynthSettings(n=0)`` are refused alike, in the same words.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gavel.setting_checks import MAX_SEED, Bound, check_choice, check_option

#: The number settings' types and ranges (``gavel synth``'s click types are made from them).
BOUNDS = {"n": Bound(int, 1), "seed": Bound(int, 0, MAX_SEED)}


def difficulties() -> list[str]:
    """The difficulty levels, easiest first (``gavel synth --difficulty``)."""
    from gavel.synth.difficulty import DIFFICULTIES

    return list(DIFFICULTIES)


@dataclass(frozen=True)
class SynthSettings:
    """The settings of one synthetic data set; see ``gavel synth --help`` for each flag.

    Built, they are checked: the benchmark among those installed, a number within its range,
    the difficulty among :func:`difficulties`, the benchmark's own synth options as their
    flags check them; a refusal is a :class:`~gavel.errors.ConfigError` naming the flag.
    """

    #: The folder the data set is written into.
    out: str | Path
    #: The benchmark whose layout is written (``gavel list benchmarks``).
    benchmark: str = "gavel"
    #: Samples (VideoHallucer: pairs, spread over its categories).
    n: int = 100
    #: The seed: the same settings always give byte-identical files.
    seed: int = 0
    #: How hard the scenes are (:func:`difficulties`).
    difficulty: str = "medium"
    #: The benchmark's own synth options by their names (GAVEL's ``clean_share`` and
    #: ``categories``); absent ones take their defaults.
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from gavel.benchmarks.registry import benchmark_names, get_benchmark
        from gavel.errors import ConfigError

        check_choice("--benchmark", self.benchmark, benchmark_names())
        own = {o.name: o for o in get_benchmark(self.benchmark).options_for("synth")}
        unknown = [name for name in self.options if name not in own]
        if unknown:
            known = ", ".join(sorted(own)) or "none"
            raise ConfigError(f"{unknown[0]!r} is not a synth option of the {self.benchmark} "
                              f"benchmark (its synth options: {known})")  # fmt: skip
        checked = {name: None if value is None else check_option(own[name], value)
                   for name, value in self.options.items()}  # fmt: skip
        object.__setattr__(self, "options", checked)
        for name, bound in BOUNDS.items():
            object.__setattr__(self, name, bound.check(f"--{name}", getattr(self, name)))
        object.__setattr__(self, "out", Path(self.out))
        check_choice("--difficulty", self.difficulty, difficulties())


def synthesize(settings: SynthSettings, progress: Callable[[], None] | None = None) -> Path:
    """Write the data set ``settings`` describe; returns what ``data=`` takes (the data file;
    VideoHallucer: the folder). ``progress`` is called once per sample written."""
    from gavel.benchmarks.registry import get_benchmark
    from gavel.benchmarks.spec import RunSettings

    spec = get_benchmark(settings.benchmark)
    run = RunSettings(dict(settings.options), seed=settings.seed)
    return spec.synth(Path(settings.out), settings.n, settings.seed, settings.difficulty, run,
                      progress)  # fmt: skip
