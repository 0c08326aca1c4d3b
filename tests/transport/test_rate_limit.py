"""Token buckets and the token meter, checked with a clock the test moves by hand."""

from __future__ import annotations

import pytest

from gavel.transport.rate_limit import (
    CHARS_PER_TOKEN,
    IMAGE_TOKENS,
    PACE,
    TokenBucket,
    TokenMeter,
    text_and_images,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_paces_at_its_share_of_the_budget_and_starts_empty():
    clock = Clock()
    bucket = TokenBucket(600, clock=clock)  # 10 per second, paced at 9.5
    assert bucket.rate == pytest.approx(10 * PACE)
    assert bucket.wait_time() == 0.0  # not in debt: the first request goes at once
    bucket.take(1)
    assert bucket.wait_time() == pytest.approx(1 / 9.5)
    clock.now += 1 / 9.5
    assert bucket.wait_time() == pytest.approx(0.0, abs=1e-9)


def test_a_request_larger_than_the_bucket_goes_into_debt_and_is_paced():
    clock = Clock()
    bucket = TokenBucket(6000, pace=1.0, burst=50, clock=clock)  # 100 tokens/s, holds 50
    bucket.take(300)  # three seconds of budget at once: let through, not refused for ever
    assert bucket.level == pytest.approx(-300)
    assert bucket.wait_time() == pytest.approx(3.0)
    clock.now += 10  # idle: refills, but only up to the burst
    assert bucket.level <= 50 and bucket.wait_time() == 0.0
    assert bucket.level == pytest.approx(50)


def test_correcting_charges_the_difference_and_never_fills_above_the_burst():
    clock = Clock()
    bucket = TokenBucket(6000, pace=1.0, burst=10, clock=clock)
    bucket.take(100)
    bucket.correct(charged=100, actual=160)  # the server counted more
    assert bucket.level == pytest.approx(-160)
    bucket.correct(charged=160, actual=40)  # ... or less: the rest comes back
    assert bucket.level == pytest.approx(-40)
    bucket.give_back(1000)
    assert bucket.level == pytest.approx(10)


def test_a_budget_must_be_positive():
    with pytest.raises(ValueError):
        TokenBucket(0)


def body(*parts, max_tokens=None, system=None):
    messages = [
        {
            "role": "user",
            "content": list(parts)
            if len(parts) != 1 or not isinstance(parts[0], str)
            else parts[0],
        }
    ]
    if system is not None:
        messages.insert(0, {"role": "system", "content": system})
    request = {"model": "m", "messages": messages}
    if max_tokens is not None:
        request["max_tokens"] = max_tokens
    return request


def image():
    return {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}


def test_text_and_images_counts_every_message_and_part():
    request = body(image(), image(), {"type": "text", "text": "x" * 40}, system="y" * 12)
    assert text_and_images(request) == (52, 2)
    assert text_and_images(body("plain string content")) == (20, 0)


def test_the_meter_charges_max_tokens_until_replies_show_the_usual_length():
    meter = TokenMeter()
    request = body(image(), {"type": "text", "text": "x" * 400}, max_tokens=512)
    prompt, charged = meter.charge(request)
    assert prompt == 400 / CHARS_PER_TOKEN + IMAGE_TOKENS
    assert charged == prompt + 512
    # The server counted 300 prompt tokens and a 20-token answer.
    assert meter.learn(prompt, {"prompt_tokens": 300, "completion_tokens": 20}) == 320
    assert meter.charge(request)[1] == pytest.approx(300 + 20)
    # Later replies move the averages a part of the way.
    meter.learn(prompt, {"prompt_tokens": 300, "completion_tokens": 70})
    assert 20 < meter.completion < 70
    assert meter.learn(prompt, {}) is None  # no usage reported: nothing learned
