"""ScoreSettings built directly (not through ``gavel.score``) checks the benchmark's own
settings as ``gavel score``'s flags check them."""

from __future__ import annotations

import pytest

from gavel.errors import ConfigError
from gavel.scoring.settings import ScoreSettings


def test_the_benchmarks_own_settings_are_checked():
    made = ScoreSettings(data="d.jsonl", predictions="p.jsonl", options={"match": "max"})
    assert made.options == {"match": "max"}
    with pytest.raises(ConfigError, match=r"'mode' is not a score setting of gavel .*match"):
        ScoreSettings(data="d.jsonl", predictions="p.jsonl", options={"mode": "strict"})
    with pytest.raises(ConfigError, match="'--match'"):
        ScoreSettings(data="d.jsonl", predictions="p.jsonl", options={"match": "nope"})
    with pytest.raises(ConfigError, match="'--benchmark': 'nope' is not one of"):
        ScoreSettings(data="d.jsonl", predictions="p.jsonl", benchmark="nope")
