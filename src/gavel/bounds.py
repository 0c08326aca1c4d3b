"""The bounds of gavel's numeric settings, declared once for the command line and the library.

A flag's click type (:mod:`gavel.cli.options`) and the Python API's check of the same setting
(:mod:`gavel.execution.settings`) both read a :class:`Bound`, so ``--max-tokens 0`` and
``gavel.generate(..., max_tokens=0)`` are refused alike, in the same words: :meth:`Bound.check`
words its refusals as click words its range types' ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: The largest values a few counts may take. Beyond them a run cannot finish (a bootstrap of
#: 2**63 resamples asks numpy for an array larger than memory, 10**29 requests in flight make
#: as many tasks), so they are refused as usage errors instead of failing inside.
MAX_CONCURRENCY = 1024
MAX_BOOTSTRAP = 1_000_000
MAX_SEED = 2**63 - 1
#: Frames a second for video sampling: below one frame in 1000 s a video gives no frame, and
#: ``1 / fps`` overflows to infinity for a tiny rate such as 1e-320.
MIN_FPS, MAX_FPS = 0.001, 1000.0


class OutOfBounds(ValueError):
    """A value a :class:`Bound` refuses; the text is the reason (no setting named)."""


@dataclass(frozen=True)
class Bound:
    """Whole numbers (``kind=int``) or finite floats (``kind=float``) within optional bounds;
    ``min_open``/``max_open`` leave the bound itself out (``x>0``)."""

    kind: type = int
    min: float | None = None
    max: float | None = None
    min_open: bool = False
    max_open: bool = False

    def describe(self) -> str:
        """The range as click's help shows it (``x>=1``, ``1<=x<=1024``); empty for none."""
        if self.min is None and self.max is None:
            return ""
        if self.min is None:
            return f"x{'<' if self.max_open else '<='}{self.max}"
        if self.max is None:
            return f"x{'>' if self.min_open else '>='}{self.min}"
        low, high = ("<" if self.min_open else "<="), ("<" if self.max_open else "<=")
        return f"{self.min}{low}x{high}{self.max}"

    def check(self, value: object) -> int | float:
        """``value`` as a number of this kind, or :class:`OutOfBounds` saying why not."""
        try:
            number = self.kind(value)
        except (TypeError, ValueError):
            # The names of the click types built from bounds: IntRange, FiniteFloat.
            name = "integer range" if self.kind is int else "finite float"
            raise OutOfBounds(f"{value!r} is not a valid {name}.") from None
        low = self.min is not None and (number <= self.min if self.min_open else number < self.min)
        high = self.max is not None and (number >= self.max if self.max_open else number > self.max)
        if low or high:
            raise OutOfBounds(f"{number} is not in the range {self.describe()}.")
        if self.kind is float and not math.isfinite(number):
            raise OutOfBounds(f"{value!r} is not a finite number.")
        return number


#: Bounds several commands share.
CONCURRENCY = Bound(int, 1, MAX_CONCURRENCY)
SEED = Bound(int, 0, MAX_SEED)
FPS = Bound(float, MIN_FPS, MAX_FPS)
AT_LEAST_ONE = Bound(int, 1)
NON_NEGATIVE = Bound(float, 0)
POSITIVE = Bound(float, 0, min_open=True)


def bootstrap(minimum: int = 0) -> Bound:
    """Bootstrap resamples: ``minimum`` to :data:`MAX_BOOTSTRAP`."""
    return Bound(int, minimum, MAX_BOOTSTRAP)
