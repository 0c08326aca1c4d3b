"""Which failures are tried again, and how long a server's own words make a retry wait."""

from __future__ import annotations

import pytest
from multidict import CIMultiDict

from gavel.transport.retry import RetryPolicy, parse_retry_after, retry_after


class _Reply:
    def __init__(self, headers: dict[str, str]):
        self.headers = CIMultiDict(headers)  # header names are case-insensitive, as in HTTP


class _Refused(Exception):
    status_code = 429

    def __init__(self, headers: dict[str, str]):
        super().__init__("429")
        self.response = _Reply(headers)


def test_seconds_milliseconds_and_dates_are_waits() -> None:
    assert retry_after(_Refused({"Retry-After": "3"})) == 3.0
    assert retry_after(_Refused({"retry-after-ms": "250", "Retry-After": "9"})) == 0.25
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0) == 10.0
    assert parse_retry_after("-5") == 0.0  # a wait in the past is no wait


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "Infinity", "soon", ""])
def test_a_value_that_is_no_finite_number_or_date_is_no_wait(value: str) -> None:
    assert parse_retry_after(value) is None
    assert retry_after(_Refused({"Retry-After": value})) is None
    assert retry_after(_Refused({"retry-after-ms": value})) is None
    # The policy's own backoff applies: a finite wait within its bounds.
    wait = RetryPolicy(base_delay=0.5, max_delay=30).delay(0, retry_after(_Refused({})))
    assert 0.0 <= wait <= 0.5


def test_milliseconds_that_are_no_number_fall_back_to_seconds() -> None:
    assert retry_after(_Refused({"retry-after-ms": "nan", "Retry-After": "2"})) == 2.0
