"""Prices: the flags' unit (USD per million tokens) and the dated built-in table."""

from __future__ import annotations

import pytest

from gavel.cost.prices import TABLE_DATE, Price, built_in_price, parse_price, resolve_price
from gavel.errors import ConfigError


def test_a_price_is_per_million_tokens():
    price = parse_price("2.5,10", "--price")
    assert price == Price(2.5, 10.0, source="--price")
    assert price.cost(1_000_000, 0) == pytest.approx(2.5)
    assert price.cost(200_000, 50_000) == pytest.approx(0.5 + 0.5)
    assert price.per_thousand() == pytest.approx((0.0025, 0.01))


@pytest.mark.parametrize("text", ["2.5", "a,b", "1,2,3", "nan,1", "-1,2", "inf,1"])
def test_a_bad_price_names_its_flag(text):
    with pytest.raises(ConfigError, match="--judge-price"):
        parse_price(text, "--judge-price")


def test_the_table_matches_the_longest_name_and_says_its_date():
    mini = built_in_price("gpt-4o-mini-2024-07-18")
    assert (mini.input, mini.output) == (0.15, 0.60)
    full = built_in_price("openai/gpt-4o-2024-08-06")
    assert (full.input, full.output) == (2.50, 10.0)
    assert full.approximate and TABLE_DATE in full.source and "gpt-4o" in full.source
    assert built_in_price("gpt-4o2") is None  # a prefix must end at a dash
    assert built_in_price("my-local-model") is None


def test_batch_requests_are_priced_at_the_providers_batch_discount():
    batch = built_in_price("gpt-4o", batch=True)
    assert (batch.input, batch.output) == (1.25, 5.0) and "batch price: 50% off" in batch.source
    claude = built_in_price("claude-sonnet-4-20250514", batch=True)
    assert (claude.input, claude.output) == (1.5, 7.5)
    # A price given is the price of what is sent: never discounted again.
    assert resolve_price("gpt-4o", "2,8", "--price", batch=True) == Price(2, 8, "--price")
