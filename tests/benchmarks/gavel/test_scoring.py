"""GAVEL scoring: outcomes, the rules for failures, policies, and the results layout."""

from __future__ import annotations

import json

import pytest

from gavel.benchmarks.gavel.scoring import GavelSettings, evaluate_files
from gavel.errors import ConfigError
from gavel.examples import example_dir


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def gold_row(name: str, box: list[float], width: int, height: int) -> dict:
    """A hallucinated GAVEL sample with one gold box (x, y, w, h)."""
    return {
        "id": name,
        "image": "a.png",
        "caption": "c",
        "hallucinated": True,
        "category": "Color",
        "boxes": [box],
        "width": width,
        "height": height,
    }


@pytest.fixture
def data(tmp_path):
    rows = [
        # 100x100 images; gold boxes in x, y, w, h.
        {
            "id": "hit",
            "image": "a.png",
            "caption": "c",
            "hallucinated": True,
            "category": "Color",
            "boxes": [[0, 0, 50, 50]],
            "width": 100,
            "height": 100,
        },
        {
            "id": "half",
            "image": "a.png",
            "caption": "c",
            "hallucinated": True,
            "category": "Color",
            "boxes": [[0, 0, 50, 50]],
            "width": 100,
            "height": 100,
        },
        {
            "id": "count",
            "image": "a.png",
            "caption": "c",
            "hallucinated": True,
            "category": "Qty",
            "boxes": [[0, 0, 10, 10], [50, 50, 10, 10]],
            "width": 100,
            "height": 100,
        },
        {
            "id": "said-clean",
            "image": "a.png",
            "caption": "c",
            "hallucinated": True,
            "category": "Obj",
            "boxes": [[0, 0, 50, 50]],
            "width": 100,
            "height": 100,
        },
        {
            "id": "garbled",
            "image": "a.png",
            "caption": "c",
            "hallucinated": True,
            "category": "Obj",
            "boxes": [[0, 0, 50, 50]],
            "width": 100,
            "height": 100,
        },
        {
            "id": "failed",
            "image": "a.png",
            "caption": "c",
            "hallucinated": True,
            "category": "Act",
            "boxes": [[0, 0, 50, 50]],
            "width": 100,
            "height": 100,
        },
        {
            "id": "absent",
            "image": "a.png",
            "caption": "c",
            "hallucinated": True,
            "category": "Act",
            "boxes": [[0, 0, 50, 50]],
            "width": 100,
            "height": 100,
        },
        {
            "id": "clean",
            "image": "a.png",
            "caption": "c",
            "hallucinated": False,
            "width": 100,
            "height": 100,
        },
        {
            "id": "no-box-gold",
            "image": "a.png",
            "caption": "c",
            "hallucinated": True,
            "category": "Other",
            "width": 100,
            "height": 100,
        },
    ]
    return write_jsonl(tmp_path / "gold.jsonl", rows)


@pytest.fixture
def predictions(tmp_path):
    rows = [
        {
            "id": "hit",
            "response": '{"hallucination": true, "bbox_2d": [0, 0, 500, 500]}',
            "box_format": "rel1000",
        },
        # Left half of the gold box: IoU 1/2 exactly (a hit at 0.5).
        {"id": "half", "hallucinated": True, "boxes": [[0, 0, 25, 50]], "explanation": "e"},
        # One of two counted objects found: union IoU 100/200.
        {"id": "count", "hallucinated": True, "boxes": [[0, 0, 10, 10]]},
        # A box given with a "no error" verdict does not localize an error.
        {
            "id": "said-clean",
            "response": '{"hallucination": false, "bbox": [0, 0, 50, 50]}',
            "box_format": "pixel",
        },
        {
            "id": "garbled",
            "response": "Let me look at [0, 0, 50, 50] more closely...",
            "box_format": "pixel",
        },
        {"id": "failed", "error": "HTTP 500 after 5 retries"},
        {"id": "clean", "response": "No, there is no hallucination.", "box_format": "pixel"},
        {"id": "no-box-gold", "response": "Yes, the caption is wrong.", "box_format": "pixel"},
        {"id": "stranger", "response": "Yes", "box_format": "pixel"},
    ]
    return write_jsonl(tmp_path / "pred.jsonl", rows)


def test_outcomes_and_values_by_hand(data, predictions):
    result, scores = evaluate_files(data, predictions, GavelSettings(resamples=200))
    by_id = {s.id: s for s in scores}
    assert by_id["hit"].iou == pytest.approx(1.0)
    assert by_id["half"].iou == 0.5
    assert by_id["count"].iou == pytest.approx(0.5)
    assert by_id["said-clean"].iou == 0.0 and by_id["said-clean"].verdict_pred is False
    assert by_id["garbled"].outcome == "unparseable" and by_id["garbled"].iou == 0.0
    assert by_id["failed"].outcome == "model_error"
    assert by_id["absent"].outcome == "missing"
    assert by_id["no-box-gold"].iou is None

    counts = result.counts
    assert (counts["ok"], counts["unparseable"], counts["model_error"], counts["missing"]) == (
        6,
        1,
        1,
        1,
    )
    assert counts["unknown_ids"] == 1 and counts["total"] == 9
    assert any("stranger" in w for w in result.warnings)

    # Grounding over the 7 samples with a gold box: IoUs 1, .5, .5, then 0 for said-clean, garbled, failed, absent.
    g = result.metrics["grounding"]
    assert g["n"] == 7
    assert g["A@0.3"] == pytest.approx(100 * 3 / 7)
    assert g["A@0.5"] == pytest.approx(100 * 3 / 7)
    assert g["A@0.7"] == pytest.approx(100 * 1 / 7)

    # Verification: 8 hallucinated (tp: hit, half, count, no-box-gold; fn: the other four), 1 clean (tn).
    v = result.metrics["verification"]
    assert (v["tp"], v["fn"], v["fp"], v["tn"]) == (4, 4, 0, 1)
    assert v["accuracy"] == pytest.approx(100 * 5 / 9)

    assert result.metrics["boxes"]["ignored_with_clean_verdict"] == 1
    assert result.metrics["explanation"] is None
    assert result.per_category["Qty"]["grounding"]["A@0.5"] == 100.0
    assert result.per_category["No hall."]["verification_accuracy"] == 100.0
    assert set(result.ci["grounding"]) == {"A@0.3", "A@0.5", "A@0.7"}
    assert result.manifest.settings["match"] == "union"
    assert len(result.manifest.data_sha256) == 64


def test_policy_changes_multi_box_scores_and_is_recorded(data, predictions):
    result, scores = evaluate_files(data, predictions, GavelSettings(match="max", resamples=0))
    assert {s.id: s.iou for s in scores}["count"] == 1.0
    assert result.manifest.settings["match"] == "max"
    assert result.ci["grounding"]["A@0.5"] is None  # no resamples, no interval


def test_undeclared_box_format_is_a_clear_error(tmp_path, data):
    pred = write_jsonl(tmp_path / "p.jsonl", [{"id": "hit", "response": "[1, 2, 3, 4]"}])
    with pytest.raises(ConfigError, match="--box-format"):
        evaluate_files(data, pred, GavelSettings())


def test_declared_box_format_applies_to_undeclared_lines(tmp_path, data):
    pred = write_jsonl(
        tmp_path / "p.jsonl",
        [{"id": "hit", "response": '{"hallucination": true, "bbox": [0, 0, 0.5, 0.5]}'}],
    )
    _, scores = evaluate_files(data, pred, GavelSettings(box_format="rel1", resamples=0))
    assert scores[0].iou == pytest.approx(1.0)


def test_the_shipped_examples_score_as_annotated():
    examples = example_dir("photos")
    gold = examples / "gavel.jsonl"
    results = {
        p.stem: evaluate_files(gold, p, GavelSettings(resamples=0))
        for p in (examples / "predictions").glob("*.jsonl")
    }
    # gpt: one refusal (unparseable) and one wrong "no error" verdict; both clean captions right.
    gpt, _ = results["gpt"]
    v = gpt.metrics["verification"]
    assert gpt.counts["unparseable"] == 1
    assert (v["tp"], v["fn"], v["fp"], v["tn"]) == (8, 2, 0, 2)
    # gemini: one sample has no prediction line; one clean caption flagged.
    gemini, _gemini_scores = results["gemini"]
    assert gemini.counts["missing"] == 1
    assert gemini.metrics["verification"]["fp"] == 1
    # internvl: coffee-2 right verdict but no box; chelsea-1 two boxes in one <box> tag.
    _, internvl_scores = results["internvl3.5"]
    by_id = {s.id: s for s in internvl_scores}
    assert by_id["coffee-2"].iou == 0.0 and by_id["coffee-2"].verdict_pred is True
    assert by_id["chelsea-1"].n_pred_boxes == 2 and by_id["chelsea-1"].iou > 0.7
    # qwen2.5-vl: a <think> block before the JSON is skipped; boxes are in resized-input pixels.
    _, qwen25 = results["qwen2.5-vl"]
    assert {s.id: s for s in qwen25}["coffee-1"].iou > 0.8
    for _, scores in results.values():
        assert all(s.box_status != "invalid" for s in scores)


def test_predicted_boxes_are_ordered_clipped_and_filtered_before_iou(tmp_path):
    """Given boxes follow the same rules as parsed ones (docs/data-format.md). Gold: the 20x20
    box (40, 10)-(60, 30) of a 100x50 image; IoUs worked out by hand."""
    cases = {
        # Sticks out above the image: clipped to (40, 0)-(60, 30), IoU 400 / 600 (unclipped,
        # 400 / 800 would be a mere tie at 0.5).
        "outside": {"boxes": [[40, -10, 60, 30]]},
        # The same box as rel-1000 text: the parser clips it the same way.
        "outside-parsed": {
            "response": '{"hallucination": true, "bbox_2d": [400, -200, 600, 600]}',
            "box_format": "rel1000",
        },
        "swapped": {"boxes": [[60, 30, 40, 10]]},  # corners in the wrong order: IoU 1
        "on-the-edge": {"boxes": [[40, 10, 60, 50]]},  # ends on the bottom edge: IoU 1/2
        "flat-and-good": {"boxes": [[10, 10, 10, 40], [40, 10, 60, 30]]},  # flat one dropped
    }
    gold = [gold_row(name, [40, 10, 20, 20], 100, 50) for name in cases]
    data = write_jsonl(tmp_path / "gold.jsonl", gold)
    pred = write_jsonl(
        tmp_path / "pred.jsonl",
        [{"id": name, "hallucinated": True} | fields for name, fields in cases.items()],
    )
    result, scores = evaluate_files(data, pred, GavelSettings(resamples=0))
    ious = {s.id: s.iou for s in scores}
    assert ious["outside"] == pytest.approx(2 / 3)
    assert ious["outside-parsed"] == pytest.approx(2 / 3)
    assert ious["swapped"] == 1.0
    assert ious["on-the-edge"] == 0.5
    assert ious["flat-and-good"] == 1.0
    assert {s.id: s.pred_boxes for s in scores}["outside"] == [(40.0, 0.0, 60.0, 30.0)]
    boxes = result.metrics["boxes"]
    assert (boxes["clipped"], boxes["swapped"], boxes["degenerate_dropped"]) == (2, 1, 1)
    assert result.metrics["grounding"]["A@0.7"] == pytest.approx(100 * 2 / 5)


def test_cut_off_parroted_and_two_way_answers_are_counted_and_not_credited(tmp_path, data):
    ramble = "The caption mentions a dog and there is no hallucination in the colour of the"
    pixel = {"box_format": "pixel"}
    rows = [
        # Cut off by max_tokens: the phrase in the unfinished ramble is not a conclusion.
        {"id": "hit", "response": ramble, "finish_reason": "length"} | pixel,
        # Cut off too, but its opening word is an answer.
        {"id": "half", "response": "Yes, the sofa is", "finish_reason": "length"} | pixel,
        # The same ramble, finished: read as before.
        {"id": "count", "response": ramble + ".", "finish_reason": "stop"} | pixel,
        {"id": "said-clean", "response": "Is there a hallucination? yes or no"} | pixel,
        {"id": "garbled", "response": "Use an empty list when there is no error."} | pixel,
    ]
    result, scores = evaluate_files(data, write_jsonl(tmp_path / "p.jsonl", rows), GavelSettings())
    by_id = {s.id: s for s in scores}
    assert by_id["hit"].outcome == "unparseable" and "cut off" in by_id["hit"].detail
    assert by_id["half"].verdict_pred is True
    assert by_id["count"].verdict_pred is False
    assert by_id["said-clean"].outcome == "unparseable" and "both" in by_id["said-clean"].detail
    assert by_id["garbled"].outcome == "unparseable" and "copied" in by_id["garbled"].detail
    answers = result.metrics["answers"]
    assert answers == {"truncated": 2, "echoed": 1, "refused_both_ways": 1,
                       "refused_truncated": 1}  # fmt: skip
    assert result.counts["truncated"] == 2
    assert any("cut off by the token limit" in w for w in result.warnings)
    assert any("repeat text of the prompt" in w for w in result.warnings)


def test_a_huge_finite_predicted_box_is_clipped_to_the_image_not_dropped(tmp_path, data):
    """[-1e308, -1e308, 1e308, 1e308] covers the whole 100x100 image: against the 50x50 gold
    box that is IoU 2500 / 10000 (the sum of its values overflows, each value does not)."""
    predictions = write_jsonl(tmp_path / "huge.jsonl", [
        {"id": "hit", "hallucinated": True, "explanation": "x",
         "boxes": [[-1e308, -1e308, 1e308, 1e308]]},
    ])  # fmt: skip
    _, scores = evaluate_files(data, predictions, GavelSettings(resamples=0))
    (hit,) = [s for s in scores if s.id == "hit"]
    assert hit.iou == pytest.approx(0.25)


def test_box_repairs_and_unit_coordinates_are_counted_and_warned(tmp_path):
    gold = [
        gold_row(name, [0, 0, 500, 500], 1000, 1000) for name in ("broken-list", "twice", "unit")
    ]
    broken = '```json\n[{"bbox_2d": [0, 0, 500, 500]},\n{\n{"bbox_2d": [0, 0, 250, 250]}]\n```'
    responses = {
        "broken-list": broken,
        "twice": "The box is [0, 0, 500, 500]; again: [0, 0, 500, 500]\nYes.",
        "unit": '{"hallucination": true, "boxes": [[0.0, 0.0, 0.5, 0.5]]}',
    }
    pred = write_jsonl(
        tmp_path / "pred.jsonl",
        [{"id": k, "hallucinated": True, "response": v} for k, v in responses.items()],
    )
    data = write_jsonl(tmp_path / "gold.jsonl", gold)
    result, scores = evaluate_files(data, pred, GavelSettings(resamples=0, box_format="rel1000"))
    boxes = result.metrics["boxes"]
    assert (boxes["repaired_lists"], boxes["repeated_dropped"], boxes["unit_interval"]) == (1, 1, 1)
    assert {s.id: s.n_pred_boxes for s in scores} == {"broken-list": 2, "twice": 1, "unit": 1}
    assert any("damaged JSON list" in w for w in result.warnings)
    assert any("every box coordinate in [0, 1] under rel1000" in w for w in result.warnings)
