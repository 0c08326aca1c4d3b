"""The cost flags of ``gavel generate``, ``gavel score`` and ``gavel run``: ``--dry-run`` and
``--max-cost`` (docs/running.md, "Dry run and cost" and "Budgets").

:func:`cost_options` declares them all on a command with one decorator line and hands their
values to the command body through :func:`cost_flags`, so the commands' own signatures (which
other options keep growing) do not change. What the flags cost is the library's
(:mod:`gavel.execution.pricing`, :mod:`gavel.scoring.pricing`); here is only its printing.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import click

from gavel.api.generation import bound
from gavel.cli.options import bound_type

_FLAGS = "gavel.cost.flags"


@dataclass(frozen=True)
class CostFlags:
    dry_run: bool = False
    dry_run_format: str = "table"
    price: str | None = None
    tokenizer: Path | None = None
    judge_tokenizer: Path | None = None
    max_cost: float | None = None


NAMES = tuple(f.name for f in fields(CostFlags))


def _option(name: str) -> Any:
    declared = {
        "dry_run": click.option(
            "--dry-run", is_flag=True,
            help="Print the requests to send, how many the cache and the resume file answer, "
            "the tokens and the cost, and exit; nothing is sent.",
        ),
        "dry_run_format": click.option(
            "--dry-run-format", type=click.Choice(["table", "json"]), default="table",
            show_default=True, help="How --dry-run prints its report.",
        ),
        "price": click.option(
            "--price", default=None, metavar="IN,OUT",
            help="The model's prices in USD per million input and output tokens, e.g. 2.5,10 "
            "[default: a small built-in table, approximate].",
        ),
        "tokenizer": click.option(
            "--tokenizer", type=click.Path(path_type=Path), default=None,
            help="A local tokenizer folder of the model, to count --dry-run's tokens exactly "
            "[default: tiktoken's cached encoding, else an estimate].",
        ),
        "judge_tokenizer": click.option(
            "--judge-tokenizer", type=click.Path(path_type=Path), default=None,
            help="A local tokenizer folder of the LLM judge, for --dry-run.",
        ),
        "max_cost": click.option(
            "--max-cost", type=bound_type(bound("max_cost")), default=None, metavar="USD",
            help="Stop sending once the run's recorded usage costs this much (earlier runs "
            "into the same files included); everything answered is kept.",
        ),
    }  # fmt: skip
    return declared[name]


#: The flags each command takes.
COMMAND_FLAGS = {
    "generate": ("dry_run", "dry_run_format", "price", "tokenizer", "max_cost"),
    "score": ("dry_run", "dry_run_format", "judge_tokenizer", "max_cost"),
}


def cost_options(command: str):
    """Declare the cost flags of ``command`` ("generate" or "score") and pass their values to
    the body through :func:`cost_flags`."""
    names = COMMAND_FLAGS[command]

    def decorate(function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            given = {name: kwargs.pop(name) for name in NAMES if name in kwargs}
            click.get_current_context().meta[_FLAGS] = CostFlags(**given)
            return function(*args, **kwargs)

        for name in reversed(names):
            wrapper = _option(name)(wrapper)
        return wrapper

    return decorate


def cost_flags() -> CostFlags:
    """The cost flags of the command running now."""
    return click.get_current_context().meta.get(_FLAGS, CostFlags())


def pop_cost_flags(kwargs: dict[str, Any]) -> CostFlags:
    """The cost flags among a command's parameters, taken out of them (``gavel run``)."""
    return CostFlags(**{name: kwargs.pop(name) for name in NAMES if name in kwargs})


def show_dry_run(parts: list, style: str) -> None:
    """Print the report of ``parts`` (estimates) with the run's resolved configuration."""
    from gavel.api.generation import dry_run_text
    from gavel.cli.config_file import resolved

    click.echo(dry_run_text(parts, resolved(), style), nl=False)
