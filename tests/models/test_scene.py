"""The built-in scene model: good on medium, clearly worse on hard, and it only uses pixels."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from PIL import Image, PngImagePlugin

from gavel.benchmarks.gavel.data import load_samples
from gavel.benchmarks.gavel.prompt import build_requests
from gavel.benchmarks.gavel.scoring import GavelSettings, evaluate_files
from gavel.models.scene.adapter import SceneModel
from gavel.models.scene.grammar import parse_caption
from gavel.prompts import load_template
from gavel.runner.local import run_model
from gavel.synth.gavel_set import generate_gavel


def predict(folder, out):
    samples, _ = load_samples(folder / "gavel.jsonl")
    requests = build_requests(samples, folder, load_template("gavel_v1"), "pixel")
    run_model(SceneModel(), requests, out, progress=False)
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    results = {}
    for difficulty in ("medium", "hard"):
        folder = tmp_path_factory.mktemp(difficulty)
        generate_gavel(folder, 40, seed=2, difficulty=difficulty)
        predictions = predict(folder, folder / "pred.jsonl")
        result, _ = evaluate_files(folder / "gavel.jsonl", predictions, GavelSettings(resamples=0))
        results[difficulty] = (folder, result)
    return results


def test_good_but_not_perfect_on_medium(runs):
    _, result = runs["medium"]
    assert 75.0 <= result.metrics["grounding"]["A@0.5"] < 100.0
    assert result.metrics["verification"]["accuracy"] >= 85.0
    assert result.counts["unparseable"] == 0


def test_clearly_worse_on_hard(runs):
    medium = runs["medium"][1].metrics["grounding"]["A@0.5"]
    hard = runs["hard"][1].metrics["grounding"]["A@0.5"]
    assert hard <= medium - 25.0


def test_every_synthetic_caption_is_read(runs):
    folder, _ = runs["hard"]
    for line in (folder / "gavel.jsonl").read_text().splitlines():
        assert parse_caption(json.loads(line)["caption"]) is not None


def test_renamed_files_without_metadata_give_the_same_answers(runs, tmp_path):
    """The model must see only pixels: not names, not metadata, not the generator's sidecars."""
    folder, _ = runs["medium"]
    leaky, clean = tmp_path / "leaky", tmp_path / "clean"
    for target in (leaky, clean):
        (target / "images").mkdir(parents=True)
    rows = [json.loads(line) for line in (folder / "gavel.jsonl").read_text().splitlines()]
    for index, row in enumerate(rows):
        image = Image.open(folder / row["image"])
        info = PngImagePlugin.PngInfo()
        info.add_text("Description", f"{row['category']}: {row['explanation']}")
        image.save(leaky / row["image"], pnginfo=info)
        neutral = f"images/{index:03d}-x.png"
        Image.open(leaky / row["image"]).save(clean / neutral)  # re-saved: no text chunks
        row["image"] = neutral
    shutil.copy(folder / "gavel.jsonl", leaky / "gavel.jsonl")
    shutil.copy(folder / "scenes.jsonl", leaky / "scenes.jsonl")
    (clean / "gavel.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    def responses(root):
        lines = predict(root, root / "pred.jsonl").read_text().splitlines()
        return [json.loads(line)["response"] for line in lines]

    assert "Description" in Image.open(next((leaky / "images").iterdir())).text
    assert responses(leaky) == responses(clean)


# --- DetailVerifyBench and VideoHallucer through the benchmark registry ---------------------


def run_synthetic(folder, benchmark: str, difficulty: str, n: int, seed: int):
    from gavel.benchmarks.registry import get_benchmark
    from gavel.benchmarks.spec import RunSettings

    spec = get_benchmark(benchmark)
    data = spec.synth(folder, n, seed, difficulty, RunSettings(), None)
    prepared = spec.prepare(data, SceneModel(), RunSettings())
    run_model(SceneModel(), prepared.requests, folder / "pred.jsonl", progress=False)
    result, _ = spec.evaluate(data, folder / "pred.jsonl", RunSettings(resamples=0))
    return result


def test_detailverify_tags_well_on_medium_and_worse_on_hard(tmp_path):
    medium = run_synthetic(tmp_path / "m", "detailverify", "medium", 20, seed=2)
    hard = run_synthetic(tmp_path / "h", "detailverify", "hard", 20, seed=2)
    assert medium.counts["invalid"] == 0  # the tagged caption keeps every word
    assert 60.0 <= medium.metrics["token"]["f1"] < 100.0
    assert hard.metrics["token"]["f1"] <= medium.metrics["token"]["f1"] - 20.0


def test_videohallucer_answers_from_frames(tmp_path):
    pytest.importorskip("av")
    result = run_synthetic(tmp_path / "v", "videohallucer", "medium", 12, seed=1)
    assert result.counts["model_error"] == 0
    assert result.metrics["overall"] >= 60.0


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_an_image_that_is_a_pipe_is_a_clear_error_not_a_wait(tmp_path):
    from gavel.errors import GavelError
    from gavel.requests import Request

    pipe = tmp_path / "pipe.png"
    os.mkfifo(pipe)
    request = Request(sample_id="s", task="gavel", prompt="p", fields={"caption": "A red box."},
                      images=(pipe,))  # fmt: skip
    with pytest.raises(GavelError, match=r"cannot read image .*pipe\.png: is a FIFO"):
        SceneModel().answer(request)
