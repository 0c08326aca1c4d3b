"""``gavel data validate`` and ``gavel data stats``."""

from __future__ import annotations

import json

from gavel.examples import example_dir

GOLD = example_dir("photos") / "gavel.jsonl"


def test_validate_accepts_the_examples(gavel):
    done = gavel("data", "validate", GOLD)
    assert done.returncode == 0
    assert "OK, 12 samples" in done.stdout


def test_validate_lists_every_problem_and_fails(gavel, tmp_path):
    lines = GOLD.read_text().splitlines()
    broken = [json.loads(line) for line in lines[:3]]
    broken[1]["image"] = "../../etc/passwd"
    broken[2]["id"] = broken[0]["id"]
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in broken) + "\n{oops\n")
    done = gavel("data", "validate", path)
    assert done.returncode == 1
    assert "line 2, field 'image'" in done.stderr
    assert "line 3, field 'id'" in done.stderr
    assert "line 4" in done.stderr and "not valid JSON" in done.stderr
    assert "3 problem(s)" in done.stderr


def test_stats_reports_categories_sources_and_box_sizes(gavel):
    done = gavel("data", "stats", GOLD, "--format", "json")
    assert done.returncode == 0
    stats = json.loads(done.stdout)
    assert stats["samples"] == 12
    assert stats["per_category"]["No hall."] == 2
    assert sum(stats["per_source"].values()) == 12
    assert sum(stats["box_size_hist"].values()) == sum(
        len(json.loads(line)["boxes"]) for line in GOLD.read_text().splitlines()
    )
    table = gavel("data", "stats", GOLD)
    assert "per category" in table.stdout and "gold box area" in table.stdout
