"""``gavel demo`` runs offline and writes its artefacts."""

from __future__ import annotations

import json


def test_demo_runs_everything_offline(gavel, tmp_path):
    done = gavel("demo", "--out", tmp_path / "demo", "--n", "20")
    assert done.returncode == 0, done.stderr
    photos = sorted(p.parent.name for p in (tmp_path / "demo" / "photos").glob("*/results.json"))
    assert photos == ["gemini", "gpt", "internvl3.5", "qwen2.5-vl", "qwen3-vl"]
    for name in photos:
        result = json.loads((tmp_path / "demo" / "photos" / name / "results.json").read_text())
        assert result["counts"]["total"] == 12
    for difficulty in ("medium", "hard"):
        folder = tmp_path / "demo" / "synthetic" / difficulty
        result = json.loads((folder / "results.json").read_text())
        assert result["counts"]["total"] == 20
        assert len((folder / "predictions.jsonl").read_text().splitlines()) == 20
    table = (tmp_path / "demo" / "gavel-table.md").read_text()
    assert "scene model, synthetic hard" in table
    assert done.stdout.lstrip().startswith("GAVEL")
