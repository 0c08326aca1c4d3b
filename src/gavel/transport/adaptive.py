"""How many requests one endpoint may have in flight, learned from its 429s (AIMD).

A rate limit nobody told gavel about shows itself only by refusals. The in-flight limit starts
at ``--concurrency`` (the ceiling, never exceeded) and:

- **shrinks multiplicatively** on a 429 (times :data:`DECREASE`), once per round: requests
  sent before the last decrease were sent under the old limit, so their refusals say nothing
  new and do not shrink it again (each admission carries the :attr:`AdaptiveLimit.epoch` it was
  sent in);
- **grows additively** while replies are clean: by one per limit's worth of clean replies
  (one per round trip, as TCP's congestion avoidance), up to the level where the last 429
  came, and :data:`PROBE_SLOWDOWN` times slower beyond it, so a limit that was found is probed
  gently instead of hit again and again. Each 429 that comes again at (or below) the level of
  the last one doubles that slowdown (up to :data:`MAX_SLOWDOWN`): the limit is where it was,
  so it is probed less and less often; a 429 at another level (the limit moved) resets it.

Once a 429 has come, the limit is a *rate*, not only a count: a whole number of requests in
flight is too coarse where the limit fits, say, 4.8 of them (4 leave a sixth of the rate unused,
5 step over it on every round). So the gate also paces requests at :meth:`AdaptiveLimit.rate`:
the limit's value over the reply latency (Little's law: that many in flight on average, 4.8 where
it is 4.8), and lets :attr:`AdaptiveLimit.cap` (the value rounded up) be in flight at once so a
slow reply does not hold the pace back. The AIMD above then moves a rate continuously, for a
hidden limit on requests or on tokens alike, and a probe past the limit oversteps it by a
fraction of a request instead of a whole one. Before any 429 nothing is paced: nothing is known
to limit.

A server that queues what it cannot work on at once lowers the limit too
(:meth:`AdaptiveLimit.lower_to`, from :mod:`gavel.transport.queueing`): to the level that keeps
its queue short, grown beyond as slowly as beyond a 429's, without a pace.

This is pure bookkeeping (no clock, no asyncio): :mod:`gavel.transport.gate` applies it.
"""

from __future__ import annotations

import math

#: Factor the limit is multiplied by on a 429: TCP CUBIC's. Halving kept a sliding window 2-15%
#: less full, for as many 429s.
DECREASE = 0.7
#: How much slower the limit grows beyond the level at which the last 429 came.
PROBE_SLOWDOWN = 4.0
#: The slowdown doubles with every 429 found at the same level, up to this.
MAX_SLOWDOWN = 64.0


class AdaptiveLimit:
    """The in-flight limit of one endpoint, between 1 and ``ceiling``."""

    def __init__(
        self, ceiling: int, *, decrease: float = DECREASE, slowdown: float = PROBE_SLOWDOWN
    ):
        if ceiling < 1:
            raise ValueError("the ceiling must be at least 1")
        if not 0 < decrease < 1:
            raise ValueError("decrease must be between 0 and 1")
        self.ceiling = ceiling
        self.decrease = decrease
        self.base_slowdown = slowdown
        #: How much slower than one per round the limit grows beyond :attr:`loss`.
        self.slowdown = slowdown
        self.value = float(ceiling)
        #: Bumped by every decrease; a refusal of a request sent in an older epoch is ignored.
        self.epoch = 0
        #: The limit when the last 429 came (None: no 429 yet).
        self.loss: float | None = None
        #: 429s that shrank the limit, and all 429s seen.
        self.decreases = 0
        self.refusals = 0
        #: Whether a 429 has come (then the limit is also a pace), and the times a queue at the
        #: server lowered it (:meth:`lower_to`).
        self.paced = False
        self.queue_cuts = 0

    @property
    def current(self) -> int:
        """Requests that may be in flight now."""
        return max(1, min(self.ceiling, int(self.value)))

    @property
    def cap(self) -> int:
        """Requests that may be in flight at once: the value rounded up (the pace keeps the
        average at the value itself once a 429 has come), before any 429 the whole value."""
        if not self.paced:
            return self.current
        return max(1, min(self.ceiling, math.ceil(self.value - 1e-9)))

    def rate(self, latency: float | None) -> float | None:
        """Requests per second to pace at, for replies taking ``latency`` seconds on average:
        the value over it (None: not paced, no 429 yet or no latency measured)."""
        if not self.paced or not latency:
            return None
        return self.value / latency

    def set_ceiling(self, ceiling: int) -> None:
        """A run's ``--concurrency``: the limit never goes above it (and starts there until a
        429 has taught it lower)."""
        if ceiling < 1:
            raise ValueError("the ceiling must be at least 1")
        self.ceiling = ceiling
        self.value = float(ceiling) if self.loss is None else min(self.value, float(ceiling))

    def clean(self) -> None:
        """A reply that was not refused: grow by one per round of replies."""
        step = 1.0 / max(self.value, 1.0)
        if self.loss is not None and self.value >= self.loss:
            step /= self.slowdown
        self.value = min(float(self.ceiling), self.value + step)

    def refused(self, epoch: int, *, shrink: bool = True) -> bool:
        """A 429 for a request sent in ``epoch``; True when it shrank the limit (never with
        ``shrink`` False: counted only, for a 429 that says nothing new of the limit)."""
        self.refusals += 1
        if epoch != self.epoch or not shrink:
            return False
        self._moved(self.value, self.value * self.decrease)
        self.paced = True
        self.decreases += 1
        return True

    def lower_to(self, value: float) -> None:
        """The server queues what is sent beyond ``value`` (:mod:`gavel.transport.queueing`): the
        limit goes there, and grows beyond it only slowly, as beyond the level of a 429."""
        self._moved(value, value)
        self.queue_cuts += 1

    def queued(self, epoch: int) -> bool:
        """A request sent in ``epoch`` timed out waiting behind the others (none sent after it
        was answered first): cut as for a 429, once per round, and grown back as slowly as
        after :meth:`lower_to`. True when it moved the limit."""
        if epoch != self.epoch:
            return False
        self.lower_to(self.value * self.decrease)
        return True

    def _moved(self, loss: float, value: float) -> None:
        same_level = self.loss is not None and abs(loss - self.loss) < 1
        self.slowdown = min(self.slowdown * 2, MAX_SLOWDOWN) if same_level else self.base_slowdown
        self.loss = loss
        self.value = max(1.0, min(value, self.value))
        self.epoch += 1
