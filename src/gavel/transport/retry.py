"""Which failures are worth another try, and how long to wait before it.

Retried: rate limits (429), server errors (5xx, and 408/409), timeouts, dropped connections and
replies that are not a valid completion (malformed JSON, no choices). Not retried: other 4xx
(a bad request, a wrong key, an unknown model: sending it again gives the same answer) and
errors on our side (an image that cannot be read).

The wait is exponential with full jitter (``uniform(0, min(max_delay, base * 2**attempt))``),
so many workers hitting the same overloaded server spread out. A ``Retry-After`` header
(seconds, or an HTTP date) or OpenAI's ``retry-after-ms`` is obeyed instead, up to
``max_retry_after`` seconds; a value that is not a finite number or a date (``nan``, ``inf``,
words) is read as no value at all.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import random
import time
from dataclasses import dataclass
from typing import Any

from gavel.errors import GavelError

RETRY_STATUS = frozenset({408, 409, 429})


class InvalidResponseError(GavelError):
    """The server answered 200 but not with a usable completion (retried)."""


@dataclass(frozen=True)
class RetryPolicy:
    #: Extra attempts after the first (so at most ``retries + 1`` calls per request).
    retries: int = 6
    base_delay: float = 0.5
    max_delay: float = 30.0
    #: The longest ``Retry-After`` obeyed; longer requests are capped to this.
    max_retry_after: float = 120.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (0 for the first retry)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        return random.uniform(0.0, min(self.max_delay, self.base_delay * 2**attempt))


def status_of(error: BaseException) -> int | None:
    status = getattr(error, "status_code", None)
    return status if isinstance(status, int) else None


def is_retryable(error: BaseException) -> bool:
    """True for failures that another try may not repeat."""
    if isinstance(
        error,
        InvalidResponseError | json.JSONDecodeError | asyncio.TimeoutError | ConnectionError,
    ):
        return True
    status = status_of(error)
    if status is not None:
        return status in RETRY_STATUS or status >= 500
    try:
        import openai
    except ImportError:  # pragma: no cover - only without the api extra
        return False
    # Timeouts and connection errors of the client (APITimeoutError is an APIConnectionError).
    return isinstance(error, openai.APIConnectionError | openai.APIResponseValidationError)


def retry_after(error: BaseException) -> float | None:
    """Seconds the server asked us to wait, from the error's HTTP response, if any."""
    response: Any = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    millis = _finite(headers.get("retry-after-ms"))
    if millis is not None:
        return max(millis / 1000, 0.0)
    return parse_retry_after(headers.get("retry-after"))


def _finite(value: str | None) -> float | None:
    """A header's number, or None when it is none or not finite (``nan``, ``inf``: read as
    unreadable, never as a wait)."""
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds: a number of seconds or an HTTP date (RFC 9110); a value
    that is neither, or a number that is not finite, is None."""
    if value is None:
        return None
    value = value.strip()
    seconds = _finite(value)
    if seconds is not None:
        return max(seconds, 0.0)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)
