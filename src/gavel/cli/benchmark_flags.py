"""Command-line flags from the chosen benchmark's own options, and the selection flags.

A command made with :class:`BenchmarkCommand` looks at ``--benchmark`` before it parses the
rest, then offers that benchmark's options (:class:`gavel.benchmarks.spec.BenchmarkOption`) as
flags: ``gavel score --benchmark detailverify --help`` lists DetailVerifyBench's options only,
and ``--mode`` given to a GAVEL run is one usage error naming the benchmark it belongs to.
The values reach the callback as keyword arguments under each option's name.

A ``--config`` file (:mod:`gavel.cli.config_file`) is read here too, before the flags are
parsed: its ``benchmark`` key chooses the benchmark when ``--benchmark`` is not given, and its
other keys become the defaults the command line overrides.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from gavel.benchmarks.registry import (
    benchmark_names,
    foreign_option,
    get_benchmark,
    option_owners,
)
from gavel.benchmarks.spec import Benchmark, BenchmarkOption
from gavel.cli import config_file
from gavel.cli.options import FiniteFloat
from gavel.errors import ConfigError, UsageError

DEFAULT_BENCHMARK = "gavel"
_CHOSEN = "gavel.benchmark"


class _Parsed(click.ParamType):
    """A value read by the option's own ``parse`` (its ConfigError becomes click's usage error)."""

    name = "text"

    def __init__(self, option: BenchmarkOption) -> None:
        self.option = option

    def convert(self, value, param, ctx):
        if not isinstance(value, str):
            return value
        try:
            return self.option.parse(value)  # type: ignore[misc]
        except ConfigError as error:
            self.fail(str(error), param, ctx)


def click_option(option: BenchmarkOption) -> click.Option:
    """The click flag of one benchmark option."""
    kwargs: dict[str, Any] = {"help": option.help, "default": option.default}
    if option.kind is bool:
        kwargs.update(is_flag=True, default=bool(option.default))
    elif option.parse is not None:
        kwargs["type"] = _Parsed(option)
    elif option.choices is not None:
        kwargs["type"] = click.Choice(option.choices)
    elif option.kind is int:
        low, high = (None if b is None else int(b) for b in (option.minimum, option.maximum))
        kwargs["type"] = click.IntRange(low, high)
    elif option.kind is float:
        kwargs["type"] = FiniteFloat(option.minimum, option.maximum)
    if option.default is not None and option.kind is not bool:
        kwargs["show_default"] = option.show_default
    return click.Option([option.flag, option.name], **kwargs)


def chosen_benchmark(args: Sequence[str], default: str | None = DEFAULT_BENCHMARK) -> str | None:
    """The ``--benchmark`` value among ``args`` (the last one given), else ``default``."""
    name = default
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg == "--benchmark" and i + 1 < len(args):
            name = args[i + 1]
        elif arg.startswith("--benchmark="):
            name = arg.partition("=")[2]
    return name


def refuse_foreign_flags(args: Sequence[str], bench: Benchmark, commands: Sequence[str]) -> None:
    """A usage error for the first flag in ``args`` that belongs to another benchmark only."""
    for arg in args:
        if arg == "--":
            return
        flag = arg.partition("=")[0]
        refusal = foreign_option(flag, bench, commands) if flag.startswith("--") else None
        if refusal:
            raise click.UsageError(refusal)


class BenchmarkCommand(click.Command):
    """A command whose flags include those of the benchmark ``--benchmark`` names, for the
    commands in ``benchmark_commands`` (``gavel run``: generate and score)."""

    def __init__(self, *args, benchmark_commands: Sequence[str] = (), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.benchmark_commands = tuple(benchmark_commands)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        self._current_choices()
        takes_config = any(p.name == "config" for p in self.params)
        path = config_file.config_path(args) if takes_config else None
        values = config_file.read_config(path) if path is not None else {}
        name = chosen_benchmark(args, None)
        if name is None:  # the file chooses when the command line does not
            name = values.get("benchmark", DEFAULT_BENCHMARK)
            if not isinstance(name, str):
                raise ConfigError(f"{path}: key 'benchmark' must be text, not {name!r}")
        if name not in benchmark_names():
            raise click.BadParameter(
                f"{name!r} is not one of {', '.join(map(repr, benchmark_names()))}.",
                ctx=ctx,
                param_hint="'--benchmark'",
            )
        ctx.meta[_CHOSEN] = name
        bench = get_benchmark(name)
        refuse_foreign_flags(args, bench, self.benchmark_commands)
        if path is not None:
            config_file.apply_config(ctx, self, path, values,
                                     lambda flag: option_owners(flag, self.benchmark_commands))  # fmt: skip
        return super().parse_args(ctx, args)

    def _current_choices(self) -> None:
        """``--benchmark`` offers the benchmarks installed now: the choices its declaration
        read when the command's module was imported may predate a plugin installed since
        (a long-lived process, a test)."""
        for param in self.params:
            if param.name == "benchmark" and isinstance(param.type, click.Choice):
                param.type = click.Choice(benchmark_names())

    def invoke(self, ctx: click.Context):
        """Run the command; settings the library refuses in combination are shown as the
        command line shows a usage error (its usage line, then the message; exit 2)."""
        config_file.record_resolved(ctx, self)
        try:
            return super().invoke(ctx)
        except UsageError as error:
            raise click.UsageError(str(error), ctx) from None

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        params = super().get_params(ctx)
        bench = get_benchmark(ctx.meta.get(_CHOSEN, DEFAULT_BENCHMARK))
        seen: dict[str, BenchmarkOption] = {}
        for command in self.benchmark_commands:
            for option in bench.options_for(command):
                seen.setdefault(option.name, option)
        extra = [click_option(o) for o in seen.values()]
        names = [p.name for p in params]
        at = names.index("benchmark") + 1 if "benchmark" in names else len(params) - 1
        return params[:at] + extra + params[at:]

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_help_text(ctx, formatter)
        bench = get_benchmark(ctx.meta.get(_CHOSEN, DEFAULT_BENCHMARK))
        with formatter.indentation():
            formatter.write_paragraph()
            formatter.write_text(
                f"The flags after --benchmark are {bench.name}'s own; --benchmark NAME --help "
                "shows another benchmark's."
            )


def selection_options(command):
    """``--limit``, ``--sample-id``, ``--shuffle`` (with the command's ``--seed``)."""
    options = [
        click.option(
            "--limit",
            type=click.IntRange(min=1),
            default=None,
            help="Only the first N samples (VideoHallucer: pairs) of the data, or N at random "
            "with --shuffle. Every table then says N of how many were scored.",
        ),
        click.option(
            "--sample-id",
            "sample_ids",
            multiple=True,
            metavar="ID|@FILE",
            help="Only this sample (repeat for several; VideoHallucer: a pair id "
            "CATEGORY/INDEX), or @FILE with one id per line.",
        ),
        click.option(
            "--shuffle",
            is_flag=True,
            help="With --limit: take N samples at random (seeded by --seed), still asked and "
            "scored in file order.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command
