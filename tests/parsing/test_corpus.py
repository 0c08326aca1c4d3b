"""Real replies of twelve VLM families, read with each family's preset.

The corpus (``real-outputs/corpus.jsonl`` in the shared data) quotes replies verbatim from public
repositories, with the source's own reading where it gives one. Every reply must be read without
an exception, and every reply whose source reads it must come out as the source reads it: the
same number of boxes, matched one to one within 1 px, and the same yes/no verdict.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gavel.models.presets import get_preset
from gavel.parsing import ImageGeometry, parse_boxes
from gavel.parsing.yesno import official_label, strict_yes_no

#: The preset each family of the corpus declares (the family's documented convention).
FAMILY_PRESET = {
    "gemini": "gemini",
    "qwen-vl": "qwen-vl",
    "qwen2.5-vl": "qwen2.5-vl",
    "qwen3-vl": "qwen3-vl",
    "internvl": "internvl3.5",
    "florence-2": "florence-2",
    "kosmos-2": "kosmos-2",
    "molmo": "molmo",
    "deepseek-vl2": "deepseek-vl2",
    "kimi-vl": "kimi-vl",
    "llava-1.5": "llava-1.5",
    "gpt-4v": "gpt",
}
#: Florence-2's output depends on the task token it was asked with: <OCR_WITH_REGION> answers
#: with quadrilaterals, declared by their own preset.
TASK_PRESET = {("florence-2", "<OCR_WITH_REGION>"): "florence-2-ocr"}


@pytest.fixture
def corpus(shared_data: Path) -> list[dict[str, Any]]:
    path = shared_data / "real-outputs" / "corpus.jsonl"
    if not path.is_file():
        pytest.skip(f"real VLM replies not found at ../shared/data/real-outputs ({path})")
    return read_corpus(path)


def read_corpus(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def preset_for(row: dict[str, Any]) -> str:
    return TASK_PRESET.get((row["family"], row["task"]), FAMILY_PRESET[row["family"]])


def geometry(row: dict[str, Any]) -> ImageGeometry | None:
    image = row["image"]
    if not image.get("width") or not image.get("height"):
        return None
    sizes = {k: tuple(image[k]) if image.get(k) else None for k in ("sent_size", "input_size")}
    return ImageGeometry(image["width"], image["height"], **sizes)


def read_boxes(row: dict[str, Any]) -> list[tuple[float, float, float, float]]:
    shape = geometry(row)
    assert shape is not None, row["id"]
    return parse_boxes(row["raw"], get_preset(preset_for(row)).box_format, shape).boxes


def same_boxes(read: list, expected: list, tolerance: float = 1.0) -> bool:
    """One to one, each coordinate within ``tolerance`` (greedy in the source's order)."""
    if len(read) != len(expected):
        return False
    left = list(read)
    for box in expected:
        match = next(
            (r for r in left if all(abs(a - b) <= tolerance for a, b in zip(r, box, strict=True))),
            None,
        )
        if match is None:
            return False
        left.remove(match)
    return True


def test_every_family_of_the_corpus_has_a_preset(corpus):
    assert {row["family"] for row in corpus} <= set(FAMILY_PRESET)


def test_no_reply_makes_a_reader_raise(corpus):
    for row in corpus:
        strict_yes_no(row["raw"])
        official_label(row["raw"])
        if geometry(row) is not None:
            read_boxes(row)


def test_every_reply_the_source_reads_is_read_the_same(corpus):
    read = [row for row in corpus if row["reference"]["kind"] != "none"]
    wrong = []
    for row in read:
        reference = row["reference"]
        if "verdict" in reference:
            got = {strict_yes_no(row["raw"]), official_label(row["raw"])}
            if got != {reference["verdict"]}:
                wrong.append(f"{row['id']}: {got} != {reference['verdict']}")
        elif not same_boxes(read_boxes(row), reference["boxes"]):
            wrong.append(f"{row['id']}: {read_boxes(row)} != {reference['boxes']}")
    assert len(read) == 73
    assert not wrong, "\n".join(wrong)
