"""``gavel.api.listing``: what ``gavel list`` shows, as records."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from gavel.api.listing import EXAMPLE_SIZE, KINDS, registered


def test_the_built_in_benchmarks_models_and_judges_are_listed_first(gavel_main):
    entries = registered()
    benchmarks = [e.name for e in entries if e.kind == "benchmark" and e.source == "built-in"]
    assert benchmarks[:3] == ["gavel", "detailverify", "videohallucer"]
    assert [e.kind for e in entries][:1] == ["benchmark"]
    assert {e.kind for e in entries} == {"benchmark", "model", "judge", "preset", "convention"}
    assert all(e.description for e in entries if e.source == "built-in")
    done = gavel_main("list", "--format", "json")
    assert done.code == 0 and json.loads(done.out) == [
        json.loads(json.dumps(asdict(e))) for e in entries
    ]


def test_only_the_kinds_asked_for_are_listed():
    assert KINDS == ("benchmarks", "models", "judges", "presets", "conventions")
    assert {e.kind for e in registered(("judges",))} == {"judge"}


def test_each_preset_shows_its_convention_source_example_and_the_boxes_read_from_it():
    presets = {e.name: e for e in registered(("presets",))}
    qwen2 = presets["qwen2-vl"]
    assert (qwen2.convention, qwen2.source) == ("rel1000", "built-in")
    assert "Qwen2-VL README" in qwen2.rule_source
    assert "<|box_start|>(531,516),(581,596)<|box_end|>" in qwen2.example
    # 0-1000 of a 1000 x 800 image: x as written, y * 0.8.
    assert EXAMPLE_SIZE == (1000, 800)
    assert qwen2.example_boxes == [pytest.approx([531, 412.8, 581, 476.8])]
    assert presets["molmo"].example_boxes == []  # a point is no box
    assert presets["gpt+paligemma"].convention == "loc1024-yx"
    assert all(e.example and e.rule_source for e in presets.values())


def test_each_convention_shows_an_example_and_the_boxes_read_from_it():
    conventions = {e.name: e for e in registered(("conventions",))}
    assert set(conventions) >= {"pixel", "rel1000", "loc1024-yx", "kosmos-2.5"}
    # PaliGemma: y1 x1 y2 x2 in 1024 bins; two boxes.
    paligemma = conventions["loc1024-yx"].example_boxes
    assert paligemma[0] == pytest.approx([596 / 1024 * 1000, 180 / 1024 * 800,
                                          961 / 1024 * 1000, 782 / 1024 * 800], abs=0.01)  # fmt: skip
    assert len(paligemma) == 2
    assert all(e.example_boxes for e in conventions.values())
