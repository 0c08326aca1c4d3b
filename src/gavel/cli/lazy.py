"""A command group that imports each subcommand only when it runs.

Importing every command module at start-up made each ``gavel`` call pay for the heaviest one
(scipy, matplotlib, the annotation server, ...): ``gavel --version`` took well over a second.
The group keeps, for every command, where it lives and its one-line summary, so ``gavel --help``
lists every command without importing any of them, and ``gavel NAME ...`` imports only NAME.
``tests/cli/test_main.py`` checks that each summary is the one the command itself would show.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

import click


@dataclass(frozen=True)
class LazyCommand:
    """Where a subcommand lives (``"package.module:attribute"``) and what ``--help`` says of it.

    ``summary`` is the command's own ``short_help`` when it sets one (then ``fixed``), else the
    first paragraph of its help text, which click shortens to fit the terminal as it would for
    the real command.
    """

    target: str
    summary: str
    fixed: bool = False

    def load(self) -> click.Command:
        module_name, _, attribute = self.target.partition(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.target} is not a click command")
        return command

    def stand_in(self, name: str) -> click.Command:
        """A bodiless command with the same summary, for listing without importing."""
        if self.fixed:
            return click.Command(name, short_help=self.summary)
        return click.Command(name, help=self.summary)


class LazyGroup(click.Group):
    """A :class:`click.Group` whose subcommands are imported on first use."""

    def __init__(self, *args, lazy_commands: dict[str, LazyCommand], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = dict(lazy_commands)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in self.lazy_commands:
            command = self.lazy_commands[cmd_name].load()
            self.add_command(command, cmd_name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The usual command list, with not-yet-imported commands shown by their stand-ins."""
        rows: list[tuple[str, click.Command]] = []
        for name in self.list_commands(ctx):
            command = self.commands.get(name)
            if command is None:
                command = self.lazy_commands[name].stand_in(name)
            if not command.hidden:
                rows.append((name, command))
        if not rows:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in rows)
        with formatter.section("Commands"):
            formatter.write_dl(
                [(name, command.get_short_help_str(limit)) for name, command in rows]
            )
