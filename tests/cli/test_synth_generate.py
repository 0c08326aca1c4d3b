"""``gavel synth`` and ``gavel generate`` as a user runs them."""

from __future__ import annotations

import json


def test_synth_then_generate_then_score(gavel, tmp_path):
    done = gavel(
        "synth", "--n", "8", "--seed", "1", "--out", tmp_path / "set", "--difficulty", "easy"
    )
    assert done.returncode == 0, done.stderr
    data = tmp_path / "set" / "gavel.jsonl"
    assert len(data.read_text().splitlines()) == 8
    assert len(list((tmp_path / "set" / "images").glob("*.png"))) == 8

    pred = tmp_path / "pred.jsonl"
    first = gavel("generate", "--data", data, "--model", "scene", "--out", pred, "--no-progress")
    assert first.returncode == 0, first.stderr
    assert "8 answered" in first.stderr
    again = gavel("generate", "--data", data, "--model", "scene", "--out", pred, "--no-progress")
    assert "0 answered, 8 already there" in again.stderr
    manifest = json.loads((tmp_path / "pred.manifest.json").read_text())
    assert manifest["model"] == "scene" and len(manifest["prompt_sha256"]) == 64

    scored = gavel("score", "--data", data, "--predictions", pred, "--format", "csv",
                   "--out", tmp_path / "run" / "results.json")  # fmt: skip
    assert scored.returncode == 0 and scored.stdout.startswith("Method,A@0.3")
    result = json.loads((tmp_path / "run" / "results.json").read_text())
    # The score names the exact prompt and adapter that produced the answers.
    assert result["manifest"]["prompt_sha256"] == manifest["prompt_sha256"]
    assert result["manifest"]["adapter"]["spec"] == "scene"


def test_every_benchmark_synth_generate_score(gavel, tmp_path):
    for benchmark, data_name in (("detailverify", "real_test.jsonl"), ("videohallucer", "")):
        folder = tmp_path / benchmark
        assert gavel("synth", "--benchmark", benchmark, "--n", "3", "--out", folder).returncode == 0
        data = folder / data_name if data_name else folder
        pred = folder / "pred.jsonl"
        done = gavel("generate", "--benchmark", benchmark, "--data", data, "--model", "scene",
                     "--out", pred, "--no-progress")  # fmt: skip
        assert done.returncode == 0, done.stderr
        scored = gavel("score", "--benchmark", benchmark, "--data", data, "--predictions", pred,
                       "--format", "json")  # fmt: skip
        assert scored.returncode == 0, scored.stderr
        result = next(iter(json.loads(scored.stdout).values()))
        assert result["benchmark"] == benchmark


def test_synth_category_weights_are_checked(gavel, tmp_path):
    done = gavel("synth", "--n", "3", "--out", tmp_path, "--categories", "Colour=1")
    assert done.returncode != 0
    assert "unknown category 'Colour'" in done.stderr


def test_unknown_model_is_explained(gavel, tmp_path):
    gavel("synth", "--n", "2", "--out", tmp_path / "s")
    done = gavel("generate", "--data", tmp_path / "s" / "gavel.jsonl", "--model", "gpt9",
                 "--out", tmp_path / "p.jsonl")  # fmt: skip
    assert done.returncode == 2
    assert "unknown model 'gpt9'" in done.stderr and "scene" in done.stderr


def test_run_generates_then_scores_into_one_folder(gavel, tmp_path):
    assert gavel("synth", "--n", "5", "--out", tmp_path / "set").returncode == 0
    done = gavel("run", "--data", tmp_path / "set" / "gavel.jsonl", "--model", "scene",
                 "--out", tmp_path / "run", "--no-progress", "--match", "max", "--format", "csv")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Method,A@0.3")
    for name in (
        "predictions.jsonl",
        "predictions.manifest.json",
        "results.json",
        "results.scores.jsonl",
    ):
        assert (tmp_path / "run" / name).is_file()
    result = json.loads((tmp_path / "run" / "results.json").read_text())
    assert result["manifest"]["settings"]["match"] == "max"
    assert result["manifest"]["prompt_sha256"]  # carried over from the generation
