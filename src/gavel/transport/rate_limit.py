"""Requests- and tokens-per-minute budgets: token buckets a request waits on before it is sent.

A hosted API refuses (429) what goes beyond its rate limits, and a refused request is time
lost. With ``--rpm`` / ``--tpm`` the runner keeps within them instead: a request waits until
its endpoint's buckets hold what it costs (one request; its tokens), then takes it.

The buckets carry a debt: a request is let through as soon as the bucket is not in debt, and
takes its whole cost, so one request larger than the bucket is paced instead of never sent.
They refill at :data:`PACE` of the budget: a provider counts requests in a sliding window
by when they arrive, and a client sending at exactly the limit has every other request
refused by a millisecond of jitter. A bucket holds at most :data:`BURST_SECONDS` of the budget
(the requests bucket one request), enough to make up for a request sent a little late, not a
burst that the window would refuse.

Tokens are known only when the reply comes (``usage``), so a request is charged an estimate
when sent (:class:`TokenMeter`: its text at :data:`CHARS_PER_TOKEN`, :data:`IMAGE_TOKENS` per
image, both scaled by what the server reported for earlier requests, plus the completion
tokens replies have averaged) and the bucket is corrected by the difference once the server
says what it counted. A refused request gives its charge back: a provider does not count it.

Written here rather than taken from ``aiolimiter``: its leaky bucket refuses an amount larger
than its capacity and has no way to give back or charge more after the fact, which is what
reconciling with the reported usage needs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

#: The share of a budget the buckets pace requests at.
PACE = 0.95
#: The most of a budget a bucket saves up while idle, in seconds of that budget.
BURST_SECONDS = 0.05
#: Characters of text per token, the usual rule of thumb for English with BPE tokenizers.
CHARS_PER_TOKEN = 4
#: Tokens charged per image before the server has reported any: OpenAI's count for a
#: 1024x1024 image at high detail (85 + 4 tiles x 170).
IMAGE_TOKENS = 765
#: Weight of the newest reply in the running averages of :class:`TokenMeter`.
SMOOTHING = 0.2


class TokenBucket:
    """``per_minute`` units per minute (paced at ``pace`` of it), refilled continuously, holding
    at most ``burst`` units (default: :data:`BURST_SECONDS` of the rate). ``clock`` is
    injectable so the arithmetic can be checked without waiting."""

    def __init__(
        self,
        per_minute: float,
        *,
        pace: float = PACE,
        burst: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        if not per_minute > 0:
            raise ValueError(f"a budget must be positive, got {per_minute}")
        self.per_minute = per_minute
        self.rate = per_minute * pace / 60.0
        self.capacity = self.rate * BURST_SECONDS if burst is None else burst
        self.clock = clock
        self.level = 0.0  # not full: a run's first window is no fuller than the others
        self.updated = clock()

    def _refill(self) -> None:
        now = self.clock()
        self.level = min(self.capacity, self.level + (now - self.updated) * self.rate)
        self.updated = now

    def wait_time(self) -> float:
        """Seconds until the bucket is out of debt (0: a request may go now)."""
        self._refill()
        return 0.0 if self.level >= 0 else -self.level / self.rate

    def take(self, amount: float) -> None:
        """Spend ``amount`` (it may leave the bucket in debt)."""
        self._refill()
        self.level -= amount

    def give_back(self, amount: float) -> None:
        """Return ``amount`` that was not spent after all (never above the capacity)."""
        self._refill()
        self.level = min(self.capacity, self.level + amount)

    def correct(self, charged: float, actual: float) -> None:
        """The server counted ``actual`` for what was charged as ``charged``."""
        if actual > charged:
            self.take(actual - charged)
        else:
            self.give_back(charged - actual)


def text_and_images(body: Mapping[str, Any]) -> tuple[int, int]:
    """Characters of text and number of images in a Chat Completions request body."""
    chars = images = 0
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, str):
            chars += len(content)
            continue
        for part in content or ():
            if not isinstance(part, Mapping):
                continue
            if part.get("type") == "image_url":
                images += 1
            elif isinstance(part.get("text"), str):
                chars += len(part["text"])
    return chars, images


class TokenMeter:
    """What a request is charged against a tokens-per-minute budget before its reply, learned
    from the usage that replies report."""

    def __init__(self) -> None:
        #: Reported prompt tokens per estimated prompt token (1 until a reply says).
        self.scale = 1.0
        #: Average completion tokens of the replies so far; None before the first.
        self.completion: float | None = None

    def prompt_estimate(self, body: Mapping[str, Any]) -> float:
        """The prompt's tokens by the rule of thumb, before any scaling."""
        chars, images = text_and_images(body)
        return chars / CHARS_PER_TOKEN + images * IMAGE_TOKENS

    def charge(self, body: Mapping[str, Any]) -> tuple[float, float]:
        """(the prompt estimate, the tokens to charge now): the scaled prompt and the
        expected completion (``max_tokens`` until a reply has shown the usual length, as
        providers count it)."""
        prompt = self.prompt_estimate(body)
        completion = self.completion
        if completion is None:
            limit = body.get("max_tokens")
            completion = float(limit) if isinstance(limit, int) else 0.0
        return prompt, prompt * self.scale + completion

    def learn(self, prompt_estimate: float, usage: Mapping[str, Any]) -> float | None:
        """Update the averages from a reply's ``usage``; returns the tokens the server counted
        (prompt + completion), or None when it reported none."""
        prompt = usage.get("prompt_tokens")
        completion = usage.get("completion_tokens")
        if not isinstance(prompt, int) or not isinstance(completion, int):
            return None
        first = self.completion is None
        if prompt_estimate > 0:
            ratio = prompt / prompt_estimate
            self.scale = ratio if first else self.scale + SMOOTHING * (ratio - self.scale)
        if self.completion is None:
            self.completion = float(completion)
        else:
            self.completion += SMOOTHING * (completion - self.completion)
        return float(prompt + completion)
