"""What a benchmark is to the rest of gavel: one record of functions and the options it declares.

Each benchmark package (``gavel.benchmarks.gavel``, ``…detailverify``, ``…videohallucer``)
exposes one :class:`Benchmark` from its ``__init__``. Its options are plain
:class:`BenchmarkOption` records (name, type or choices, default, help, the commands that take
it), not command-line objects: the command line turns the chosen benchmark's options into flags
(``gavel.cli.benchmark_flags``), and anything else (a Python caller, a plugin host) passes values
by name in :class:`RunSettings`.

This module stays light (no numpy, no click): ``gavel score --help`` imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gavel.benchmarks.layout import Layout
from gavel.errors import ConfigError
from gavel.prompts import PromptTexts, Template
from gavel.records import Result, Score
from gavel.requests import Model, Request
from gavel.selection import ALL, Selection
from gavel.tables import Table

if TYPE_CHECKING:
    from gavel.parsing.echo import EchoFilter

#: The commands a benchmark option may belong to.
COMMANDS = ("generate", "score", "synth")


@dataclass(frozen=True)
class BenchmarkOption:
    """One knob of one benchmark.

    ``kind`` is ``str``, ``int``, ``float`` or ``bool`` (an on/off flag, off by default);
    ``choices`` limits a ``str``; ``minimum``/``maximum`` bound a number; ``parse`` turns the
    text given into the value (raising ConfigError with the reason) when a plain type is not
    enough.
    """

    name: str
    flag: str
    help: str
    commands: tuple[str, ...]
    default: Any = None
    kind: type = str
    choices: tuple[str, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    parse: Callable[[str], Any] | None = None
    show_default: bool = True

    @property
    def setting(self) -> str:
        """The keyword it is given as outside the command line: its flag without dashes
        (DetailVerifyBench's ``--mode`` is ``mode``, whatever its inner name)."""
        return self.flag[2:].replace("-", "_")

    def __post_init__(self) -> None:
        unknown = set(self.commands) - set(COMMANDS)
        if unknown or not self.flag.startswith("--"):
            raise ValueError(f"bad benchmark option {self.name}: {self.flag} {self.commands}")


@dataclass(frozen=True)
class RunSettings:
    """What a command hands a benchmark besides its files: the benchmark's own option values
    by name (absent ones take their defaults) and what every benchmark shares."""

    values: Mapping[str, Any] = field(default_factory=dict)
    #: Where the images (VideoHallucer: the category folders) are [default: beside the data].
    image_root: Path | None = None
    #: Bootstrap resamples and the seed of the bootstrap (and of a shuffled selection).
    resamples: int = 1000
    seed: int = 0
    #: Which samples are asked and scored.
    selection: Selection = ALL
    #: Every prompt sent, whose copied text the readers set aside
    #: (:func:`gavel.benchmarks.registry.echo_filter`, which the callers that score pass);
    #: None: the shipped templates', the judge's and the benchmark's own.
    echo: EchoFilter | None = None


@dataclass(frozen=True)
class Prepared:
    """What ``gavel generate`` needs: the requests, their number, and provenance."""

    requests: Iterator[Request]
    total: int
    data_sha256: str
    template: Template
    settings: dict[str, Any] = field(default_factory=dict)
    #: What the selection chose (:meth:`gavel.selection.Selection.describe`); None for all.
    selection: dict[str, Any] | None = None


@dataclass(frozen=True)
class Benchmark:
    """A benchmark as the command line and other hosts see it.

    ``evaluate(data, predictions, run)``: scores and the Result, never needing the model.
    ``prepare(data, model, run)``: the requests ``gavel generate`` sends.
    ``table(runs)``: the benchmark's table of ``(name, Result)`` rows.
    ``synth(out, n, seed, difficulty, run, progress)``: a synthetic data set; returns its path.
    ``sample_unit``: what one sample is (what ``--limit`` counts and ``--sample-id`` names).
    ``prompts()``: every prompt ``prepare`` may send; answers that copy them are read without
    the copied text (:func:`gavel.benchmarks.registry.echo_filter`).
    ``layout``: how the rows of a Hub or Parquet dataset become the files ``prepare`` and
    ``evaluate`` read (:class:`~gavel.benchmarks.layout.Layout`); None: local files only.
    """

    name: str
    summary: str
    data_help: str
    evaluate: Callable[[Path, Path, RunSettings], tuple[Result, Sequence[Score]]]
    prepare: Callable[[Path, Model, RunSettings], Prepared]
    table: Callable[[Sequence[tuple[str, Result]]], Table]
    synth: Callable[[Path, int, int, str, RunSettings, Callable[[], None] | None], Path]
    options: tuple[BenchmarkOption, ...] = ()
    sample_unit: str = "sample"
    #: Whether samples are videos (``gavel generate`` then takes the frame sampling flags).
    videos: bool = False
    #: The prompts this benchmark sends (None: none beyond gavel's template files).
    prompts: Callable[[], PromptTexts] | None = None
    #: How a Hub or Parquet dataset's rows become its files (None: it reads local files only).
    layout: Layout | None = None

    def options_for(self, command: str) -> tuple[BenchmarkOption, ...]:
        return tuple(o for o in self.options if command in o.commands)

    def declares(self, name: str) -> bool:
        return any(o.name == name for o in self.options)

    def values(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Every option's value: ``given`` where given, else its default. A name this
        benchmark does not declare is an error naming it."""
        names = {o.name for o in self.options}
        unknown = [name for name in given if name not in names]
        if unknown:
            known = ", ".join(sorted(names)) or "none"
            raise ConfigError(
                f"{unknown[0]!r} is not an option of the {self.name} benchmark (its options: "
                f"{known})"
            )
        return {o.name: given.get(o.name, o.default) for o in self.options}
