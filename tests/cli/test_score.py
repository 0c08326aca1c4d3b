"""``gavel score`` end to end, in a subprocess as a user runs it."""

from __future__ import annotations

import json

from gavel.examples import example_dir

EXAMPLES = example_dir("photos")
GOLD = EXAMPLES / "gavel.jsonl"


def test_score_writes_results_and_per_sample_scores(gavel, tmp_path):
    out = tmp_path / "run" / "results.json"
    done = gavel(
        "score",
        "--data",
        GOLD,
        "--predictions",
        EXAMPLES / "predictions" / "gpt.jsonl",
        "--out",
        out,
    )
    assert done.returncode == 0, done.stderr
    assert "A@0.3" in done.stdout and "gpt-4o" in done.stdout
    result = json.loads(out.read_text())
    assert set(result["metrics"]["grounding"]) >= {"A@0.3", "A@0.5", "A@0.7"}
    assert set(result["metrics"]["verification"]) >= {"accuracy", "precision", "recall", "f1"}
    assert "median_log2" in result["metrics"]["area_ratio"]
    for key in ("per_category", "counts", "ci", "manifest"):
        assert key in result
    assert result["manifest"]["settings"]["match"] == "union"
    lines = (out.parent / "results.scores.jsonl").read_text().splitlines()
    assert len(lines) == 12
    assert {json.loads(line)["id"] for line in lines} == {
        json.loads(line)["id"] for line in GOLD.read_text().splitlines()
    }


def test_score_formats(gavel):
    args = ("score", "--data", GOLD, "--predictions", EXAMPLES / "predictions" / "gemini.jsonl")
    markdown = gavel(*args, "--format", "markdown")
    assert markdown.stdout.startswith("| Method | A@0.3 | A@0.5 | A@0.7 |")
    csv = gavel(*args, "--format", "csv")
    assert csv.stdout.splitlines()[0].startswith("Method,A@0.3,A@0.5,A@0.7")
    as_json = json.loads(gavel(*args, "--format", "json").stdout)
    assert next(iter(as_json.values()))["counts"]["missing"] == 1
    assert "1 sample(s) have no prediction" in markdown.stderr


def test_bad_data_line_exits_non_zero_naming_file_line_and_field(gavel, tmp_path):
    bad = tmp_path / "bad.jsonl"
    good = GOLD.read_text().splitlines()
    record = json.loads(good[1])
    record["category"] = "Colour"
    bad.write_text(good[0] + "\n" + json.dumps(record) + "\n")
    done = gavel(
        "score",
        "--data",
        bad,
        "--predictions",
        EXAMPLES / "predictions" / "gpt.jsonl",
        "--out",
        tmp_path / "r.json",
    )
    assert done.returncode == 2
    assert f"{bad}, line 2, field 'category'" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "r.json").exists()


def test_missing_box_format_is_explained(gavel, tmp_path):
    pred = tmp_path / "p.jsonl"
    pred.write_text(json.dumps({"id": "astronaut-1", "response": "Yes [1, 2, 3, 4]"}) + "\n")
    done = gavel("score", "--data", GOLD, "--predictions", pred)
    assert done.returncode == 2
    assert "--box-format" in done.stderr


def test_help_explains_options(gavel):
    done = gavel("score", "--help")
    assert done.returncode == 0
    for option in ("--box-format", "--match", "--format", "--bootstrap", "rel1000", "hungarian"):
        assert option in done.stdout


def test_detailverify_empty_groups_option(gavel, tmp_path):
    data = tmp_path / "real_test.jsonl"
    row = {
        "filename": "a.jpg",
        "category": "Nature",
        "GT_description": "A red car.",
        "description_tag": "A <Hallucination>red</Hallucination> car.",
    }
    data.write_text(json.dumps(row) + "\n")
    predictions = tmp_path / "pred.jsonl"
    answer = "<result>A <HALLUCINATION>red</HALLUCINATION> car.</result>"
    predictions.write_text(json.dumps({"id": "a.jpg", "response": answer}) + "\n")
    strata = {}
    for choice in ("null", "zero"):
        out = tmp_path / choice / "results.json"
        done = gavel(
            "score", "--benchmark", "detailverify", "--data", data, "--predictions", predictions,
            "--out", out, "--bootstrap", "0", "--empty-groups", choice,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        strata[choice] = json.loads(out.read_text())["metrics"]["length"]
    # One caption of 3 tokens, found exactly: short is 100 either way; long has no caption.
    assert strata["null"]["short (<100)"]["f1"] == strata["zero"]["short (<100)"]["f1"] == 100.0
    assert strata["null"]["long (>=150)"]["f1"] is None
    assert strata["zero"]["long (>=150)"]["f1"] == 0.0
