"""The defaults a run of a model takes when its settings leave them open."""

from __future__ import annotations

from pathlib import Path

from gavel.runner.cache import default_cache
from gavel.runner.defaults import answer_cache_for, concurrency_for, is_remote


def test_remote_models_get_16_in_flight_and_the_users_cache_local_ones_neither():
    assert is_remote("openai:gpt-4o") and not is_remote("scene") and not is_remote("hf:x")
    assert concurrency_for("openai:gpt-4o", None) == 16
    assert concurrency_for("scene", None) == 1
    assert concurrency_for("scene", 3) == concurrency_for("openai:gpt-4o", 3) == 3
    assert answer_cache_for("openai:gpt-4o", None, no_cache=False) == default_cache()
    assert answer_cache_for("openai:gpt-4o", Path("c.sqlite"), False) == Path("c.sqlite")
    assert answer_cache_for("openai:gpt-4o", Path("c.sqlite"), no_cache=True) is None
    assert answer_cache_for("scene", Path("c.sqlite"), no_cache=False) is None
