"""Synthetic DetailVerifyBench sets: official layout, long captions, tags exactly on the changes."""

from __future__ import annotations

import difflib
import hashlib
import json
import re

import pytest

from gavel.benchmarks.detailverify.data import read_samples
from gavel.synth.detailverify_set import generate_detailverify

OFFICIAL_CATEGORIES = {
    "Object Number Hallucination", "Object Color Hallucination", "Object Category Hallucination",
    "Object Shape Hallucination", "Object Material Hallucination", "Spatial Relation Hallucination",
    "Scene Hallucination", "Camera Hallucination", "OCR Hallucination", "Image Style Hallucination",
    "Character Identification Hallucination", "Counterfactual Hallucination", "Other Hallucination",
}  # fmt: skip
FIELDS = {"image", "filename", "category", "Pre-recognition", "GT_description", "Modify", "prompt",
          "modelname", "description_tag", "hallucination_labels"}  # fmt: skip


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    out = tmp_path_factory.mktemp("dvb")
    path = generate_detailverify(out, 20, seed=7, difficulty="medium")
    return out, [json.loads(line) for line in path.read_text().splitlines()]


def test_same_arguments_give_byte_identical_files(tmp_path):
    for name in ("a", "b"):
        generate_detailverify(tmp_path / name, 3, seed=2, difficulty="hard")
    for file in ("real_test.jsonl", "images/dvs-00001.png"):
        first, second = ((tmp_path / n / file).read_bytes() for n in ("a", "b"))
        assert hashlib.sha256(first).digest() == hashlib.sha256(second).digest()


def test_official_layout_long_captions_and_clean_share(records):
    folder, rows = records
    assert all(set(r) == FIELDS for r in rows)
    assert all(len(r["GT_description"].split()) >= 150 for r in rows)
    assert sum(r["Modify"] == "No" for r in rows) == 4  # 20% of 20
    for r in rows:
        assert (r["Modify"] == "Yes") == bool(r["hallucination_labels"])
        assert all(label["labels"][0] in OFFICIAL_CATEGORIES for label in r["hallucination_labels"])
        assert (folder / r["image"]).is_file()
    samples, _ = read_samples(folder / "real_test.jsonl")
    assert len(samples) == 20


def test_tags_sit_exactly_on_the_words_that_differ_from_the_truth(records):
    """Diffing the told caption against GT_description: every changed word is tagged, and every
    tagged span contains a change."""
    _, rows = records
    for r in rows:
        told = r["description_tag"]
        spans = re.findall(r"<Hallucination>(.*?)</Hallucination>", told)
        assert [label["text"] for label in r["hallucination_labels"]] == spans
        plain, owner = "", []  # owner: index of the tagged span each character is in, or None
        for index, piece in enumerate(re.split(r"</?Hallucination>", told)):
            plain += piece
            owner += [index // 2 if index % 2 else None] * len(piece)
        words, span_of = [], []
        for match in re.finditer(r"\S+", plain):
            inside = {owner[i] for i in range(match.start(), match.end())} - {None}
            words.append(match.group())
            span_of.append(inside.pop() if inside else None)
        tagged = [s is not None for s in span_of]
        truth = r["GT_description"].split()
        matcher = difflib.SequenceMatcher(a=words, b=truth, autojunk=False)
        changed = {
            i for op, i1, i2, _, _ in matcher.get_opcodes() if op != "equal" for i in range(i1, i2)
        }
        assert all(tagged[i] for i in changed), r["filename"]
        assert {span_of[i] for i in changed} == set(range(len(spans))), r["filename"]
