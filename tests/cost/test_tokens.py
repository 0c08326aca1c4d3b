"""Text token counters: a local tokenizer folder, and the labelled estimate."""

from __future__ import annotations

import re

import pytest

from gavel.cost.tokens import (
    REPLY_PRIMING,
    TOKENS_PER_MESSAGE,
    counter_for,
    estimate_counter,
    folder_counter,
)
from gavel.errors import ConfigError


def test_a_tokenizer_folder_counts_with_that_tokenizer(tokenizer_dir):
    from tokenizers import Tokenizer

    reference = Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))
    counter = folder_counter(tokenizer_dir)
    text = "A red cube sits left of the blue sphere."
    assert counter.exact and str(tokenizer_dir) in counter.method
    assert counter.count(text) == len(reference.encode(text, add_special_tokens=False).ids)
    both = counter.count("system words") + counter.count(text)
    assert counter.chat(["system words", text]) == both + 2 * TOKENS_PER_MESSAGE + REPLY_PRIMING


def test_without_a_tokenizer_the_count_says_it_is_an_estimate(monkeypatch, tmp_path):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # nothing cached: never a download
    counter = counter_for("gpt-4o", None)
    assert not counter.exact and "estimate" in counter.method
    assert counter.count("x" * 10) == 3  # ceil(10 / 4)
    assert estimate_counter().count("") == 0


def test_a_folder_without_a_tokenizer_is_named(tmp_path):
    with pytest.raises(ConfigError, match=re.escape(str(tmp_path / "missing"))):
        folder_counter(tmp_path / "missing")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "tokenizer.json").write_text("{not json")
    with pytest.raises(ConfigError, match=r"tokenizer\.json"):
        folder_counter(tmp_path / "bad")
