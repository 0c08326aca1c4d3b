"""The first requests of a run: the only ones that may stop it for a refusal.

A wrong model name, API key or base URL shows in the very first replies: every request is
refused alike (the same status, the same words) and none is answered. Later in a run the same
refusal is one sample's outcome (a content filter, an image too large, a prompt over the
context), and the run goes on. So the rule lives only while the run has no answer:

- the first few replies (the model's ``refusals_to_stop``), all the same refusal, stop the run; from the moment that is decided no
  request is sent (a retry waiting for its turn gives up), and the message says how many were;
- an answer, a refused reply that arrived (a judge's reply without a score), or a refusal in
  other words ends the rule for the rest of the run;
- transport failures, rate limits and outages (502, 503, 504, "loading") say nothing either way.

Requests of samples that already failed in an earlier run do not count: a rerun asks them
first, and their refusal is already known to be theirs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


class FirstRequests:
    """Counts the first replies of a run while none is an answer (see the module's text)."""

    def __init__(self, armed: bool = True):
        #: Whether the rule still applies (no answer yet, every counted reply alike).
        self.armed = armed
        #: Requests sent so far this run (every attempt, retries included).
        self.sent = 0
        #: The refusal the first replies got (status, words), and how many got it.
        self.key: tuple[int | None, str | None] | None = None
        self.count = 0
        #: Set once the run is to stop: nothing is sent after it.
        self.stopping = False

    async def send(self, call: Callable[[], Awaitable[T]], stopped: Callable[[], None]) -> T:
        """Run ``call`` (one request), counted as sent; ``stopped`` raises instead when the
        run was told to stop (a retry that waited past the decision)."""
        if self.stopping:
            stopped()
        self.sent += 1
        return await call()

    def stop(self) -> None:
        """The run stops: nothing more is sent."""
        self.stopping = True

    def disarm(self) -> None:
        """The run has an answer (or replies that differ): no refusal stops it any more."""
        self.armed = False

    def refused(self, status: int | None, words: str | None) -> int:
        """Count one reply refused alike for all; how many of the first replies got it (0 when
        it differs from the earlier ones, which ends the rule)."""
        if not self.armed:
            return 0
        key = (status, words)
        if self.key is not None and key != self.key:
            self.disarm()
            return 0
        self.key = key
        self.count += 1
        return self.count
