"""Parameter types shared by the commands.

``click.FloatRange`` compares its bounds with ``<`` and ``>``, which NaN always fails and
infinity may pass, so ``--temperature nan`` reached a server and ``--placement-timeout nan`` an
internal error. Every float option of every command takes :class:`FiniteFloat` instead.
"""

from __future__ import annotations

import math
import re

import click

from gavel.setting_checks import MAX_BOOTSTRAP, MAX_CONCURRENCY, MAX_FPS, MAX_SEED, MIN_FPS, Bound


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


def bound_type(bound: Bound) -> click.IntRange | FiniteFloat:
    """The click type of a setting with ``bound`` (:mod:`gavel.setting_checks`), so the flag
    and the Python API refuse the same values in the same words."""
    if bound.kind is int:  # an int setting's bounds are whole numbers
        low, high = (None if b is None else int(b) for b in (bound.min, bound.max))
        return click.IntRange(low, high, min_open=bound.min_open, max_open=bound.max_open)
    return FiniteFloat(bound.min, bound.max, min_open=bound.min_open, max_open=bound.max_open)


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
