"""OpenAI's rate-limit headers: their durations, and what the budget built from them allows,
with the times given by hand."""

from __future__ import annotations

import pytest

from gavel.transport.rate_headers import (
    GUARD_MIN,
    MAX_RESET,
    HeaderBudget,
    Limits,
    parse_duration,
)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1s", 1.0),
        ("6m0s", 360.0),
        ("20ms", 0.02),
        ("1h2m3.5s", 3723.5),
        ("2m59.56s", 179.56),  # Groq writes hundredths
        ("7.66s", 7.66),
        ("0s", 0.0),
        ("150us", 150e-6),
        ("12", 12.0),  # a plain number: seconds
        (" 3s ", 3.0),
    ],
)
def test_durations_as_openai_writes_them(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", [None, "", "soon", "1x", "s", "-1", "1s junk", "nan", "1m-2s"])
def test_what_is_not_a_duration(text):
    assert parse_duration(text) is None


def test_limits_are_read_from_the_headers_that_say_them():
    limits = Limits.read(
        {"x-ratelimit-remaining-requests": "59", "x-ratelimit-reset-requests": "1s",
         "x-ratelimit-remaining-tokens": "149984", "x-ratelimit-reset-tokens": "6m0s"}
    )  # fmt: skip
    assert limits == Limits(requests=(59.0, 1.0), tokens=(149984.0, 360.0))
    only_tokens = Limits.read(
        {"x-ratelimit-remaining-tokens": "10", "x-ratelimit-reset-tokens": "20ms"}
    )
    assert only_tokens == Limits(requests=None, tokens=(10.0, 0.02))
    assert Limits.read({"x-ratelimit-remaining-requests": "5"}) is None  # no reset: no use
    assert Limits.read({"retry-after": "3"}) is None
    assert Limits.read(None) is None


def test_nothing_is_paced_before_a_reply_carries_the_headers():
    budget = HeaderBudget()
    for k in range(20):
        budget.sent(k * 0.01, 30.0)
    budget.learn(3, None)
    assert not budget.active and budget.wait(1.0, 30.0) == 0.0


def test_what_is_left_less_what_was_sent_since_plus_what_left_the_window():
    budget = HeaderBudget()
    for when in (0.0, 0.1, 0.2):
        budget.sent(when, 10.0)
    # The reply of request 0: two more requests fit; the window is back to empty in 1 s.
    budget.learn(0, Limits(requests=(2.0, 1.0), tokens=None))
    assert budget.active
    # Requests 1 and 2 were sent after it: nothing is left until request 0 leaves the window,
    # one window after it was sent (and a margin for the two clocks).
    guard = max(0.05 * 1.0, GUARD_MIN)
    assert budget.wait(0.25, 10.0) == pytest.approx(1.0 + guard - 0.25)
    budget.counted(2, None)  # request 2 was refused: it does not count
    assert budget.wait(0.25, 10.0) == 0.0
    budget.sent(0.26, 10.0)
    assert budget.wait(0.3, 10.0) == pytest.approx(1.0 + guard - 0.3)
    assert budget.wait(1.0 + guard, 10.0) == 0.0  # request 0 has left: one more fits


def test_a_tokens_limit_waits_for_enough_tokens_to_leave_and_never_past_the_reset():
    budget = HeaderBudget()
    for when, tokens in ((0.0, 100.0), (0.5, 300.0), (0.9, 50.0)):
        budget.sent(when, tokens)
    budget.learn(2, Limits(requests=None, tokens=(20.0, 2.0)))  # the newest reply: 20 left
    guard = max(0.05 * 2.0, GUARD_MIN)
    assert budget.wait(1.0, 20.0) == 0.0
    # 200 tokens: request 0 leaving (100) is not enough, request 1 leaving (300) is.
    assert budget.wait(1.0, 200.0) == pytest.approx(0.5 + 2.0 + guard - 1.0)
    # More than the log can ever free: until the limit is whole again (the reply's reset).
    assert budget.wait(1.0, 10_000.0) == pytest.approx(0.9 + 2.0 + guard - 1.0)
    budget.counted(1, 30.0)  # the server counted 30, not 300
    assert budget.wait(1.0, 200.0) == pytest.approx(0.9 + 2.0 + guard - 1.0)


def test_an_older_reply_does_not_replace_a_fresher_one():
    budget = HeaderBudget()
    for when in (0.0, 0.1):
        budget.sent(when, 1.0)
    budget.learn(1, Limits(requests=(0.0, 1.0), tokens=None))
    budget.learn(0, Limits(requests=(5.0, 1.0), tokens=None))  # arrived late: stale
    assert budget.wait(0.2, 1.0) > 0


def refilling_limit(capacity: float, refill: float, latency: float, concurrency: int,
                    seconds: float, step: float = 0.001) -> tuple[int, int]:  # fmt: skip
    """A limit that refills evenly (a token bucket, as OpenAI describes its own: the reset is
    the time until it is full again) and a client sending whenever the budget allows, both on
    a clock stepped by hand; (accepted, refused)."""
    budget = HeaderBudget()
    level, last, now = capacity, 0.0, 0.0
    flight: list[tuple[float, int, bool, float, float]] = []
    accepted = refused = 0
    while now < seconds:
        for reply in [reply for reply in flight if reply[0] <= now]:
            flight.remove(reply)
            _, number, taken, remaining, reset = reply
            if not taken:
                budget.counted(number, None)
            budget.learn(number, Limits(requests=(remaining, reset), tokens=None))
        while len(flight) < concurrency and budget.wait(now, 0.0) == 0.0:
            number = budget.sent(now, 0.0)
            level, last = min(capacity, level + (now - last) * refill), now
            taken = level >= 1
            level -= taken
            accepted += taken
            refused += not taken
            reset = (capacity - level) / refill
            flight.append((now + latency, number, taken, float(int(level)), reset))
        now += step
    return accepted, refused


def test_a_limit_that_refills_evenly_is_kept_to_as_well():
    # 60 requests at most, refilled at 30 a second; 8 in flight at 0.1 s could send 80.
    accepted, refused = refilling_limit(60, 30, latency=0.1, concurrency=8, seconds=20)
    allowed = 60 + 30 * 20
    assert accepted >= 0.9 * allowed, f"{accepted} of {allowed}"
    assert refused <= 0.02 * (accepted + refused), f"{refused} refused"


@pytest.mark.parametrize(
    "reset", ["99999h", "1764633600", "1e300", "86400", "0s", "0", "1.5s", "2m59.56s", "-3s"]
)
def test_an_exhausted_limit_never_holds_a_request_past_the_longest_reset(reset):
    # Nothing left, and a reset of hours, a Unix time, nonsense or nothing at all.
    headers = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": reset,
               "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": reset}  # fmt: skip
    budget = HeaderBudget()
    budget.sent(0.0, 10.0)
    budget.learn(0, Limits.read(headers))
    wait = budget.wait(0.0, 10.0)
    assert 0.0 <= wait <= MAX_RESET * 1.05 + GUARD_MIN
    assert budget.wait(MAX_RESET * 1.05 + GUARD_MIN, 10.0) == 0.0  # then it goes


@pytest.mark.parametrize(
    "remaining", ["-1", "nan", "inf", "1e400", "lots", "", "3.5", "0", "999999999999"]
)
def test_odd_remaining_counts_are_read_or_ignored_never_raised(remaining):
    limits = Limits.read({"x-ratelimit-remaining-requests": remaining,
                          "x-ratelimit-reset-requests": "1s"})  # fmt: skip
    budget = HeaderBudget()
    budget.sent(0.0, 1.0)
    budget.learn(0, limits)
    assert 0.0 <= budget.wait(0.0, 1.0) <= 1.0 + GUARD_MIN + 0.05
