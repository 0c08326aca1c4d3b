"""``gavel parse``: one model reply read as gavel reads it, the boxes printed in pixels.

The reading is :func:`gavel.api.replies.parse_reply`'s; this module turns the flags into its
arguments and prints the result as text or JSON.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from typing import TypeVar

import click

from gavel.api.models import preset_names
from gavel.api.replies import IMAGE_SIDE, ReplyBoxes, convention_names, parse_reply, split_labels
from gavel.cli.options import bound_type

FC = TypeVar("FC", bound=Callable[..., object])

#: The most characters read from standard input (``-``): the reader looks at no more anyway.
MAX_STDIN = 400_000


def _pair(text: str | None, flag: str) -> tuple[int, int] | None:
    if text is None:
        return None
    width, sep, height = text.lower().partition("x")
    if not sep or not width.strip().isdigit() or not height.strip().isdigit():
        raise click.BadParameter(f"{text!r} is not WIDTHxHEIGHT (e.g. 1092x819)", param_hint=flag)
    sides = int(width), int(height)
    if not all(IMAGE_SIDE.min <= side <= IMAGE_SIDE.max for side in sides):  # type: ignore[operator]
        raise click.BadParameter(f"each side must be from 1 to {IMAGE_SIDE.max:,}", param_hint=flag)
    return sides


def _side(name: str) -> Callable[[FC], FC]:
    """``--width`` or ``--height`` of the original image."""
    return click.option(f"--{name}", type=bound_type(IMAGE_SIDE), default=1000,
                        show_default=True, help=f"{name.capitalize()} of the original image, "
                        "in pixels.")  # fmt: skip


def render_text(reading: ReplyBoxes) -> str:
    named = f"preset {reading.preset} ({reading.convention})" if reading.preset else (
        f"convention {reading.convention}")  # fmt: skip
    count = len(reading.boxes)
    lines = [
        f"{named}, image {reading.width} x {reading.height}",
        f"{reading.status} ({reading.syntax or 'no box syntax'}): "
        f"{count} box{'es' if count != 1 else ''} in pixels (x1, y1, x2, y2)",
    ]
    lines += ["  [" + ", ".join(f"{v:g}" for v in box) + "]" for box in reading.boxes]
    if reading.fixes:
        lines.append(
            "fixed or set aside: " + ", ".join(f"{k} {v}" for k, v in reading.fixes.items())
        )
    if reading.unit_interval:
        lines.append(f"warning: every number lies in [0, 1]; were they written in 0-1 rather "
                     f"than {reading.convention}?")  # fmt: skip
    return "\n".join(lines) + "\n"


@click.command("parse")
@click.argument("reply")
@click.option(
    "--preset",
    type=click.Choice(preset_names()),
    help="The model family whose convention the reply is read under.",
)
@click.option(
    "--convention",
    type=click.Choice(convention_names()),
    help="A box convention to read the reply under, instead of a preset's.",
)
@_side("width")
@_side("height")
@click.option(
    "--sent-size",
    metavar="WxH",
    help="Size of the image as sent to the model (the pixel convention scales back).",
)
@click.option(
    "--input-size",
    metavar="WxH",
    help="Size of the model's resized input (resized-pixel, kosmos-2.5) [default: "
    "the family's resize rule].",
)
@click.option(
    "--labels",
    metavar="'A ; B'",
    help="Keep only boxes labelled one of these, separated by ';' (PaliGemma's "
    "label filter: the classes of its 'detect A ; B' prompt).",
)
@click.option("--format", "style", type=click.Choice(["text", "json"]), default="text",
              show_default=True)  # fmt: skip
def parse(reply: str, preset: str | None, convention: str | None, width: int, height: int,
          sent_size: str | None, input_size: str | None, labels: str | None,
          style: str) -> None:  # fmt: skip
    """Read one model reply as gavel reads it and print the boxes in pixels.

    REPLY is the reply's text ('-' reads it from standard input). Give --preset (a model
    family, as `gavel list presets` shows them) or --convention, and the image's --width and
    --height, to see at once how a new model's replies are read.
    """
    if (preset is None) == (convention is None):
        raise click.UsageError("give --preset or --convention (one of the two)")
    text = sys.stdin.read(MAX_STDIN) if reply == "-" else reply
    reading = parse_reply(
        text, preset=preset, convention=convention, width=width, height=height,
        sent_size=_pair(sent_size, "--sent-size"), input_size=_pair(input_size, "--input-size"),
        labels=split_labels(labels),
    )  # fmt: skip
    if style == "json":
        click.echo(json.dumps(asdict(reading), indent=2))
    else:
        click.echo(render_text(reading), nl=False)
