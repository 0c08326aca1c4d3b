"""Pacing from the rate-limit headers OpenAI-style servers send on every reply.

OpenAI's API (and the servers that copy it: Azure OpenAI, Groq, LiteLLM's proxy, ...) say on
each reply, a 429 included, how much of the key's limit is left and when it will be whole again:

- ``x-ratelimit-remaining-requests`` / ``x-ratelimit-remaining-tokens``: what may still be
  sent now;
- ``x-ratelimit-reset-requests`` / ``x-ratelimit-reset-tokens``: the time until the limit is
  back to its initial state, as Go writes a duration (``1s``, ``6m0s``, ``20ms``,
  ``1h2m3.5s``; a plain number is taken as seconds).

Many send no ``Retry-After`` with a 429, so these are what there is to go by. A reply describes
the limit when the server counted that request; requests sent after it were not counted yet,
and what was counted leaves the limit later. :class:`HeaderBudget` keeps gavel's own log of what
it sent (when, one request, its tokens) and works out what is allowed now from the freshest
reply: its remaining amount, less what was sent after that request, plus what has come back
since. Providers limit in two ways, and what comes back is taken as the smaller of both:

- a sliding window lets each request go one window after it came (the window is the longest
  reset seen: a sliding window reports its length), so what gavel sent one window before now
  has come back;
- a token bucket (OpenAI's, by its description: the reset is the time until it is full again)
  refills evenly: what gavel sent within the reply's reset before it comes back at an even pace
  over that reset.

By the reset time of that reply the limit is whole again whatever the log says. Nothing is
known to limit until a reply has carried the headers: until then nothing is paced by them.

Written here: no maintained library reads these headers (``aiolimiter`` and ``limits`` enforce
a limit the caller states), and the log is what turns a remaining count into a pace.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

#: The share of the window added as a margin to when a request leaves it: gavel's clock and
#: the server's see a request at slightly different times (the trip there, queueing).
GUARD_SHARE = 0.05
#: The least margin, in seconds (a loopback trip, a busy event loop).
GUARD_MIN = 0.01
#: Requests kept in the log before any reply has said how long its window is.
KEEP = 4096
#: The longest reset believed, in seconds (OpenAI documents ``6m0s`` for tokens): a reset of
#: hours (a daily limit), a Unix time where a duration belongs, or nonsense would otherwise
#: hold the run that long; past it a request is sent, and its reply says again what is left.
MAX_RESET = 600.0

_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(h|ms|m|s|us|µs|ns)")
_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def parse_duration(text: str | None) -> float | None:
    """Seconds in an OpenAI reset header (``6m0s``, ``20ms``, ``1h2m3.5s``, ``7.66s``, or a
    plain number of seconds); None when it is missing or not a duration."""
    if text is None:
        return None
    text = text.strip()
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    parts = _DURATION.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        return None
    return sum(float(number) * _UNITS[unit] for number, unit in parts)


def _count(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


@dataclass(frozen=True)
class Limits:
    """What one reply said of the requests and tokens limits (None: not said)."""

    requests: tuple[float, float] | None  # (remaining, seconds to reset)
    tokens: tuple[float, float] | None

    @classmethod
    def read(cls, headers: Mapping[str, str] | None) -> Limits | None:
        """From a reply's headers (case-insensitive, as HTTP's); None when they say nothing."""
        if headers is None:
            return None
        found: list[tuple[float, float] | None] = []
        for kind in ("requests", "tokens"):
            remaining = _count(headers.get(f"x-ratelimit-remaining-{kind}"))
            reset = parse_duration(headers.get(f"x-ratelimit-reset-{kind}"))
            if remaining is None or reset is None:
                found.append(None)
            else:
                found.append((remaining, min(reset, MAX_RESET)))
        if found == [None, None]:
            return None
        return cls(*found)


class _Window:
    """One limit (requests or tokens) as the freshest reply that spoke of it describes it."""

    def __init__(self) -> None:
        #: (its request's number, remaining, reset) of the freshest reply; None: none yet.
        self.ref: tuple[int, float, float] | None = None
        #: The longest reset seen: the window a request counts in.
        self.length = 0.0

    def learn(self, number: int, remaining: float, reset: float) -> None:
        self.length = max(self.length, reset)
        if self.ref is None or number > self.ref[0]:
            self.ref = (number, remaining, reset)


class HeaderBudget:
    """What an endpoint's rate-limit headers allow, between replies (see the module's text).

    Requests are numbered as they are sent; :meth:`sent` logs each, :meth:`counted` corrects
    its tokens (the reply's usage) or zeroes it (refused: not counted), :meth:`learn` takes a
    reply's headers, and :meth:`wait` says how long the next request must wait.
    """

    def __init__(self) -> None:
        self.times: list[float] = []
        #: Each logged request's cost against the requests limit (1, 0 once refused) and
        #: against the tokens limit.
        self.costs: list[list[float]] = [[], []]
        self.first = 0  # the number of the oldest request in the log
        self.windows = (_Window(), _Window())

    @property
    def active(self) -> bool:
        """Whether a reply has carried the headers (then they, not guesses, pace requests)."""
        return any(window.ref is not None for window in self.windows)

    @property
    def next_number(self) -> int:
        return self.first + len(self.times)

    def sent(self, when: float, tokens: float) -> int:
        """Log a request sent at ``when`` charged ``tokens``; its number."""
        self._trim(when)
        self.times.append(when)
        self.costs[0].append(1.0)
        self.costs[1].append(tokens)
        return self.next_number - 1

    def counted(self, number: int, tokens: float | None) -> None:
        """What the server counted for request ``number``: ``tokens`` (None: refused, so
        nothing)."""
        index = number - self.first
        if 0 <= index < len(self.times):
            if tokens is None:
                self.costs[0][index] = 0.0
            self.costs[1][index] = tokens or 0.0

    def learn(self, number: int, limits: Limits | None) -> None:
        """The headers of request ``number``'s reply."""
        if limits is None or not 0 <= number - self.first < len(self.times):
            return
        for window, said in zip(self.windows, (limits.requests, limits.tokens), strict=True):
            if said is not None:
                window.learn(number, *said)

    def wait(self, now: float, tokens: float) -> float:
        """Seconds until a request costing ``tokens`` fits both limits (0: now)."""
        return max(self._wait(0, now, 1.0), self._wait(1, now, tokens))

    def _wait(self, kind: int, now: float, need: float) -> float:
        window = self.windows[kind]
        if window.ref is None:
            return 0.0
        number, remaining, reset = window.ref
        costs = self.costs[kind]
        index = number - self.first
        sent_at = self.times[index]
        guard = max(GUARD_SHARE * window.length, GUARD_MIN)
        whole = sent_at + reset + guard  # the limit is back to its initial state by then
        if now >= whole:
            return 0.0
        left = remaining - sum(costs[index + 1 :])  # what the reply left, less what went since
        if left >= need:
            return 0.0
        # What has come back since must be enough both ways (the limit may be either kind).
        deficit = need - left
        return max(
            self._leaving(kind, now, deficit, guard), self._refilling(kind, now, deficit, guard)
        )

    def _leaving(self, kind: int, now: float, deficit: float, guard: float) -> float:
        """Seconds until enough of what gavel sent has left the window, each request one
        window after it was sent (as a sliding window lets them go)."""
        window = self.windows[kind]
        number, _, reset = window.ref  # type: ignore[misc]
        costs = self.costs[kind]
        sent_at = self.times[number - self.first]
        whole = sent_at + reset + guard
        start = bisect.bisect_right(self.times, sent_at - window.length)
        stop = bisect.bisect_right(self.times, now - window.length - guard)
        freed = sum(costs[start:stop])
        if freed >= deficit:
            return 0.0
        for position in range(max(start, stop), len(self.times)):
            freed += costs[position]
            if freed >= deficit:
                return min(self.times[position] + window.length + guard, whole) - now
        return whole - now

    def _refilling(self, kind: int, now: float, deficit: float, guard: float) -> float:
        """Seconds until the limit has refilled enough at the pace the reply's reset implies
        (what gavel sent in that time comes back evenly, as a token bucket refills)."""
        number, _, reset = self.windows[kind].ref  # type: ignore[misc]
        index = number - self.first
        sent_at = self.times[index]
        whole = sent_at + reset + guard
        start = bisect.bisect_right(self.times, sent_at - reset)
        counted = sum(self.costs[kind][start : index + 1])
        if counted <= deficit:
            return whole - now
        return max(min(sent_at + guard + reset * deficit / counted, whole) - now, 0.0)

    def _trim(self, now: float) -> None:
        """Forget requests no reply can need any more: those more than two windows old, or
        before any header came, all but the last :data:`KEEP`."""
        length = max(window.length for window in self.windows)
        if length:
            cut = bisect.bisect_right(self.times, now - 2 * length - 1.0)
        else:
            cut = len(self.times) - KEEP
        for window in self.windows:
            if window.ref is not None:
                cut = min(cut, window.ref[0] - self.first)
        if cut > 0 and cut >= len(self.times) // 2:  # in chunks: a list's front is dear
            del self.times[:cut]
            del self.costs[0][:cut]
            del self.costs[1][:cut]
            self.first += cut
