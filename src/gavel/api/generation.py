"""``gavel.generate``: ask a model about every sample of a benchmark, as ``gavel generate``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from gavel.api.settings import command_context, command_values
from gavel.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Callable

    import click


@dataclass(frozen=True)
class Generation:
    """What a generation left: its predictions file (resumable), the run manifest beside it,
    and what the file now holds, counted over the whole file (a resumed run's earlier lines
    too), so the numbers do not depend on how many runs made it."""

    predictions: Path
    manifest: Path
    #: Lines in the predictions file: one per sample asked.
    samples: int
    #: Lines with a model's answer.
    answered: int
    #: Lines recording a failed request (scored as ``model_error``; a rerun asks them again).
    errors: int


def count_predictions(predictions: Path) -> tuple[int, int]:
    """``(lines, error lines)`` of a predictions file."""
    from gavel.io.predictions import PredictionReader

    lines = errors = 0
    for prediction in PredictionReader(predictions):
        lines += 1
        errors += prediction.error is not None
    return lines, errors


def invoke(ctx: click.Context, values: dict[str, Any]) -> None:
    """Run the body of ``ctx``'s command on checked ``values`` (click's parameter names).

    The body is the command line's own, run in a context of its command; no ``--config``
    file is read, and the manifest's configuration is the one :func:`command_values`
    recorded (settings ``from`` python). A usage error inside the body becomes a
    ConfigError with the same words.
    """
    import click

    try:
        with ctx:
            # click types a command's body optional; every gavel command has one.
            ctx.invoke(cast("Callable[..., Any]", ctx.command.callback), **values)
    except click.exceptions.Exit as stop:  # a run that ends early on purpose (nothing sent)
        if stop.exit_code:
            raise ConfigError(f"gavel {ctx.command.name} stopped (exit {stop.exit_code})") from None
    except click.ClickException as error:
        raise ConfigError(error.format_message()) from None


def generate(benchmark: str, *, data: str | Path, model: str, out: str | Path,
             **settings: Any) -> Generation:  # fmt: skip
    """Ask ``model`` about every sample of ``data`` and write the answers to ``out``, exactly
    as ``gavel generate --benchmark BENCHMARK --data DATA --model MODEL --out OUT`` does.

    ``settings`` are that command's flags by name (``max_tokens=256``, ``sample_id=[...]``,
    ``no_cache=True``), with the same defaults and checks; ``gavel generate --help`` lists
    them. An existing ``out`` is resumed. Progress and notes go to stderr as on the command
    line. Raises :class:`~gavel.errors.GavelError` with the command line's message when a
    setting is refused or samples failed (their error lines are in ``out``; calling again asks
    them again).
    """
    from gavel.cli.generate import generate as command
    from gavel.manifest import run_manifest_path

    ctx = command_context(command, benchmark)
    given = {"benchmark": benchmark, "data": data, "model": model, "out": out, **settings}
    invoke(ctx, command_values(ctx, given))
    path = Path(out)
    if settings.get("dry_run") or not path.is_file():  # a dry run, or requests only
        return Generation(path, run_manifest_path(path), 0, 0, 0)
    lines, errors = count_predictions(path)
    return Generation(path, run_manifest_path(path), lines, lines - errors, errors)
