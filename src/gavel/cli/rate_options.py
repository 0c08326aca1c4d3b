"""The rate-limit flags: ``--rpm`` / ``--tpm`` for the model, ``--judge-rpm`` / ``--judge-tpm``
for the judge. Declared once here, applied with one line per command."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from gavel.cli.options import FiniteFloat

#: The kinds of model that are sent requests over HTTP, and so have rate limits.
LIMITED_KINDS = ("openai",)


def rate_limit_options(judge: bool = False) -> Callable[[Any], Any]:
    """Add ``--rpm`` and ``--tpm`` to a command (``--judge-rpm``, ``--judge-tpm`` with
    ``judge``); their values arrive as ``rpm``/``tpm`` (``judge_rpm``/``judge_tpm``)."""
    prefix = "judge-" if judge else ""
    whose = "the judge's endpoint" if judge else "each --base-url"
    flags = [
        click.option(
            f"--{prefix}rpm",
            type=FiniteFloat(min=0, min_open=True),
            default=None,
            help=f"Requests per minute {whose} allows: requests wait their turn instead of "
            "being refused [default: none; 429s are adapted to].",
        ),
        click.option(
            f"--{prefix}tpm",
            type=FiniteFloat(min=0, min_open=True),
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


def model_rate_options(spec: str, rpm: float | None, tpm: float | None,
                       executor: str = "local") -> dict[str, float]:  # fmt: skip
    """The adapter options for ``--rpm`` / ``--tpm`` (only those given); a usage error naming
    the flag for a model that is not sent requests over HTTP, or for Ray, whose every replica
    would keep a budget of its own."""
    given = {name: value for name, value in (("rpm", rpm), ("tpm", tpm)) if value is not None}
    flags = " and ".join(f"--{name}" for name in given)
    kind = spec.partition(":")[0]
    if given and kind not in LIMITED_KINDS:
        names = " and ".join(f"{k}:" for k in LIMITED_KINDS)
        raise click.UsageError(f"{flags} applies to {names} models only (served over HTTP)")
    if given and executor != "local":
        raise click.UsageError(
            f"{flags}: only with the local executor (each Ray replica would keep the whole "
            "budget for itself)"
        )
    return given
