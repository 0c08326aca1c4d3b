"""Parameter types shared by the commands.

``click.FloatRange`` compares its bounds with ``<`` and ``>``, which NaN always fails and
infinity may pass, so ``--temperature nan`` reached a server and ``--placement-timeout nan`` an
internal error. Every float option of every command takes :class:`FiniteFloat` instead.
"""

from __future__ import annotations

import json
import math
from typing import Any

import click

from gavel.errors import ConfigError


class FiniteFloat(click.FloatRange):
    """A float within optional bounds (as ``click.FloatRange``) that is also finite."""

    name = "finite float"

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number

    def _describe_range(self) -> str:
        # click's own text reads "x<=None" when neither bound is set; say nothing then.
        if self.min is None and self.max is None:
            return ""
        return super()._describe_range()


def json_object(text: str | None, flag: str) -> dict[str, Any]:
    """The JSON object a flag such as ``--extra-body`` gives ({} when not given)."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(f"{flag} is not JSON: {error}") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{flag} must be a JSON object")
    return value
