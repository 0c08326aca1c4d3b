"""``gavel.api.listing``: what ``gavel list`` shows, as records."""

from __future__ import annotations

import json
from dataclasses import asdict

from gavel.api.listing import KINDS, registered


def test_the_built_in_benchmarks_models_and_judges_are_listed_first(gavel_main):
    entries = registered()
    benchmarks = [e.name for e in entries if e.kind == "benchmark" and e.source == "built-in"]
    assert benchmarks[:3] == ["gavel", "detailverify", "videohallucer"]
    assert {e.kind for e in entries} == {"benchmark", "model", "judge"}
    assert all(e.description for e in entries if e.source == "built-in")
    done = gavel_main("list", "--format", "json")
    assert done.code == 0 and json.loads(done.out) == [asdict(e) for e in entries]


def test_only_the_kinds_asked_for_are_listed():
    assert KINDS == ("benchmarks", "models", "judges")
    assert {e.kind for e in registered(("judges",))} == {"judge"}
