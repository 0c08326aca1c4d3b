"""The gate every request to one endpoint passes: rate budgets, adaptive concurrency, pauses.

Each base URL of a served model has its own :class:`EndpointGate`. Before a request is sent it
waits, in the order requests arrived, until

- the endpoint is not paused: a 429 with ``Retry-After`` (seconds or an HTTP date, or
  ``retry-after-ms``) pauses the whole endpoint that long, not only the refused request, since
  every other request sent meanwhile would be refused too; a bare 429 (no such header, no
  rate header) pauses it briefly and probes, the pause doubling with each probe refused;
- what the server's ``x-ratelimit-remaining-*`` / ``x-ratelimit-reset-*`` headers say is left
  allows it (:mod:`gavel.transport.rate_headers`); a 429 that carries them does not cut the
  adaptive limit, since they already pace what follows;
- fewer requests are in flight there than the adaptive limit
  (:class:`gavel.transport.adaptive.AdaptiveLimit`: cut by 30% on a 429, grown back while replies are
  clean, never above ``--concurrency``), and, once a 429 has come, its pace allows it: that
  limit's value over the average reply latency, requests per second, so that a limit of 4.8 in
  flight is 4.8 on average, not 4 or 5;
- its ``--rpm`` and ``--tpm`` buckets allow it (:mod:`gavel.transport.rate_limit`).

The adaptive limit is also lowered when the replies show that the server only queues what is
in flight beyond what it works on at once (:mod:`gavel.transport.queueing`: a server generating one
request at a time), so that replies do not wait in its queue past the timeout, and when a
request times out while the server answers others but none sent after it (it waited behind
them), cut as for a 429, once a round.

After the reply the token bucket is corrected by what the server reported it counted, and a
refused request gives back what it was charged. The runner retries the refused request as
usual (:mod:`gavel.transport.retry`); :class:`RateControl` is what it sees of the gates: it sets
their ceiling and shows their limit on the progress bar.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from gavel.errors import ConfigError
from gavel.transport.adaptive import AdaptiveLimit
from gavel.transport.queueing import QueueWatch
from gavel.transport.rate_headers import HeaderBudget, Limits
from gavel.transport.rate_limit import BURST_SECONDS, TokenBucket, TokenMeter
from gavel.transport.retry import retry_after, status_of

#: The in-flight ceiling until a run sets it (the runner's default concurrency).
DEFAULT_CEILING = 16
#: The longest pause a ``Retry-After`` imposes on an endpoint (as the runner's retry policy).
MAX_PAUSE = 120.0
#: The first pause after a 429 without ``Retry-After`` or rate headers, in seconds (at least
#: one reply's latency); it doubles with each probe refused.
FIRST_PROBE = 0.05
#: What a request's ``post`` answers: the reply's JSON and its headers (None: not known).
Posted = tuple[Any, Mapping[str, str] | None]
#: Weight of the newest clean reply in the average latency the adaptive pace is worked out from:
#: about the last five replies, quick to follow a server slowing down, not one reply's jitter.
LATENCY_SMOOTHING = 0.2


class EndpointGate:
    """Admission to one endpoint; all state lives on the event loop that uses it."""

    def __init__(self, url: str, *, rpm: float | None = None, tpm: float | None = None,
                 ceiling: int = DEFAULT_CEILING):  # fmt: skip
        self.url = url
        # The requests bucket holds at least one request (a late one is made up for).
        self.requests = TokenBucket(rpm, burst=max(1.0, rpm / 60 * BURST_SECONDS)) if rpm else None
        self.tokens = TokenBucket(tpm) if tpm else None
        self.meter = TokenMeter()
        self.limit = AdaptiveLimit(ceiling)
        self.in_flight = 0
        self.paused_until = 0.0
        #: Average seconds from sending to a clean reply (None before the first).
        self.latency: float | None = None
        #: When the next request may go at the adaptive pace (a late one may be made up for).
        self._paced_at = 0.0
        #: Whether the server only queues what is in flight beyond what it works on at once.
        self.queue = QueueWatch()
        #: What the server's rate-limit headers allow (:mod:`gavel.transport.rate_headers`).
        self.budget = HeaderBudget()
        #: The newest request (by number) answered cleanly so far.
        self._answered = -1
        #: Probes refused in a row after a bare 429, and when the last pause began.
        self._probes = 0
        self._probe_from = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._turn: asyncio.Lock
        self._changed: asyncio.Event

    def _bind(self) -> None:
        """Fresh primitives for a new event loop (each ``asyncio.run`` is one)."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop = loop
            self._turn = asyncio.Lock()
            self._changed = asyncio.Event()
            self.in_flight = 0

    @property
    def paused_for(self) -> float:
        return max(self.paused_until - time.monotonic(), 0.0)

    async def send(self, body: Mapping[str, Any], post: Callable[[], Awaitable[Posted]]) -> Any:
        """``await post()`` once the endpoint may take ``body``: ``post`` answers the reply and
        its headers; this, the reply (or ``post``'s error)."""
        self._bind()
        epoch, estimate, charged, number = await self._admit(body)
        sent = time.monotonic()
        try:
            reply, headers = await post()
        except BaseException as error:
            self._done()
            # The server answers, but nothing sent after this request came back before it gave
            # up: it waited in the server's queue, not on its own long answer.
            queued = _timed_out(error) and self.latency is not None and self._answered < number
            if queued and self.limit.queued(epoch):
                self.queue.restart()
            if status_of(error) == 429:
                response = getattr(error, "response", None)
                limits = Limits.read(getattr(response, "headers", None))
                self.budget.counted(number, None)  # a provider does not count what it refused
                self.budget.learn(number, limits)
                self._refused(epoch, retry_after(error), charged, sent, limits)
            raise
        self._done()
        took = time.monotonic() - sent
        self.latency = took if self.latency is None else (
            self.latency + LATENCY_SMOOTHING * (took - self.latency))  # fmt: skip
        self.limit.clean()
        self._probes = 0
        self._answered = max(self._answered, number)
        self.budget.learn(number, Limits.read(headers))
        usage = reply.get("usage") if isinstance(reply, dict) else None
        if epoch == self.limit.epoch:  # sent under the limit as it is: measures it
            tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
            target = self.queue.reply(time.monotonic(), took, tokens, self.limit.value)
            if target is not None:
                self.limit.lower_to(target)
                self.queue.restart()
        if isinstance(usage, dict):
            counted = self.meter.learn(estimate, usage)
            if counted is not None:
                self.budget.counted(number, counted)
                if self.tokens is not None:
                    self.tokens.correct(charged, counted)
        self._changed.set()
        return reply

    async def _admit(self, body: Mapping[str, Any]) -> tuple[int, float, float, int]:
        """Wait for the request's turn; (the epoch it is sent in, its prompt estimate, the
        tokens charged, its number in the header budget's log). The charge is worked out when
        the turn comes, from what the replies before it taught the meter."""
        async with self._turn:  # first come, first served
            while (wait := self._wait(body)) != 0.0:
                self._changed.clear()
                with contextlib.suppress(TimeoutError):  # the wait is over; look again
                    await asyncio.wait_for(self._changed.wait(), wait)
            self.in_flight += 1
            now = time.monotonic()
            if (rate := self.pace) is not None:
                # One interval of lateness is made up for, no more: no burst after a pause.
                interval = 1.0 / rate
                self._paced_at = max(self._paced_at, now - interval) + interval
            if self.requests is not None:
                self.requests.take(1)
            estimate = charged = 0.0
            if self.tokens is not None or self.budget.active:
                estimate, charged = self.meter.charge(body)
            if self.tokens is not None:
                self.tokens.take(charged)
            return self.limit.epoch, estimate, charged, self.budget.sent(now, charged)

    def _wait(self, body: Mapping[str, Any]) -> float | None:
        """Seconds until ``body`` may go (None: until a request in flight ends)."""
        paused = self.paused_for
        if paused > 0:
            return paused
        if self.in_flight >= self.limit.cap:
            return None
        now = time.monotonic()
        paced = max(self._paced_at - now, 0.0) if self.pace is not None else 0.0
        buckets = [b.wait_time() for b in (self.requests, self.tokens) if b]
        if self.budget.active:  # the server's own headers say what is left
            buckets.append(self.budget.wait(now, self.meter.charge(body)[1]))
        return max([paced, *buckets])

    @property
    def pace(self) -> float | None:
        """Requests per second the adaptive limit allows (None: not paced, no 429 yet)."""
        return self.limit.rate(self.latency)

    def _probe(self, epoch: int, sent: float) -> float | None:
        """The pause after a 429 that says nothing of when to come back. A window limit stays
        full until what filled it leaves, whatever is sent meanwhile, so every request sent
        then is refused: the endpoint pauses, and the first request after the pause is a
        probe. Each probe refused doubles the pause (from :data:`FIRST_PROBE` or one reply's
        latency) and says nothing new of the rate, so only the first 429 of such a spell
        shrinks the limit; a clean reply ends it. A 429 of a request sent before the pause
        began is old news."""
        if sent < self._probe_from:
            self.limit.refused(epoch, shrink=False)
            return None
        if self.limit.refused(epoch, shrink=self._probes == 0):
            self.queue.restart()
        pause = max(FIRST_PROBE, self.latency or 0.0) * 2**self._probes
        self._probes += 1
        self._probe_from = time.monotonic()
        return pause

    def _done(self) -> None:
        self.in_flight -= 1
        self._changed.set()

    def _refused(self, epoch: int, wait: float | None, charged: float, sent: float,
                 limits: Limits | None) -> None:  # fmt: skip
        if limits is not None:  # the headers pace what follows: no guess at the limit
            self.limit.refused(epoch, shrink=False)
        elif wait is None:  # a bare 429: nothing says how long the limit stays full
            wait = self._probe(epoch, sent)
        elif self.limit.refused(epoch):
            self.queue.restart()
        if wait:
            until = time.monotonic() + min(wait, MAX_PAUSE)
            self.paused_until = max(self.paused_until, until)
        # A provider does not count what it refused.
        if self.requests is not None:
            self.requests.give_back(1)
        if self.tokens is not None:
            self.tokens.give_back(charged)
        self._changed.set()


def _timed_out(error: BaseException) -> bool:
    """Whether the request gave up waiting for its reply (the client's ``--timeout``)."""
    return isinstance(error, TimeoutError)


class RateControl:
    """The gates of a model's endpoints, as the runner sees them."""

    def __init__(self, urls: Sequence[str], *, rpm: float | None = None, tpm: float | None = None):
        for name, value in (("rpm", rpm), ("tpm", tpm)):
            if value is not None and not value > 0:
                raise ConfigError(f"{name} must be a positive number per minute, got {value}")
        self.rpm = rpm
        self.tpm = tpm
        self.ceiling = DEFAULT_CEILING
        self.gates = [EndpointGate(url, rpm=rpm, tpm=tpm) for url in urls]

    def set_ceiling(self, concurrency: int) -> None:
        """The run's ``--concurrency``: no endpoint's limit goes above it."""
        self.ceiling = concurrency
        for gate in self.gates:
            gate.limit.set_ceiling(concurrency)

    @property
    def refusals(self) -> int:
        return sum(gate.limit.refusals for gate in self.gates)

    def limit(self) -> int:
        """Requests that may be in flight over all endpoints now."""
        return min(self.ceiling, sum(gate.limit.current for gate in self.gates))

    def describe(self) -> str:
        """For the progress bar: ``limit 6/16`` (the adaptive limit / --concurrency), once a
        429 has come with a tenth (``limit 4.8/8``) and the pace it sets (``47 req/s``), with
        the 429s seen and a pause in progress."""
        paces = [pace for gate in self.gates if (pace := gate.pace) is not None]
        if paces:
            value = min(float(self.ceiling), sum(gate.limit.value for gate in self.gates))
            text = f"limit {value:.1f}/{self.ceiling}  {sum(paces):.0f} req/s"
        else:
            text = f"limit {self.limit()}/{self.ceiling}"
        if any(gate.limit.queue_cuts for gate in self.gates):
            text += "  (the server queues)"
        if self.refusals:
            text += f"  429s {self.refusals}"
        paused = max(gate.paused_for for gate in self.gates)
        if paused > 0:
            text += f"  paused {paused:.0f} s"
        return text

    def settings(self) -> dict[str, float | None]:
        """The budgets, for the run manifest (they change when answers come, never what)."""
        return {"rpm": self.rpm, "tpm": self.tpm}
