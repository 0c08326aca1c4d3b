"""Parameter types shared by the commands.

``click.FloatRange`` compares its bounds with ``<`` and ``>``, which NaN always fails and
infinity may pass, so ``--temperature nan`` reached a server and ``--placement-timeout nan`` an
internal error. Every float option of every command takes :class:`FiniteFloat` instead.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import click

from gavel.io.urls import DATA_INSTEAD, FOLDER_INSTEAD, url_refusal
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


class LocalPath(click.Path):
    """A ``click.Path`` that refuses a URL before anything else, in the words of the library's
    data sources (:func:`gavel.io.urls.url_refusal`), its password hidden: taken as a path,
    ``--image-root https://...`` was a folder that does not exist, sample after sample. Click
    names the flag or argument typed (``Invalid value for 'FILE'``). ``instead`` says what to
    give; the other arguments are ``click.Path``'s (values are ``Path`` unless ``path_type``
    says otherwise)."""

    def __init__(self, instead: str = FOLDER_INSTEAD, **options: Any) -> None:
        options.setdefault("path_type", Path)
        super().__init__(**options)
        self.instead = instead

    def convert(self, value, param, ctx):
        refusal = url_refusal(value, self.instead)
        if refusal is not None:
            self.fail(refusal, param, ctx)
        return super().convert(value, param, ctx)


def data_path(**options: Any) -> LocalPath:
    """What ``--data`` and the data arguments take: a local file or folder, Parquet, or
    ``hf:OWNER/NAME`` (an ``hf:`` spec is no URL: the library checks it)."""
    return LocalPath(DATA_INSTEAD, **options)


def folder_path(**options: Any) -> LocalPath:
    """What ``--image-root`` and ``--images`` take: a local folder."""
    return LocalPath(FOLDER_INSTEAD, **options)


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
