"""Backoff for wrong tokens, per client address, per network and for everyone together.

A token has 256 random bits, so guessing one is hopeless anyway; the backoff keeps guessing
visible (429 instead of a silent 401) and slows a script down. The design has to let the right
person in, even when they share an address with someone guessing (an office NAT or a proxy
makes many people one address):

- **A valid token is always accepted.** Every presented token is looked up first (one indexed
  query on its hash), and only a *wrong* one meets the backoff. So nobody is ever refused
  because someone else guessed wrong from the same address or network.
- Wrong tokens are counted three ways: per address, per network (the /24 of an IPv4 address,
  the /64 of an IPv6 one: one machine rarely has more, and a guesser rotating through the
  addresses of its own network is still one network), and for all clients together (a guesser
  with addresses in many networks). Each count has its own number of ``free`` failures, a
  larger one for the wider groups, so one person's typos never hold up the network.
- The ``free``-th failure of a group makes it wait ``first`` seconds, each further one twice
  as long as the last wait, up to ``cap``. While a group waits, wrong tokens from it are
  answered 429 with ``Retry-After`` (and not counted again: the wait does not grow while it
  runs); when the wait is over the next wrong one is answered 401 and doubles the wait.
- Successes never count and clear nothing (a right token from a shared address must not hand
  a guesser there fresh free attempts); a group that stops failing is forgotten after
  ``forget`` seconds.

The look-up and the bookkeeping after it run on the event loop without a pause between them,
so a burst of parallel guesses gets exactly the free 401s, never more.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from gavel.annotate.limits import FIRST_WAIT, FORGET, MAX_WAIT
from gavel.annotate.limits import FREE_WRONG_TOKENS as FREE
from gavel.annotate.limits import FREE_WRONG_TOKENS_ALL as FREE_ALL
from gavel.annotate.limits import FREE_WRONG_TOKENS_NETWORK as FREE_NETWORK

#: Groups remembered at most per kind; the oldest go first (a flood from many addresses cannot
#: grow the tables without bound).
MAX_CLIENTS = 10_000


@dataclass
class _Record:
    failures: int = 0
    last_failure: float = 0.0
    locked_until: float = 0.0


@dataclass
class TokenBackoff:
    """Counts wrong tokens per key (an address, a network, ``*``); ``clock`` is seconds on a
    monotonic scale."""

    free: int = FREE
    first: float = FIRST_WAIT
    cap: float = MAX_WAIT
    forget: float = FORGET
    clock: Callable[[], float] = time.monotonic
    _records: dict[str, _Record] = field(default_factory=dict)

    def wait(self, key: str) -> int:
        """Whole seconds ``key`` must wait before its next wrong token is answered 401 (0:
        none)."""
        record = self._records.get(key)
        if record is None:
            return 0
        now = self.clock()
        if now - record.last_failure > self.forget:
            del self._records[key]
            return 0
        if record.locked_until > now:
            return max(1, math.ceil(record.locked_until - now))
        return 0

    def failed(self, key: str) -> None:
        """A wrong token from ``key`` was answered 401: count it, and start its wait once the
        free failures are used up."""
        record = self._records.get(key)
        if record is None:
            if len(self._records) >= MAX_CLIENTS:
                self._records.pop(next(iter(self._records)))
            record = self._records[key] = _Record()
        now = self.clock()
        record.failures += 1
        record.last_failure = now
        over = record.failures - self.free
        if over >= 0:
            record.locked_until = now + min(self.cap, self.first * 2.0 ** min(over, 64))


def network_of(address: str) -> str:
    """The /24 of an IPv4 address, the /64 of an IPv6 one; anything else (a Unix socket's
    empty name) is its own network."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    bits = 24 if ip.version == 4 else 64
    return str(ipaddress.ip_network(f"{ip}/{bits}", strict=False))


@dataclass
class TokenThrottle:
    """The three counts of wrong tokens (address, network, everyone) behind one interface."""

    free: int = FREE
    free_network: int = FREE_NETWORK
    free_all: int = FREE_ALL
    first: float = FIRST_WAIT
    cap: float = MAX_WAIT
    forget: float = FORGET
    clock: Callable[[], float] = time.monotonic
    #: Wrong tokens answered 401 and 429 since the start (for tests and the curious).
    answered: dict[int, int] = field(default_factory=lambda: {401: 0, 429: 0})

    def __post_init__(self) -> None:
        def backoff(free: int) -> TokenBackoff:
            return TokenBackoff(free, self.first, self.cap, self.forget, self.clock)

        self._levels = (backoff(self.free), backoff(self.free_network), backoff(self.free_all))

    def _keys(self, client: str) -> tuple[str, str, str]:
        return client, network_of(client), "*"

    def wrong(self, client: str) -> int:
        """A wrong token came from ``client``: the seconds to tell it to wait (429), or 0 when
        it is answered 401 now (and counted)."""
        pairs = list(zip(self._levels, self._keys(client), strict=True))
        wait = max(level.wait(key) for level, key in pairs)
        if wait:
            self.answered[429] += 1
            return wait
        for level, key in pairs:
            level.failed(key)
        self.answered[401] += 1
        return 0
