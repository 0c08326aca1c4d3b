"""``gavel list``: the benchmarks, kinds of model, judges, presets and box conventions gavel
knows, and where each is from.

What is listed (and how a plugin that fails to load is shown) is :mod:`gavel.api.listing`'s;
this module prints it as text or JSON.
"""

from __future__ import annotations

import json
from dataclasses import asdict

import click

from gavel.api.listing import EXAMPLE_SIZE, KINDS, Entry, registered

_WITH_EXAMPLES = ("preset", "convention")


def _heading(kind: str) -> str:
    if kind not in _WITH_EXAMPLES:
        return f"{kind}s:"
    width, height = EXAMPLE_SIZE
    return f"{kind}s (each example's boxes in pixels of a {width} x {height} image):"


def _example_lines(entry: Entry) -> list[str]:
    pad = f"  {'':<16} "
    lines = []
    if entry.convention is not None:
        lines.append(f"{pad}convention {entry.convention}; rule from {entry.rule_source}")
    if entry.example:
        shown = entry.example.replace("\n", "\\n")
        boxes = ", ".join("[" + ", ".join(f"{v:g}" for v in box) + "]"
                          for box in entry.example_boxes) or "no box"  # fmt: skip
        lines.append(f"{pad}e.g. {shown}")
        lines.append(f"{pad}  -> {boxes}")
    return lines


def render_text(entries: list[Entry]) -> str:
    lines: list[str] = []
    for kind in dict.fromkeys(e.kind for e in entries):
        lines.append(_heading(kind))
        for entry in (e for e in entries if e.kind == kind):
            mark = {"ok": "", "error": "ERROR: ", "shadowed": ""}[entry.status]
            lines.append(f"  {entry.name:<16} {entry.source}")
            lines.append(f"  {'':<16} {mark}{entry.description}")
            lines.extend(_example_lines(entry))
    return "\n".join(lines) + "\n"


@click.command("list")
@click.argument("kinds", nargs=-1, type=click.Choice(KINDS))
@click.option(
    "--format", "style", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def list_registered(kinds: tuple[str, ...], style: str) -> None:
    """What is registered: benchmarks, models and judges, built-in or from plugins, and the
    model families' presets and box conventions.

    Each plugin is named with its distribution, version and entry point; one that fails to
    load is listed with its error (and the other commands still work). Each preset and
    convention shows one example reply and the boxes gavel reads from it (`gavel parse` reads
    any other).
    """
    entries = registered(tuple(kinds) or KINDS)
    if style == "json":
        click.echo(json.dumps([asdict(e) for e in entries], indent=2))
    else:
        click.echo(render_text(entries), nl=False)
