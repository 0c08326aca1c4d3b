"""The error record in scenes.jsonl: present for every sample, and true to the scene."""

from __future__ import annotations

import json
import re

import pytest

from gavel.synth.gavel_set import generate_gavel
from gavel.synth.vocabulary import WORD_NUMBERS, place_phrase

#: What the image shows for each category, read from the target object of the scene.
SHOWN = {
    "Color": lambda o: o["color"],
    "Obj": lambda o: o["kind"],
    "Size": lambda o: o["size"],
    "Attr": lambda o: o["pattern"],
    "State": lambda o: "solid" if o["state"] == "filled" else "outlined",
    "Loc": lambda o: place_phrase(o["row"], o["column"]),
}


@pytest.fixture(scope="module")
def synth_set(tmp_path_factory):
    out = tmp_path_factory.mktemp("errors")
    generate_gavel(out, 32, seed=21, difficulty="medium", clean_share=0.1)
    rows = [json.loads(line) for line in (out / "gavel.jsonl").read_text().splitlines()]
    scenes = [json.loads(line) for line in (out / "scenes.jsonl").read_text().splitlines()]
    return rows, scenes


def whole(word: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text, re.IGNORECASE) is not None


def test_every_scene_record_has_an_error_entry_and_gavel_jsonl_has_none(synth_set):
    rows, scenes = synth_set
    assert [r["id"] for r in rows] == [s["id"] for s in scenes]
    for row, scene in zip(rows, scenes, strict=True):
        assert "error" not in row
        if row["category"] is None:
            assert scene["error"] is None
        else:
            assert set(scene["error"]) == {"category", "claim", "truth"}
            assert scene["error"]["category"] == row["category"]


def test_claim_and_truth_are_what_the_caption_says_and_the_scene_shows(synth_set):
    rows, scenes = synth_set
    seen = set()
    for row, scene in zip(rows, scenes, strict=True):
        error = scene["error"]
        if error is None:
            continue
        claim, truth, category = error["claim"], error["truth"], error["category"]
        seen.add(category)
        assert claim != truth
        assert whole(claim, row["caption"]), row
        assert whole(claim, row["explanation"]) and whole(truth, row["explanation"]), row
        gold = [[x, y, x + w, y + h] for x, y, w, h in row["boxes"]]
        targets = [
            o for o in scene["objects"] if any(o["box"] == pytest.approx(g, abs=0.01) for g in gold)
        ]
        if category == "Qty":
            assert len(targets) == WORD_NUMBERS[truth] != WORD_NUMBERS[claim]
            continue
        (target,) = targets
        assert SHOWN[category](target) == truth, (row, target)
        assert SHOWN[category](target) != claim
    assert seen == {"Obj", "Color", "Qty", "Loc", "Size", "Attr", "State"}
