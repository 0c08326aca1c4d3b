"""``gavel synth`` and ``gavel generate`` as a user runs them."""

from __future__ import annotations

import json


def test_synth_then_generate_then_score(gavel_main, tmp_path):
    done = gavel_main(
        "synth", "--n", "8", "--seed", "1", "--out", tmp_path / "set", "--difficulty", "easy"
    )
    assert done.code == 0, done.err
    data = tmp_path / "set" / "gavel.jsonl"
    assert len(data.read_text().splitlines()) == 8
    assert len(list((tmp_path / "set" / "images").glob("*.png"))) == 8

    pred = tmp_path / "pred.jsonl"
    first = gavel_main(
        "generate", "--data", data, "--model", "scene", "--out", pred, "--no-progress"
    )
    assert first.code == 0, first.err
    assert "8 answered" in first.err
    again = gavel_main(
        "generate", "--data", data, "--model", "scene", "--out", pred, "--no-progress"
    )
    assert "0 answered, 8 already there" in again.err
    manifest = json.loads((tmp_path / "pred.manifest.json").read_text())
    assert manifest["model"] == "scene" and len(manifest["prompt_sha256"]) == 64

    scored = gavel_main("score", "--data", data, "--predictions", pred, "--format", "csv",
                   "--out", tmp_path / "run" / "results.json")  # fmt: skip
    assert scored.code == 0 and scored.out.startswith("Method,A@0.3")
    result = json.loads((tmp_path / "run" / "results.json").read_text())
    # The score names the exact prompt and adapter that produced the answers.
    assert result["manifest"]["prompt_sha256"] == manifest["prompt_sha256"]
    assert result["manifest"]["adapter"]["spec"] == "scene"


def test_every_benchmark_synth_generate_score(gavel_main, tmp_path):
    for benchmark, data_name in (("detailverify", "real_test.jsonl"), ("videohallucer", "")):
        folder = tmp_path / benchmark
        assert gavel_main("synth", "--benchmark", benchmark, "--n", "3", "--out", folder).code == 0
        data = folder / data_name if data_name else folder
        pred = folder / "pred.jsonl"
        done = gavel_main("generate", "--benchmark", benchmark, "--data", data, "--model", "scene",
                     "--out", pred, "--no-progress")  # fmt: skip
        assert done.code == 0, done.err
        scored = gavel_main("score", "--benchmark", benchmark, "--data", data, "--predictions", pred,
                       "--format", "json")  # fmt: skip
        assert scored.code == 0, scored.err
        result = next(iter(json.loads(scored.out).values()))
        assert result["benchmark"] == benchmark


def test_synth_category_weights_are_checked(gavel_main, tmp_path):
    done = gavel_main("synth", "--n", "3", "--out", tmp_path, "--categories", "Colour=1")
    assert done.code != 0
    assert "unknown category 'Colour'" in done.err


def test_unknown_model_is_explained(gavel_main, tmp_path):
    gavel_main("synth", "--n", "2", "--out", tmp_path / "s")
    done = gavel_main("generate", "--data", tmp_path / "s" / "gavel.jsonl", "--model", "gpt9",
                 "--out", tmp_path / "p.jsonl")  # fmt: skip
    assert done.code == 2
    assert "unknown model 'gpt9'" in done.err and "scene" in done.err


def test_run_generates_then_scores_into_one_folder(gavel_main, tmp_path):
    assert gavel_main("synth", "--n", "5", "--out", tmp_path / "set").code == 0
    done = gavel_main("run", "--data", tmp_path / "set" / "gavel.jsonl", "--model", "scene",
                 "--out", tmp_path / "run", "--no-progress", "--match", "max", "--format", "csv")  # fmt: skip
    assert done.code == 0, done.err
    assert done.out.startswith("Method,A@0.3")
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
