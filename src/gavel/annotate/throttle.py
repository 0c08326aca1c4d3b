"""Backoff for wrong tokens, per client address.

A token has 256 random bits, so guessing one is hopeless anyway; the backoff keeps a guessing
script from costing the server a database look-up per attempt and makes it visible (429) instead
of silently answered. The design has to let the right person in:

- The first ``free`` wrong tokens from an address are answered at once (401): people mistype and
  paste the wrong line.
- The ``free``-th makes the address wait ``first`` seconds, and each further wrong one twice
  as long as the last wait, up to ``cap``. While it waits, every token attempt from it
  is answered 429 with ``Retry-After``, *without being looked at*: checking it would hand a
  guesser a full-speed oracle (a "yes" among the 429s), which would make the wait pointless.
- When the wait is over the next attempt is checked as usual, so the right token then works at
  once and clears the count; a wrong one doubles the wait. Nothing is ever locked for good, and
  an address that stops failing is forgotten after ``forget`` seconds.
- Other addresses are never affected, and successful requests never count, so a script with the
  right token is never slowed down.

Attempts still being checked count as failures once the address has failed before, so a burst
of parallel guesses cannot all slip through before the first failure is recorded.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

#: Addresses remembered at most; the oldest entries go first (a flood from many addresses
#: cannot grow the table without bound).
MAX_CLIENTS = 10_000


@dataclass
class _Record:
    failures: int = 0
    pending: int = 0
    last_failure: float = 0.0
    locked_until: float = 0.0


@dataclass
class TokenBackoff:
    """Counts wrong tokens per client; ``clock`` is seconds on a monotonic scale."""

    free: int = 5
    first: float = 1.0
    cap: float = 60.0
    forget: float = 900.0
    clock: Callable[[], float] = time.monotonic
    _clients: dict[str, _Record] = field(default_factory=dict)

    def wait(self, client: str) -> int:
        """Whole seconds ``client`` must wait before its next token is looked at (0: none).

        A non-zero answer also covers attempts still in flight: with ``pending`` checks running
        after an earlier failure, the count they may add is assumed until they end.
        """
        record = self._record(client)
        if record is None:
            return 0
        now = self.clock()
        if record.locked_until > now:
            return max(1, math.ceil(record.locked_until - now))
        if record.pending and record.failures + record.pending >= self.free:
            return 1  # checks are running that may use up the free attempts: they decide
        return 0

    def started(self, client: str) -> object | None:
        """A token of ``client`` is being checked; returns the ticket to give :meth:`ended`."""
        record = self._record(client)
        if record is not None:
            record.pending += 1
        return record

    def ended(self, client: str, ticket: object | None, *, right: bool | None) -> None:
        """The check begun with :meth:`started` found the token ``right`` or wrong (``None``:
        it could not tell, e.g. the database was unavailable; nothing is counted)."""
        record = self._clients.get(client)
        if ticket is not None and ticket is record:  # it counted on this very record
            record.pending -= 1
        if right is None:
            return
        if right:
            self._clients.pop(client, None)
            return
        if record is None:
            if len(self._clients) >= MAX_CLIENTS:
                self._clients.pop(next(iter(self._clients)))
            record = self._clients[client] = _Record()
        now = self.clock()
        record.failures += 1
        record.last_failure = now
        over = record.failures - self.free
        if over >= 0:
            record.locked_until = now + min(self.cap, self.first * 2.0 ** min(over, 64))

    def _record(self, client: str) -> _Record | None:
        record = self._clients.get(client)
        if record is None:
            return None
        if not record.pending and self.clock() - record.last_failure > self.forget:
            del self._clients[client]
            return None
        return record
