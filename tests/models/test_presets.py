"""Presets declare a registered convention, and the GAVEL prompt asks for exactly that."""

from __future__ import annotations

from pathlib import Path

import pytest

from gavel.benchmarks.gavel.prompt import BOX_INSTRUCTIONS, build_requests
from gavel.errors import ConfigError
from gavel.models.presets import get_preset, preset_names
from gavel.parsing import convention_names
from gavel.prompts import load_template
from gavel.records import GavelSample

SAMPLE = GavelSample(
    id="s", image="a.png", caption="A red circle is in the top left.", hallucinated=False,
    width=100, height=100,
)  # fmt: skip


def prompt_for(preset_name: str) -> str:
    preset = get_preset(preset_name)
    template = load_template(preset.gavel_prompt)
    (request,) = build_requests([SAMPLE], Path("."), template, preset.box_format)
    return request.prompt


def test_every_family_of_the_paper_and_its_peers_has_a_preset():
    assert set(preset_names()) >= {
        "qwen2.5-vl", "qwen3-vl", "internvl3.5", "gpt", "gemini", "florence-2", "generic"
    }  # fmt: skip


@pytest.mark.parametrize("name", preset_names())
def test_each_preset_declares_a_convention_the_prompt_asks_for(name):
    preset = get_preset(name)
    assert preset.box_format in convention_names()
    prompt = prompt_for(name)
    assert 'Caption: "A red circle is in the top left."' in prompt
    assert BOX_INSTRUCTIONS[preset.box_format] in prompt


def test_gavel_prompt_snapshot_for_qwen3_vl():
    """The exact text sent; a change here changes every number, so it must be deliberate."""
    assert prompt_for("qwen3-vl") == (
        "You are checking whether a caption correctly describes an image.\n\n"
        'Caption: "A red circle is in the top left."\n\n'
        "Does the caption contain an error (a hallucination): an object, attribute, colour, "
        "count, position, size, state or action that does not match the image?\n"
        "Answer with a JSON object only:\n"
        '{"hallucination": true or false, "explanation": "one or two sentences: which claim is '
        'wrong and what the image shows instead", "boxes": [[x1, y1, x2, y2], ...]}\n'
        "Give the boxes of the image region(s) that show the error as [x1, y1, x2, y2] relative "
        "to the image size, from 0 to 1000. Use an empty list when there is no error.\n"
    )


def test_unknown_preset_is_a_clear_error():
    with pytest.raises(ConfigError, match="unknown preset 'llava'"):
        get_preset("llava")
