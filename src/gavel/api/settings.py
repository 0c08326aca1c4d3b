"""Keyword settings of the Python API, checked by the command line's own flag declarations.

``gavel.generate(..., max_tokens=0)`` must be refused exactly as ``gavel generate
--max-tokens 0`` is, and take the same default when not given. So the settings are not
declared a second time: each is the flag of the matching command (``--max-tokens`` is
``max_tokens``, ``--sample-id`` is ``sample_id``), converted and checked by that flag's own
click type, and a refusal is a :class:`~gavel.errors.ConfigError` carrying click's message
(what the command line prints after ``Error:``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from gavel.errors import ConfigError
from gavel.execution.settings import FROM_PYTHON


def setting_name(param: click.Parameter) -> str:
    """The keyword a flag is given as: its long name without dashes (``--base-url``:
    ``base_url``), so the names are the ones ``--help`` shows, not click's internal ones."""
    longest = max((o for o in param.opts if o.startswith("--")), key=len, default=None)
    if longest is None:
        return str(param.name)
    return longest[2:].replace("-", "_")


def command_context(
    command: click.Command, benchmark: str, parent: click.Context | None = None
) -> click.Context:
    """A context of ``command`` with ``benchmark`` chosen, as the command line makes one
    (the chosen benchmark decides which of its own options the command takes). A context
    with a ``parent`` shares its records (``gavel run``'s generate and score steps)."""
    from gavel.benchmarks.registry import benchmark_names
    from gavel.cli.benchmark_flags import _CHOSEN

    if benchmark not in benchmark_names():  # in the words of --benchmark's refusal
        known = ", ".join(map(repr, benchmark_names()))
        raise ConfigError(f"Invalid value for '--benchmark': {benchmark!r} is not one of {known}.")
    ctx = click.Context(command, info_name=command.name, parent=parent)
    ctx.meta[_CHOSEN] = benchmark
    return ctx


def record_settings(ctx: click.Context, values: Mapping[str, Any], given: set[str]) -> None:
    """Record every setting's value and source for the manifest, as the command line records
    its flags' (``settings.configuration``): ``python`` for one given, else ``default``.
    The outermost command's record is kept (``gavel.run``'s steps reuse it)."""
    from gavel.cli.config_file import _RESOLVED, _plain, flag_names
    from gavel.manifest import redact_userinfo

    if _RESOLVED in ctx.meta:
        return
    resolved = {}
    for param in ctx.command.get_params(ctx):
        if isinstance(param, click.Option) and param.name in values:
            name = (flag_names(param) or [str(param.name)])[0]
            source = FROM_PYTHON if setting_name(param) in given else "default"
            resolved[name] = {"value": _plain(values[param.name]), "from": source}
    ctx.meta[_RESOLVED] = redact_userinfo(resolved)  # no password of a URL is recorded


def _as_given(param: click.Parameter, value: Any) -> Any:
    """A Python value in the shape the flag's type expects: one text for a repeatable flag
    becomes a one-item list, a dict for a JSON flag becomes its JSON text."""
    if param.multiple and isinstance(value, str | Path):
        return (value,)
    if isinstance(value, Mapping):
        return json.dumps(value)
    return value


def command_values(
    ctx: click.Context,
    given: Mapping[str, Any],
    *,
    skip: Sequence[str] = (),
) -> dict[str, Any]:
    """Every parameter value of ``ctx``'s command, by click's names: ``given`` (by setting
    name) where given, else the flag's default; checked as the command line checks them.

    ``skip``: parameter names the caller handles itself (never taken from ``given``).
    A setting the command does not take is refused naming it, or naming the benchmark it
    belongs to (``mode`` is DetailVerifyBench's).
    """
    from gavel.benchmarks.registry import get_benchmark
    from gavel.cli.benchmark_flags import _CHOSEN, refuse_foreign_flags

    command = ctx.command
    params = [p for p in command.get_params(ctx) if p.expose_value and p.name not in skip]
    by_setting = {setting_name(p): p for p in params}
    unknown = [name for name in given if name not in by_setting]
    if unknown:
        commands = getattr(command, "benchmark_commands", ())
        bench = get_benchmark(ctx.meta[_CHOSEN])
        flags = [f"--{name.replace('_', '-')}" for name in unknown]
        try:
            refuse_foreign_flags(flags, bench, commands)
        except click.UsageError as error:
            raise ConfigError(error.format_message()) from None
        known = ", ".join(sorted(by_setting))
        raise ConfigError(
            f"{unknown[0]!r} is not a setting of gavel {command.name} (its settings: {known})"
        )
    values: dict[str, Any] = {}
    try:
        for name, param in by_setting.items():
            raw = _as_given(param, given[name]) if name in given else param.get_default(ctx)
            values[str(param.name)] = param.process_value(ctx, raw)
    except click.ClickException as error:
        raise ConfigError(error.format_message()) from None
    record_settings(ctx, values, set(given))
    return values
