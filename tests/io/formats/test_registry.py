"""The predictions reader picks a file's format from the registry, by path."""

from __future__ import annotations

import json

from gavel.io.formats import FORMATS, format_of, lines_of
from gavel.io.predictions import PredictionReader


def test_an_inspect_log_is_told_by_its_suffix_and_anything_else_is_jsonl(tmp_path):
    assert format_of(tmp_path / "run.eval").name == "inspect"
    for name in ("predictions.jsonl", "20260101_samples_gavel.jsonl", "answers.txt", "noext"):
        assert format_of(tmp_path / name).name == "jsonl"
    assert FORMATS[-1].name == "jsonl"  # the format that takes any file is asked last


def test_a_sample_log_is_read_as_the_predictions_it_holds(tmp_path):
    log = tmp_path / "samples_gavel.jsonl"
    item = {"id": "s1", "response": "Yes.", "box_format": "pixel"}
    log.write_text(json.dumps({"doc_id": 0, "filtered_resps": "Yes.", "f1": item}) + "\n")
    assert [json.loads(line) for _, line in lines_of(log)] == [item]
    assert [p.id for p in PredictionReader(log)] == ["s1"]
