"""GAVEL lines -> chat examples: the evaluation prompt, and the answer with coordinate tokens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gavel.benchmarks.gavel.data import load_samples
from gavel.benchmarks.gavel.prompt import BOX_INSTRUCTIONS, build_requests
from gavel.errors import DataError
from gavel.models.presets import get_preset
from gavel.prompts import load_template
from gavel.train.coords import quantize
from gavel.train.sft_data import load_examples
from gavel.train.template import BUILTIN


def test_prompt_is_what_gavel_sft_evaluation_sends(mixed_data: Path):
    loaded = load_examples(mixed_data, BUILTIN["json"])
    samples, _ = load_samples(mixed_data)
    preset = get_preset("gavel-sft")
    requests = list(
        build_requests(samples, mixed_data.parent, load_template(preset.gavel_prompt),
                       preset.box_format)
    )  # fmt: skip
    assert [e.prompt for e in loaded.examples] == [r.prompt for r in requests]
    assert [e.image for e in loaded.examples] == [Path(r.images[0]) for r in requests]
    assert BOX_INSTRUCTIONS["coord-tokens"] in loaded.examples[0].prompt
    assert loaded.images == 16 and len(loaded.examples) == 32


def test_answer_carries_the_annotation_with_boxes_quantized(mixed_data: Path):
    lines = [json.loads(line) for line in mixed_data.read_text().splitlines()]
    loaded = load_examples(mixed_data, BUILTIN["json"])
    for line, example in zip(lines, loaded.examples, strict=True):
        answer = json.loads(example.response)
        assert answer["hallucination"] == line["hallucinated"]
        assert answer["explanation"] == line["explanation"]
        expected = []
        for x, y, w, h in line["boxes"]:  # x, y, w, h -> corners -> q(v, S)
            corners = (x, y, x + w, y + h)
            sizes = (line["width"], line["height"]) * 2
            expected.append(
                "".join(f"<p{quantize(v, s)}>" for v, s in zip(corners, sizes, strict=True))
            )
        assert answer["boxes"] == expected
    assert any(json.loads(e.response)["boxes"] for e in loaded.examples)
    messages = loaded.examples[1].messages()
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[0]["content"][0] == {"type": "image"}


def test_missing_image_stops_before_training(tmp_path: Path, mixed_data: Path):
    line = json.loads(mixed_data.read_text().splitlines()[0])
    line["image"] = "images/nowhere.png"
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps(line) + "\n")
    with pytest.raises(DataError, match="not found"):
        load_examples(path, BUILTIN["json"])


def test_held_out_samples_are_never_trained_on(tmp_path: Path, mixed_data: Path):
    lines = [json.loads(line) for line in mixed_data.read_text().splitlines()]
    lines[3]["split"] = "test"
    lines[5]["split"] = "val"
    path = mixed_data.parent / "with_held_out.jsonl"  # beside the images the lines name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(DataError, match=r"1 marked split 'test', 1 marked split 'val'"):
        load_examples(path, BUILTIN["json"])
