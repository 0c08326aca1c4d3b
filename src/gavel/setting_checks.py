"""The bounds of the settings the command line and the Python API share, in one place.

The command line's click types (:mod:`gavel.cli.options`) are built from these bounds, and the
Python API's settings records check their values against the same ones, so ``--bootstrap -1``
and ``gavel.score(..., bootstrap=-1)`` are refused alike, in the same words.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gavel.errors import ConfigError, GavelError

if TYPE_CHECKING:
    from gavel.benchmarks.spec import BenchmarkOption

#: The largest values a few counts may take. Beyond them a run cannot finish (a bootstrap of
#: 2**63 resamples asks numpy for an array larger than memory, 10**29 requests in flight make
#: as many tasks), so they are refused as usage errors instead of failing inside.
MAX_CONCURRENCY = 1024
MAX_BOOTSTRAP = 1_000_000
MAX_SEED = 2**63 - 1
#: Frames a second for video sampling: below one frame in 1000 s a video gives no frame, and
#: ``1 / fps`` overflows to infinity for a tiny rate such as 1e-320.
MIN_FPS, MAX_FPS = 0.001, 1000.0


def json_object(text: str | None, flag: str) -> dict[str, Any]:
    """The JSON object a setting such as ``--extra-body`` gives ({} when not given)."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(f"{flag} is not JSON: {error}") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{flag} must be a JSON object")
    return value


@dataclass(frozen=True)
class Bound:
    """A number setting's type and range. The command line's click type of its flag is made
    from it (:func:`gavel.cli.options.bound_type`), and :meth:`check` refuses a Python value
    outside it in the words click uses for the flag."""

    kind: type  # int or float
    min: float | None = None
    max: float | None = None
    #: Whether ``min`` itself is refused (a timeout of 0 s is no timeout).
    min_open: bool = False
    #: Whether ``max`` itself is refused (a warm-up of the whole run leaves no training).
    max_open: bool = False

    def describe(self) -> str:
        """The range as ``--help`` shows it (``0<=x<=1000000``, ``x>=0``, ``x>0``)."""
        below = "<" if self.max_open else "<="
        if self.min is None:
            return f"x{below}{self.max}"
        if self.max is None:
            return f"x{'>' if self.min_open else '>='}{self.min}"
        return f"{self.min}{'<' if self.min_open else '<='}x{below}{self.max}"

    def check(self, flag: str, value: Any) -> int | float:
        """``value`` as this setting's type (an int given for a float becomes one); a value of
        another type, out of range or not finite is a ConfigError naming ``flag``."""
        whole = isinstance(value, int) and not isinstance(value, bool)
        if not (whole or (self.kind is float and isinstance(value, float))):
            kind = "an integer" if self.kind is int else "a number"
            given = type(value).__name__  # a number given as text is text: say so
            raise refused(flag, f"{value!r} is not {kind} (a {given} was given).")
        number = self.kind(value)
        low = self.min is not None and (number <= self.min if self.min_open else number < self.min)
        high = self.max is not None and (number >= self.max if self.max_open else number > self.max)
        if low or high:
            raise refused(flag, f"{number} is not in the range {self.describe()}.")
        if not math.isfinite(number):
            raise refused(flag, f"{value!r} is not a finite number.")
        return number


def check_choice(flag: str, value: Any, choices: Sequence[str]) -> str:
    """``value`` when it is one of ``choices``; else a ConfigError naming ``flag``."""
    if value in choices:
        return value
    listed = ", ".join(map(repr, choices))
    one_of = "" if len(choices) == 1 else "one of "
    raise refused(flag, f"{value!r} is not {one_of}{listed}.")


def refuse_given(given: Mapping[str, Any], defaults: Mapping[str, Any], instead: str) -> None:
    """A setting among ``defaults`` given another value than its default is refused: the
    Python API does not offer it yet, and ``instead`` says which command does. Its default
    given explicitly (``dry_run=False``) asks for nothing, and passes."""
    for name, default in defaults.items():
        if name in given and given[name] != default:
            raise ConfigError(f"{name!r} is not offered by the Python API yet; use {instead}")


def refused(flag: str, reason: str) -> ConfigError:
    """The refusal of a setting's value, in the words the command line uses for its flag."""
    return ConfigError(f"Invalid value for '{flag}': {reason}")


def plain(value: Any) -> Any:
    """A value as JSON holds it (paths as text, tuples as lists), as the manifest records."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    return value


def check_option(option: BenchmarkOption, value: Any) -> Any:
    """A benchmark option's value checked as its flag checks it (the same record declares
    both: its kind, choices, bounds or parser)."""
    if option.kind is bool:
        return bool(value)
    if option.parse is not None:
        if not isinstance(value, str):
            return value
        try:
            return option.parse(value)
        except ConfigError as error:
            raise refused(option.flag, str(error)) from None
    if option.choices is not None:
        return check_choice(option.flag, value, option.choices)
    if option.kind in (int, float):
        return Bound(option.kind, option.minimum, option.maximum).check(option.flag, value)
    return value


def as_path(flag: str, value: Any) -> Path:
    """A path setting's value as a Path (``click.Path(path_type=Path)`` gives one); another
    kind of value is refused naming the flag, not left to fail inside."""
    if isinstance(value, str | os.PathLike):
        return Path(value)
    raise refused(flag, f"{value!r} is not a path.")


def as_items(flag: str, value: Any) -> tuple[Any, ...]:
    """A repeatable setting's values as a tuple: None is none, one text (or path) is one
    item; anything but texts is refused naming the flag."""
    if value is None:
        return ()
    if isinstance(value, str | os.PathLike):
        return (value,)
    try:
        items = tuple(value)
    except TypeError:
        raise refused(flag, f"{value!r} is not a text or a list of texts.") from None
    for item in items:
        if not isinstance(item, str | os.PathLike):
            raise refused(flag, f"{item!r} is not a text.")
    return items


def as_text(flag: str, value: Any) -> str:
    """A text setting's value; a number or another object is refused naming the flag."""
    if isinstance(value, str):
        return value
    raise refused(flag, f"{value!r} is not a text.")


def as_json_text(flag: str, value: Any) -> str:
    """A JSON-object setting (``--extra-body``) as its text: a mapping is encoded, a text
    kept (checked where it is read); what JSON cannot hold is refused naming the flag."""
    if isinstance(value, Mapping):
        try:
            return json.dumps(value)
        except (TypeError, ValueError) as error:
            raise refused(flag, f"not a JSON object ({error}).") from None
    return as_text(flag, value)


def whole_number_env(variable: str, default: int, unit: str) -> int:
    """A limit set in the environment (``variable``, a whole number of ``unit``, ``_`` allowed
    between digits), else ``default``; anything else is refused naming the variable."""
    value = os.environ.get(variable, "").strip().replace("_", "")
    if not value:
        return default
    if not value.isdigit() or int(value) < 1:
        raise GavelError(f"{variable}={value!r}: expected a whole number of {unit}")
    return int(value)
