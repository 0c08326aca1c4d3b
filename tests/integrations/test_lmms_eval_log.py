"""An lmms-eval sample log read as predictions (the whole run is in test_lmms_eval_task.py)."""

from __future__ import annotations

import json


def test_a_sample_of_another_task_is_one_located_message(saved, gavel_main, tmp_path):
    answers = saved["gavel"]
    log = tmp_path / "20260101_samples_other.jsonl"
    line = {"doc_id": 0, "target": "x", "filtered_resps": "Yes.", "accuracy": 1.0}
    log.write_text(json.dumps(line) + "\n")
    code, text = gavel_main("score", "--data", answers.data, "--predictions", log)
    assert code == 2
    assert f"{log}, line 1" in text and "an lmms-eval sample without a gavel answer" in text
    assert "Traceback" not in text


def test_a_sample_log_line_is_the_answer_it_holds(saved, gavel_main, tmp_path):
    """Each line's metric item is read as the predictions line it is."""
    answers = saved["gavel"]
    lines = [json.loads(line) for line in answers.predictions.read_text().splitlines()]
    log = tmp_path / "samples_gavel.jsonl"
    log.write_text("".join(
        json.dumps({"doc_id": n, "filtered_resps": item["response"], "verification_f1": {
            "id": item["id"], "response": item["response"], "box_format": "pixel"}}) + "\n"
        for n, item in enumerate(lines)
    ))  # fmt: skip
    code, text = gavel_main("score", "--data", answers.data, "--predictions", log,
                            "--out", tmp_path / "a.json", "--bootstrap", 0)  # fmt: skip
    assert code == 0, text
    code, text = gavel_main("score", "--data", answers.data, "--predictions", answers.predictions,
                            "--out", tmp_path / "b.json", "--bootstrap", 0)  # fmt: skip
    assert code == 0, text
    a, b = (json.loads((tmp_path / name).read_text()) for name in ("a.json", "b.json"))
    assert a["metrics"] == b["metrics"] and a["counts"] == b["counts"]
