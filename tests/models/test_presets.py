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


# --- every family's documented example, read with its preset ------------------------------

#: (preset, an answer in the family's documented form, image geometry, boxes in pixels). The
#: answers are written here after each family's model card, README or maintainer's word.
DOCUMENTED = [
    # MiniCPM-V maintainers: <ref>name</ref><box>xmin ymin xmax ymax</box>, 0-1000.
    ("minicpm-v", "<ref>book</ref><box>120 80 430 920</box>", (2000, 1000),
     [(240, 80, 860, 920)]),
    # CogVLM README: [[x1, y1, x2, y2]] relative x 1000, zero-padded to three digits.
    ("cogvlm", "The cat is at [[086,540,400,760]].", (1000, 500), [(86, 270, 400, 380)]),
    ("cogvlm", "Grounded Operation:[combobox] Search -> TYPE: CogVLM at the box "
     "[[212,498,787,564]]", (1000, 1000), [(212, 498, 787, 564)]),
    # GLM-4.5V / 4.6V: boxes between box tokens, 0-1000.
    ("glm-4.5v", "The second bottle is <|begin_of_box|>[[94,598,177,991]]<|end_of_box|>.",
     (2000, 1000), [(188, 598, 354, 991)]),
    # Qwen-VL (v1) README: corner pairs in 0-1000.
    ("qwen-vl", "<ref> Woman</ref><box>(451,379),(731,806)</box>", (1000, 1000),
     [(451, 379, 731, 806)]),
    # Kimi-VL: bbox_2d in 0-1.
    ("kimi-vl", '{"bbox_2d": [0.28, 0.5, 0.52, 0.7]}', (1000, 500), [(280, 250, 520, 350)]),
    # DeepSeek-VL2: 0-999.
    ("deepseek-vl2", "<|ref|>car<|/ref|><|det|>[[0, 999, 999, 0]]<|/det|>", (999, 999),
     [(0, 0, 999, 999)]),
    # Pixel APIs, asked for [x1, y1, x2, y2] in pixels as JSON.
    ("claude", '{"boxes": [[10, 20, 110, 220]]}', (640, 480), [(10, 20, 110, 220)]),
    ("gpt-4.1", '[{"label": "cup", "bbox": [10, 20, 110, 220]}]', (640, 480),
     [(10, 20, 110, 220)]),
    ("gpt-5", '{"bounding_boxes": [[10, 20, 110, 220]]}', (640, 480), [(10, 20, 110, 220)]),
    ("llama-4", '{"boxes": [[10, 20, 110, 220]]}', (640, 480), [(10, 20, 110, 220)]),
    ("pixtral", '{"boxes": [[10, 20, 110, 220]]}', (640, 480), [(10, 20, 110, 220)]),
    ("phi-4-multimodal", '{"boxes": [[10, 20, 110, 220]]}', (640, 480), [(10, 20, 110, 220)]),
    # PaliGemma (1 and 2) model cards: y_min x_min y_max x_max in 1024 bins, label after.
    ("paligemma", "<loc0256><loc0512><loc0768><loc1000> cat", (1024, 512),
     [(512, 128, 1000, 384)]),
    ("paligemma-2", "<loc0000><loc0256><loc0512><loc0768> dog ; <loc0512><loc0000><loc1023>"
     "<loc0512> cat", (2048, 1024), [(512, 0, 1536, 512), (0, 512, 1024, 1023)]),
    # DeepSeek-OCR's script: v / 999 * size.
    ("deepseek-ocr", "<|ref|>text<|/ref|><|det|>[[0, 333, 999, 666]]<|/det|>\nHello", (1998, 999),
     [(0, 333, 1998, 666)]),
    # Qwen2-VL and OS-Atlas READMEs: corner pairs in 0-1000.
    ("qwen2-vl", "<|object_ref_start|>dog<|object_ref_end|><|box_start|>(100,200),(300,400)"
     "<|box_end|>", (2000, 1000), [(200, 200, 600, 400)]),
    ("os-atlas", "<|box_start|>(576,12),(592,42)<|box_end|><|im_end|>", (1000, 500),
     [(576, 6, 592, 21)]),
    # ASMv2's script: BOX_SCALE 999, exact at 999 x 999.
    ("asmv2", "a <ref>bus</ref><box>[[290, 202, 835, 851]]</box>", (999, 999),
     [(290, 202, 835, 851)]),
    # InternVL2 / 2.5 model cards: 0-1000, in tags or (asked loosely) labelled in prose.
    ("internvl2", "<ref>cat</ref><box>[[100, 200, 300, 400]]</box>", (2000, 1000),
     [(200, 200, 600, 400)]),
    ("internvl2.5", "at (x1: 100, y1: 200, x2: 300, y2: 400).", (2000, 1000),
     [(200, 200, 600, 400)]),
    # MiniGPT-v2's eval_ref.py: {<x1><y1><x2><y2>} / 100 * size.
    ("minigpt-v2", "<p>a man</p> {<10><20><50><80>}", (2000, 1000), [(200, 200, 1000, 800)]),
    # Shikra: 0-1 of the square-padded image; 1000 x 500 is padded to 1000 x 1000, 250 px on top.
    ("shikra", "a cat [0.100,0.300,0.500,0.700;0.600,0.250,0.900,0.750]", (1000, 500),
     [(100, 50, 500, 450), (600, 0, 900, 500)]),
    # Ferret's model_refcoco.py: v * size / 1000.
    ("ferret", "a dog [100, 200, 300, 400] .", (2000, 1000), [(200, 200, 600, 400)]),
    # Moondream detect: 0-1.
    ("moondream", '{"objects": [{"x_min": 0.1, "y_min": 0.2, "x_max": 0.3, "y_max": 0.4}]}',
     (1000, 500), [(100, 100, 300, 200)]),
    # Kosmos-2.5: pixels of the 1024 x 1024 input a 1000 x 1000 image is resized to.
    ("kosmos-2.5", "<bbox><x_256><y_512><x_512><y_1024></bbox>line", (1000, 1000),
     [(250, 500, 500, 1000)]),
]  # fmt: skip


@pytest.mark.parametrize(("name", "answer", "size", "expected"), DOCUMENTED)
def test_documented_examples_read_with_the_family_preset(name, answer, size, expected):
    from gavel.parsing import ImageGeometry, parse_boxes

    result = parse_boxes(answer, get_preset(name).box_format, ImageGeometry(*size))
    assert [pytest.approx(box) for box in expected] == result.boxes
    assert not result.unit_interval


def test_pixel_presets_scale_back_from_the_image_as_sent():
    # Claude saw a 1092 x 819 copy of a 2184 x 1638 photo.
    from gavel.parsing import ImageGeometry, parse_boxes

    preset = get_preset("claude")
    geometry = ImageGeometry(2184, 1638, sent_size=(1092, 819))
    result = parse_boxes("[[100, 50, 200, 150]]", preset.box_format, geometry)
    assert result.boxes == [pytest.approx((200, 100, 400, 300))]


def test_every_family_named_in_the_conventions_table_has_a_preset():
    assert set(preset_names()) >= {
        "gemini", "qwen-vl", "qwen2.5-vl", "qwen3-vl", "internvl3.5", "florence-2",
        "florence-2-ocr", "kosmos-2", "molmo", "deepseek-vl2", "kimi-vl", "llava-1.5", "gpt",
        "minicpm-v", "cogvlm", "glm-4.5v", "claude", "gpt-4.1", "gpt-5", "llama-4", "pixtral",
        "phi-4-multimodal",
    }  # fmt: skip


def test_the_data_format_page_lists_every_family_preset_and_convention():
    page = (Path(__file__).resolve().parents[2] / "docs" / "data-format.md").read_text()
    families = page.split("### Families, presets and what they really write")[1]
    for name in set(preset_names()) - {"generic", "gavel-sft"}:
        preset = get_preset(name)
        if preset.base is None:
            assert f"`{name}`" in families, name
        assert preset.source, name
    for name in convention_names():
        assert f"| `{name}` |" in page, name


def test_each_preset_example_reads_under_its_own_convention():
    from gavel.parsing import ImageGeometry, parse_boxes

    for name in preset_names():
        preset = get_preset(name)
        boxes = parse_boxes(preset.example, preset.box_format, ImageGeometry(1000, 800)).boxes
        # Molmo answers with points, which are no box.
        assert bool(boxes) is (name != "molmo"), name


# --- fine-tunes of a pixel family: BASE+TARGET ---------------------------------------------


def test_every_pixel_family_has_a_fine_tune_to_each_token_format():
    pixel = [n for n in preset_names()
             if get_preset(n).box_format in ("pixel", "resized-pixel") and "+" not in n]  # fmt: skip
    assert {"gpt", "gpt-4.1", "generic", "qwen2.5-vl", "claude"} <= set(pixel)
    for base in pixel:
        assert get_preset(f"{base}+paligemma").box_format == "loc1024-yx"
        assert get_preset(f"{base}+florence-2").box_format == "loc1000"


def test_a_fine_tune_keeps_the_base_images_and_prompt_and_reads_the_target_tokens():
    from gavel.parsing import ImageGeometry, parse_boxes

    tuned, base = get_preset("gpt+paligemma"), get_preset("gpt")
    assert (tuned.max_image_side, tuned.gavel_prompt, tuned.base) == (
        1024,
        base.gavel_prompt,
        "gpt",
    )
    # roboflow/notebooks' GPT-4o fine-tuned to PaliGemma's format, at 1024 x 1024.
    answer = "<loc0432><loc0121><loc0882><loc0300> 5 of hearts"
    boxes = parse_boxes(answer, tuned.box_format, ImageGeometry(1024, 1024)).boxes
    assert boxes == [pytest.approx((121, 432, 300, 882))]
    assert BOX_INSTRUCTIONS["loc1024-yx"] in prompt_for("gpt+paligemma")


def test_only_pixel_families_have_fine_tunes():
    for name in ("qwen3-vl+paligemma", "gemini+florence-2", "paligemma+florence-2"):
        with pytest.raises(ConfigError, match="unknown preset"):
            get_preset(name)
