"""An answer with thousands of boxes: scoring takes the first MAX_PRED_BOXES, says so for that
sample (one warning line, a count, ``boxes_given``), and scores the rest of the run as usual."""

from __future__ import annotations

import json
import random

import pytest

from gavel.benchmarks.gavel.data import MAX_BOXES
from gavel.benchmarks.gavel.scoring import MAX_PRED_BOXES, GavelSettings, evaluate_files
from gavel.errors import DataError
from gavel.matching import match_one

GIVEN = 8000
GOLD = [(100.0, 100.0, 400.0, 300.0), (500.0, 500.0, 700.0, 650.0)]  # x1, y1, x2, y2


def spray(n: int) -> list[list[int]]:
    """``n`` boxes all over a 1000 x 800 image, the first ones near the gold."""
    rng = random.Random(3)
    boxes = [[110, 90, 390, 310], [520, 480, 690, 660]]
    while len(boxes) < n:
        x, y = rng.randint(0, 900), rng.randint(0, 700)
        boxes.append([x, y, x + rng.randint(5, 100), y + rng.randint(5, 100)])
    return boxes


def write(folder, where: str, boxes: list[list[int]]):
    gold = folder / "gold.jsonl"
    rows = [
        {"id": "crowd", "image": "a.jpg", "caption": "Three birds.", "hallucinated": True,
         "category": "Qty", "boxes": [[x1, y1, x2 - x1, y2 - y1] for x1, y1, x2, y2 in GOLD],
         "width": 1000, "height": 800},
        {"id": "plain", "image": "b.jpg", "caption": "A red car.", "hallucinated": True,
         "category": "Color", "boxes": [[10, 10, 90, 90]], "width": 1000, "height": 800},
    ]  # fmt: skip
    gold.write_text("".join(json.dumps(row) + "\n" for row in rows))
    answer = {"hallucination": True, "explanation": "Far more birds.", "bbox_2d": boxes}
    crowd = (
        {"id": "crowd", "response": "yes", "hallucinated": True, "explanation": "x", "boxes": boxes}
        if where == "field"
        else {"id": "crowd", "response": "```json\n" + json.dumps(answer) + "\n```"}
    )
    plain = {"id": "plain", "response": json.dumps({"hallucination": True, "explanation": "e",
                                                    "bbox_2d": [[10, 10, 100, 100]]})}  # fmt: skip
    predictions = folder / "pred.jsonl"
    predictions.write_text(json.dumps(crowd) + "\n" + json.dumps(plain) + "\n")
    return gold, predictions


@pytest.mark.parametrize("match", ["union", "hungarian"])
@pytest.mark.parametrize("where", ["field", "text"])
def test_thousands_of_boxes_are_cut_to_the_cap_and_named(tmp_path, where, match):
    boxes = spray(GIVEN)
    gold, predictions = write(tmp_path, where, boxes)
    settings = GavelSettings(match=match, box_format="pixel", resamples=0)
    result, scores = evaluate_files(gold, predictions, settings)
    crowd, plain = scores
    assert crowd.n_pred_boxes == MAX_PRED_BOXES and crowd.boxes_given == GIVEN
    assert [list(b) for b in crowd.pred_boxes] == boxes[:MAX_PRED_BOXES]
    # The documented rule: the sample scores exactly as its first MAX_PRED_BOXES boxes do.
    first = [tuple(map(float, b)) for b in boxes[:MAX_PRED_BOXES]]
    assert crowd.iou == match_one(match, first, GOLD)
    assert plain.boxes_given is None and plain.iou == 1.0  # gold 10,10 + 90x90, the same box
    assert result.metrics["boxes"]["capped"] == 1
    (warning,) = [w for w in result.warnings if "boxes" in w and "first" in w]
    assert "'crowd'" in warning and "'plain'" not in warning
    assert f"more than {MAX_PRED_BOXES} boxes" in warning


def test_an_answer_at_the_cap_is_scored_whole(tmp_path):
    boxes = spray(MAX_PRED_BOXES)
    gold, predictions = write(tmp_path, "text", boxes)
    result, scores = evaluate_files(gold, predictions, GavelSettings(box_format="pixel"))
    assert scores[0].n_pred_boxes == MAX_PRED_BOXES and scores[0].boxes_given is None
    assert result.metrics["boxes"]["capped"] == 0
    assert not [w for w in result.warnings if "first" in w]


def test_the_command_line_warns_once_naming_the_sample(tmp_path, gavel_main):
    gold, predictions = write(tmp_path, "field", spray(GIVEN))
    out = tmp_path / "run" / "results.json"
    done = gavel_main("score", "--data", str(gold), "--predictions", str(predictions),
                      "--box-format", "pixel", "--match", "hungarian", "--bootstrap", "0",
                      "--out", str(out))  # fmt: skip
    assert done.code == 0, done.err
    capped = [line for line in done.err.splitlines() if "boxes" in line and "first" in line]
    assert len(capped) == 1 and capped[0].startswith("warning: ") and "'crowd'" in capped[0]
    first = json.loads(out.with_name("results.scores.jsonl").read_text().splitlines()[0])
    assert first["boxes_given"] == GIVEN and first["n_pred_boxes"] == MAX_PRED_BOXES


def test_a_sample_with_more_gold_boxes_than_the_limit_is_refused_naming_its_line(tmp_path):
    gold, predictions = write(tmp_path, "text", spray(3))
    rows = gold.read_text().splitlines()
    row = json.loads(rows[1])
    row["boxes"] = [[i % 900, 10, 5, 5] for i in range(MAX_BOXES + 1)]
    gold.write_text(rows[0] + "\n" + json.dumps(row) + "\n")
    with pytest.raises(DataError) as raised:
        evaluate_files(gold, predictions, GavelSettings(box_format="pixel"))
    assert raised.value.line == 2 and raised.value.field == "boxes"
    assert f"at most {MAX_BOXES}" in str(raised.value)
