"""``gavel demo`` runs offline and writes its artefacts for all three benchmarks, and its runs
make a ``gavel report``."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(scope="module")
def demo(gavel_shared, tmp_path_factory):
    """One whole ``gavel demo``, which the tests here only read: (folder, what it printed)."""
    folder = tmp_path_factory.mktemp("demo") / "demo"
    done = gavel_shared("demo", "--out", folder, "--n", "8")
    assert done.code == 0, done.err
    return folder, done


def test_demo_runs_everything_offline(demo):
    demo, done = demo
    photos = sorted(p.parent.name for p in (demo / "photos").glob("*/results.json"))
    assert photos == ["gemini", "gpt", "internvl3.5", "qwen2.5-vl", "qwen3-vl"]
    for name in photos:
        assert (
            json.loads((demo / "photos" / name / "results.json").read_text())["counts"]["total"]
            == 12
        )
    for benchmark in ("gavel", "detailverify", "videohallucer"):
        for difficulty in ("medium", "hard"):
            folder = demo / "synthetic" / benchmark / difficulty
            result = json.loads((folder / "results.json").read_text())
            assert result["benchmark"] == benchmark
            assert (folder / "predictions.jsonl").read_text().strip()
        table = (demo / f"{benchmark}-table.md").read_text()
        assert "scene model, synthetic hard" in table
    for title in ("GAVEL", "DetailVerifyBench", "VideoHallucer"):
        assert title in done.out


def test_demo_shows_the_offline_judges_explanation_column(demo):
    pytest.importorskip("onnxruntime", reason="the offline judge needs the judge extra")
    demo, _ = demo
    table = (demo / "gavel-table.md").read_text()
    assert "Avg (proxy)" in table.splitlines()[0]
    result = json.loads((demo / "photos" / "gpt" / "results.json").read_text())
    explanation = result["metrics"]["explanation"]
    assert explanation["judge"]["proxy"] is True
    assert explanation["counts"]["total"] == 12 and 0 <= explanation["Avg"] <= 100


def test_the_demo_writes_a_report_and_gavel_report_makes_one_of_its_runs(
    demo, gavel_main, tmp_path
):
    demo, _ = demo
    assert (demo / "report" / "index.html").is_file()  # the demo writes one
    done = gavel_main("report", demo / "photos", "--out", tmp_path / "page", "--title", "photos")
    assert done.code == 0, done.err
    page = (tmp_path / "page" / "index.html").read_text()
    assert "<title>photos" in page
    missing = gavel_main("report", tmp_path / "nope", "--out", tmp_path / "x")
    assert missing.code == 2 and "does not exist" in missing.err
