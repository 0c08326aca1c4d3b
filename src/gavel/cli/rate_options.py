"""The rate-limit flags: ``--rpm`` / ``--tpm`` for the model, ``--judge-rpm`` / ``--judge-tpm``
for the judge. Declared once here, applied with one line per command."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from gavel.api.generation import bound
from gavel.cli.options import bound_type


def rate_limit_options(judge: bool = False) -> Callable[[Any], Any]:
    """Add ``--rpm`` and ``--tpm`` to a command (``--judge-rpm``, ``--judge-tpm`` with
    ``judge``); their values arrive as ``rpm``/``tpm`` (``judge_rpm``/``judge_tpm``)."""
    prefix = "judge-" if judge else ""
    whose = "the judge's endpoint" if judge else "each --base-url"
    flags = [
        click.option(
            f"--{prefix}rpm",
            type=bound_type(bound("rpm")),
            default=None,
            help=f"Requests per minute {whose} allows: requests wait their turn instead of "
            "being refused [default: none; 429s are adapted to].",
        ),
        click.option(
            f"--{prefix}tpm",
            type=bound_type(bound("tpm")),
            default=None,
            help=f"Tokens per minute {whose} allows (prompt and answer, estimated before "
            "sending and corrected by the usage the server reports).",
        ),
    ]

    def apply(command: Any) -> Any:
        for flag in reversed(flags):
            command = flag(command)
        return command

    return apply
