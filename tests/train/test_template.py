"""Response templates: <BBX> per box, filled with coordinate tokens, read back by the scorer."""

from __future__ import annotations

import json

import pytest

from gavel.errors import ConfigError
from gavel.parsing import ImageGeometry, parse_boxes, parse_explanation, parse_verdict
from gavel.train.coords import box_tokens
from gavel.train.template import BUILTIN, ResponseTemplate, load_response_template

GEOMETRY = ImageGeometry(600, 400)
BOXES = [(325.0, 65.0, 425.0, 327.0), (10.0, 20.0, 110.0, 220.0)]


def test_json_template_places_one_placeholder_per_box_then_tokens():
    template = BUILTIN["json"]
    draft = template.with_placeholders(True, 'The "spoon" is on the right.', 2)
    assert draft == (
        '{"hallucination": true, "explanation": "The \\"spoon\\" is on the right.", '
        '"boxes": ["<BBX>", "<BBX>"]}'
    )
    tokens = [box_tokens(box, 600, 400) for box in BOXES]
    answer = template.render(True, 'The "spoon" is on the right.', tokens)
    assert "<BBX>" not in answer
    assert json.loads(answer)["boxes"] == tokens


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_builtin_templates_are_read_back_by_the_scorer(name):
    template = BUILTIN[name]
    tokens = [box_tokens(box, 600, 400) for box in BOXES]
    answer = template.render(True, "The spoon is on the right of the cup.", tokens)
    assert parse_verdict(answer) is True
    assert "spoon is on the right" in parse_explanation(answer)
    parsed = parse_boxes(answer, "coord-tokens", GEOMETRY)
    assert parsed.status == "ok" and len(parsed.boxes) == 2
    for got, want in zip(parsed.boxes, BOXES, strict=True):
        assert got == pytest.approx(want, abs=600 / 2048 + 1e-9)

    clean = template.render(False, "The caption matches the image.", [])
    assert parse_verdict(clean) is False
    assert parse_boxes(clean, "coord-tokens", GEOMETRY).boxes == []


def test_template_file_and_literal_fields(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({
        "text": "Verdict: {verdict}. {explanation} Regions: {boxes}",
        "verdict_true": "wrong", "verdict_false": "correct", "box": "[<BBX>]",
        "separator": " ", "no_boxes": "none",
    }))  # fmt: skip
    template = load_response_template(str(path))
    assert template.name == "mine"
    # A value holding a field name is not substituted again.
    assert template.render(True, "says {boxes}", ["<p1><p2><p3><p4>"]) == (
        "Verdict: wrong. says {boxes} Regions: [<p1><p2><p3><p4>]"
    )
    assert template.render(False, "fine", []) == "Verdict: correct. fine Regions: none"


def test_bad_templates_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="verdict"):
        ResponseTemplate("x", "{explanation} {boxes}")
    with pytest.raises(ConfigError, match="exactly once"):
        ResponseTemplate("x", "{verdict} {boxes}", box="<BBX><BBX>")
    with pytest.raises(ConfigError, match="json, plain"):
        load_response_template("nope")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"text": "{verdict} {boxes}", "colour": "red"}))
    with pytest.raises(ConfigError, match="unknown key"):
        load_response_template(str(bad))
    with pytest.raises(ValueError, match="placeholder"):
        BUILTIN["json"].render(True, "has <BBX> inside", [])
