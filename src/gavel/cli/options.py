"""Parameter types shared by the commands.

``click.FloatRange`` compares its bounds with ``<`` and ``>``, which NaN always fails and
infinity may pass, so ``--temperature nan`` reached a server and ``--placement-timeout nan`` an
internal error. Every float option of every command takes :class:`FiniteFloat` instead.
"""

from __future__ import annotations

import json
import math
import re
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


#: The largest values a few counts may take. Beyond them a run cannot finish (a bootstrap of
#: 2**63 resamples asks numpy for an array larger than memory, 10**29 requests in flight make
#: as many tasks), so they are refused as usage errors instead of failing inside.
MAX_CONCURRENCY = 1024
MAX_BOOTSTRAP = 1_000_000
MAX_SEED = 2**63 - 1
#: Frames a second for video sampling: below one frame in 1000 s a video gives no frame, and
#: ``1 / fps`` overflows to infinity for a tiny rate such as 1e-320.
MIN_FPS, MAX_FPS = 0.001, 1000.0


def concurrency_type() -> click.IntRange:
    """Requests in flight: 1 to :data:`MAX_CONCURRENCY`."""
    return click.IntRange(1, MAX_CONCURRENCY)


def bootstrap_type(minimum: int = 0) -> click.IntRange:
    """Bootstrap resamples: ``minimum`` to :data:`MAX_BOOTSTRAP`."""
    return click.IntRange(minimum, MAX_BOOTSTRAP)


def seed_type() -> click.IntRange:
    """A seed: numpy's generators take non-negative whole numbers only (-1 failed inside)."""
    return click.IntRange(0, MAX_SEED)


def fps_type() -> FiniteFloat:
    """Frames a second: :data:`MIN_FPS` to :data:`MAX_FPS`."""
    return FiniteFloat(MIN_FPS, MAX_FPS)


#: A split name as the Hub's ``datasets`` library accepts it (``test``, ``real_test``,
#: ``train.v2``): it becomes part of a file name and of the dataset card's YAML, so an empty
#: name, a newline or a slash is refused rather than written.
_SPLIT_NAME = re.compile(r"\w+(\.\w+)*", re.ASCII)


def split_name(value: str) -> str:
    """``value`` when it is a valid split name; a usage error otherwise."""
    if not _SPLIT_NAME.fullmatch(value):
        raise click.BadParameter(
            f"{value!r} is not a split name (letters, digits and _, dots between them)"
        )
    return value


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
