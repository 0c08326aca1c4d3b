"""The first requests of a run: the only ones that may stop it for a refusal.

A wrong model name, API key or base URL shows in the very first replies: every request is
refused alike (the same status, the same words) and none is answered. Later in a run the same
refusal is one sample's outcome (a content filter, an image too large, a prompt over the
context), and the run goes on. So the rule lives only while the run has no answer:

- until the first answer (or the first reply that differs), the requests in flight and those
  already refused alike are at most ``limit``, so that when the first ``limit`` replies are the
  same refusal, those are all the requests sent: the run stops without sending more, and says
  how many went out;
- an answer, a refused reply that arrived (a judge's reply without a score), or a refusal in
  other words ends the rule for the rest of the run and lets every worker send;
- transport failures, rate limits and outages (502, 503, 504, "loading") say nothing either way.

Requests of samples that already failed in an earlier run do not count: a rerun asks them
first, and their refusal is already known to be theirs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


class FirstRequests:
    """Counts the first replies of a run while none is an answer (see the module's text)."""

    def __init__(self, limit: int, armed: bool = True):
        self.limit = max(limit, 1)
        #: Whether the rule still applies (no answer yet, every counted reply alike).
        self.armed = armed
        #: Requests sent so far this run (every attempt, retries included).
        self.sent = 0
        #: The refusal the first replies got (status, words), and how many got it.
        self.key: tuple[int | None, str | None] | None = None
        self.count = 0
        #: Set once the run is to stop: no waiting worker sends anything after it.
        self.stopping = False
        self.in_flight = 0
        self._changed = asyncio.Event()

    async def send(self, call: Callable[[], Awaitable[T]], stopped: Callable[[], None]) -> T:
        """Run ``call`` (one request), waiting while the rule applies and the requests in
        flight and those refused alike already make ``limit``; ``stopped`` raises when the run
        was told to stop while this one waited."""
        while self.armed and not self.stopping and self.in_flight + self.count >= self.limit:
            await self._changed.wait()
        if self.stopping:
            stopped()
        self.in_flight += 1
        self.sent += 1
        try:
            return await call()
        finally:
            self.in_flight -= 1
            self._wake()

    def stop(self) -> None:
        """The run stops: the workers waiting to send give up."""
        self.stopping = True
        self._wake()

    def disarm(self) -> None:
        """The run has an answer (or replies that differ): no refusal stops it any more."""
        if self.armed:
            self.armed = False
            self._wake()

    def _wake(self) -> None:
        """Let the waiting workers look again (a fresh event for the next wait)."""
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

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
