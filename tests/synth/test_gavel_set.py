"""The synthetic GAVEL set: deterministic, complete, and with gold that the scene confirms."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from gavel.benchmarks.gavel.data import load_samples
from gavel.synth.gavel_set import category_plan, generate_gavel


def digest(folder) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def medium_set(tmp_path_factory):
    out = tmp_path_factory.mktemp("synth")
    generate_gavel(out, 40, seed=11, difficulty="medium", clean_share=0.1)
    return out


def test_same_arguments_give_byte_identical_files(tmp_path):
    generate_gavel(tmp_path / "a", 6, seed=5, difficulty="hard")
    generate_gavel(tmp_path / "b", 6, seed=5, difficulty="hard")
    assert digest(tmp_path / "a") == digest(tmp_path / "b")
    generate_gavel(tmp_path / "c", 6, seed=6, difficulty="hard")
    assert digest(tmp_path / "a") != digest(tmp_path / "c")


def test_every_category_and_clean_captions_are_produced(medium_set):
    rows = [json.loads(line) for line in (medium_set / "gavel.jsonl").read_text().splitlines()]
    categories = {r["category"] for r in rows}
    assert categories == {None, "Obj", "Color", "Qty", "Loc", "Size", "Attr", "State"}
    assert sum(r["category"] is None for r in rows) == 4  # 10% of 40
    qty = [r for r in rows if r["category"] == "Qty"]
    assert all(len(r["boxes"]) >= 2 for r in qty)  # counting errors carry one box per object


def test_the_set_passes_validation(medium_set):
    samples, loader = load_samples(medium_set / "gavel.jsonl")
    assert len(samples) == 40
    assert loader.report.clipped_boxes == 0


def test_category_plan_balances_and_spreads():
    plan = category_plan(100, 0.07, None)
    assert plan.count("clean") == 7
    counts = {c: plan.count(c) for c in set(plan) - {"clean"}}
    assert max(counts.values()) - min(counts.values()) <= 1
    weighted = category_plan(30, 0.0, {"Qty": 2.0, "Color": 1.0})
    assert (weighted.count("Qty"), weighted.count("Color")) == (20, 10)


# --- an independent reading of each caption against the scene description ------------------

PLACE = {
    "in the top left": ("top", "left"), "at the top": ("top", "center"),
    "in the top right": ("top", "right"), "on the left": ("middle", "left"),
    "in the center": ("middle", "center"), "on the right": ("middle", "right"),
    "in the bottom left": ("bottom", "left"), "at the bottom": ("bottom", "center"),
    "in the bottom right": ("bottom", "right"),
}  # fmt: skip
KINDS = ("circle", "square", "triangle", "star", "cross")
NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def wrong_claims(caption: str, objects: list[dict]) -> list[tuple[str, list]]:
    """Every (category, boxes) that a careful reader of the scene description would flag."""
    found = []
    for clause in re.split(r", and |, ", caption.rstrip(".").lower()):
        if m := re.match(r"there (?:is|are) (\w+) (\w+) (\w+)$", clause):
            number, color, noun = m.groups()
            kind = next(k for k in (noun, noun[:-1], noun[:-2]) if k in KINDS)
            group = [o for o in objects if o["color"] == color and o["kind"] == kind]
            if len(group) != NUMBERS[number]:
                found.append(("Qty", [o["box"] for o in group]))
            continue
        m = re.match(r"an? (.+) is (.+)$", clause)
        words, place = m.group(1).split(), m.group(2)
        at = [o for o in objects if (o["row"], o["column"]) == PLACE[place]]
        if not at:
            found.append(
                (
                    "Loc",
                    [o["box"] for o in objects if o["color"] in words and o["kind"] == words[-1]],
                )
            )
            continue
        (obj,) = at
        if obj["kind"] != words[-1]:
            found.append(("Obj", [obj["box"]]))
        if obj["color"] not in words:
            found.append(("Color", [obj["box"]]))
        if ("small" in words and obj["size"] != "small") or (
            "large" in words and obj["size"] != "large"
        ):
            found.append(("Size", [obj["box"]]))
        if ("outlined" in words) != (obj["state"] == "outlined") and (
            "outlined" in words or "solid" in words
        ):
            found.append(("State", [obj["box"]]))
        said_pattern = [w for w in ("striped", "dotted", "plain") if w in words]
        if said_pattern and said_pattern[0] != obj["pattern"]:
            found.append(("Attr", [obj["box"]]))
    return found


def test_gold_agrees_with_an_independent_reading_of_the_scene(medium_set):
    rows = [json.loads(line) for line in (medium_set / "gavel.jsonl").read_text().splitlines()]
    scenes = {
        json.loads(line)["id"]: json.loads(line)
        for line in (medium_set / "scenes.jsonl").read_text().splitlines()
    }
    for row in rows:
        found = wrong_claims(row["caption"], scenes[row["id"]]["objects"])
        if row["category"] is None:
            assert found == [], row
            continue
        assert len(found) == 1, (row, found)  # exactly one injected error
        category, boxes = found[0]
        assert category == row["category"], row
        gold = [[x, y, x + w, y + h] for x, y, w, h in row["boxes"]]
        assert len(gold) == len(boxes)
        for g, b in zip(sorted(gold), sorted(boxes), strict=True):
            assert g == pytest.approx(b, abs=0.01)
