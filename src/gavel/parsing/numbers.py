"""The one pattern every reader matches a written number with."""

from __future__ import annotations

#: A decimal number as models write them (sign, fraction, exponent). One way to match each
#: number: ``\d+\.?\d*`` splits a digit run in many ways, so a long run that is not followed by
#: what the pattern expects next backtracks quadratically.
NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
