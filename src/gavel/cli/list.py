"""``gavel list``: the benchmarks, kinds of model and judges gavel knows, and where each is from.

What is listed (and how a plugin that fails to load is shown) is :mod:`gavel.api.listing`'s;
this module prints it as text or JSON.
"""

from __future__ import annotations

import json
from dataclasses import asdict

import click

from gavel.api.listing import KINDS, Entry, registered


def render_text(entries: list[Entry]) -> str:
    lines: list[str] = []
    for kind in dict.fromkeys(e.kind for e in entries):
        lines.append(f"{kind}s:")
        for entry in (e for e in entries if e.kind == kind):
            mark = {"ok": "", "error": "ERROR: ", "shadowed": ""}[entry.status]
            lines.append(f"  {entry.name:<16} {entry.source}")
            lines.append(f"  {'':<16} {mark}{entry.description}")
    return "\n".join(lines) + "\n"


@click.command("list")
@click.argument("kinds", nargs=-1, type=click.Choice(KINDS))
@click.option(
    "--format", "style", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def list_registered(kinds: tuple[str, ...], style: str) -> None:
    """What is registered: benchmarks, models and judges, built-in or from plugins.

    Each plugin is named with its distribution, version and entry point; one that fails to
    load is listed with its error (and the other commands still work).
    """
    entries = registered(tuple(kinds) or KINDS)
    if style == "json":
        click.echo(json.dumps([asdict(e) for e in entries], indent=2))
    else:
        click.echo(render_text(entries), nl=False)
