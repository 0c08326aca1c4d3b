"""Whether an endpoint is only queueing what is sent beyond what it can work on at once.

A server that generates one request at a time (``transformers serve``, a llama.cpp server with
one slot) answers 16 requests in flight no faster than one: the other 15 wait in its queue, so
every reply takes 16 times as long, past the timeout once replies are slow, and the server
goes on working on requests the client has given up on. More in flight then buys nothing but
latency, where a batching server (vLLM, SGLang) answers more per second with more in flight.

Little's law tells them apart from the replies themselves. Over a *round* (as many replies as
the limit, 4 to 8, of requests sent since the limit last moved) the server's throughput ``X`` (tokens
answered per second) times the quickest a token has ever come back (``r_min``, seconds of
latency per completion token: a reply that did not queue) is how many requests it works on at
once, its parallelism ``P``. A batching server's ``P`` is about what is in flight; a serialized
one's about 1, however many are sent. When the in-flight limit is above ``2 P + 1`` and the
round's latency per token is over :data:`QUEUE_FACTOR` times ``r_min`` (the time is spent
waiting, not generating), the limit is lowered to ``2 P + 1``: the server always has the next
request at hand, and a reply waits for about one other instead of fifteen. Per token, so that a
long answer is not taken for a queue. The limit then grows back slowly, as after a 429
(:class:`gavel.transport.adaptive.AdaptiveLimit`), and is lowered again if the queue comes back.

Pure bookkeeping (no clock, no asyncio), applied by :mod:`gavel.transport.gate`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Latency per token over the quickest seen that says the time goes on waiting.
QUEUE_FACTOR = 3.0
#: Replies in a round at least (a limit of 1 or 2 measures over a few replies), and at most
#: (a limit of 16 is judged after 8 replies, before the rest of them have queued too).
MIN_ROUND = 4
MAX_ROUND = 8


@dataclass
class QueueWatch:
    """The replies of one round, and the quickest latency per token seen."""

    #: Seconds of latency per completion token of the quickest reply so far (None: none yet).
    quickest: float | None = None
    #: (when it came, latency, completion tokens) of this round's replies.
    replies: list[tuple[float, float, int]] = field(default_factory=list)

    def reply(self, done: float, latency: float, tokens: int | None, limit: float) -> int | None:
        """A clean reply of a request sent under the current limit; at the end of a round, the
        limit that would keep the queue short when it is lower than ``limit`` (else None)."""
        tokens = max(tokens or 1, 1)
        per_token = latency / tokens
        self.quickest = per_token if self.quickest is None else min(self.quickest, per_token)
        self.replies.append((done, latency, tokens))
        if len(self.replies) < max(MIN_ROUND, min(round(limit), MAX_ROUND)):
            return None
        replies, self.replies = sorted(self.replies), []
        span = replies[-1][0] - replies[0][0]
        if span <= 0:
            return None
        throughput = sum(tokens for _, _, tokens in replies[1:]) / span
        parallel = throughput * self.quickest
        waiting = sum(latency for _, latency, _ in replies) / sum(t for _, _, t in replies)
        target = max(1, round(2 * parallel + 1))
        if target < limit and waiting > QUEUE_FACTOR * self.quickest:
            return target
        return None

    def restart(self) -> None:
        """The limit moved: what was measured under the old one says nothing of the new."""
        self.replies.clear()
