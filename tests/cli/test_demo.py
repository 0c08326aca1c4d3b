"""``gavel demo`` runs offline and writes its artefacts."""

from __future__ import annotations

import json


def test_demo_scores_every_example_model(gavel, tmp_path):
    done = gavel("demo", "--out", tmp_path / "demo")
    assert done.returncode == 0, done.stderr
    runs = sorted(p.parent.name for p in (tmp_path / "demo").glob("*/results.json"))
    assert runs == ["gemini", "gpt", "internvl3.5", "qwen2.5-vl", "qwen3-vl"]
    for name in runs:
        result = json.loads((tmp_path / "demo" / name / "results.json").read_text())
        assert result["counts"]["total"] == 12
    assert "| Method |" in (tmp_path / "demo" / "table.md").read_text()
    assert "A@0.5" in done.stdout
