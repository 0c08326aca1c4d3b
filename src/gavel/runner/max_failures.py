"""``--max-failures N|P%``: a user's own limit on failed samples, past which a run stops.

Without it a run whose endpoint answers goes on to the end, however many samples are refused
(each gets its error line; the failure budget of :mod:`gavel.runner.async_runner` stops only an
endpoint that keeps failing). With it, the run stops as soon as more than ``N`` samples failed,
or more than ``P`` percent of the samples this run asks (of those finished, when their number
is not known beforehand, once :data:`MIN_FINISHED` have finished). Every error line counts,
whatever its cause.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gavel.errors import ConfigError

#: Finished samples before a share is judged when the run's size is not known.
MIN_FINISHED = 20


@dataclass(frozen=True)
class MaxFailures:
    """At most ``count`` failed samples, or at most ``share`` (0-1) of them."""

    count: int | None = None
    share: float | None = None
    #: How the user wrote it (for the message).
    text: str = ""

    @classmethod
    def parse(cls, text: str) -> MaxFailures:
        """``10`` (samples) or ``5%`` (of the samples asked)."""
        value = text.strip()
        try:
            if value.endswith("%"):
                share = float(value[:-1]) / 100
                if not (math.isfinite(share) and 0 <= share <= 1):
                    raise ValueError
                return cls(share=share, text=value)
            count = int(value)
            if count < 0:
                raise ValueError
            return cls(count=count, text=value)
        except ValueError:
            raise ConfigError(
                f"--max-failures {text!r}: give a number of samples (10) or a percentage of "
                "the samples asked (5%)"
            ) from None

    def exceeded(self, failed: int, finished: int, planned: int | None) -> str | None:
        """Why the run must stop now (None: not yet)."""
        if self.count is not None and failed > self.count:
            return f"{failed} samples failed, more than --max-failures {self.text}"
        if self.share is None:
            return None
        if planned:
            if failed > self.share * planned:
                return (f"{failed} of the {planned} samples to ask failed, more than "
                        f"--max-failures {self.text}")  # fmt: skip
        elif finished >= MIN_FINISHED and failed > self.share * finished:
            return f"{failed} of {finished} samples failed, more than --max-failures {self.text}"
        return None
