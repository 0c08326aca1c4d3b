"""``gavel.api.data``: check, describe, split and convert a GAVEL file without the command line."""

from __future__ import annotations

import json

import pytest

from gavel.api import data
from gavel.api.synthesis import SynthSettings, synthesize_with
from gavel.errors import ConfigError


@pytest.fixture
def gavel_file(tmp_path):
    return synthesize_with(SynthSettings(tmp_path / "set", "gavel", 8, seed=0, difficulty="easy"))


def test_validate_and_stats_are_what_the_command_prints(gavel_file, gavel_main):
    report, errors = data.validate(gavel_file)
    assert errors == [] and report.samples == 8
    summary = data.stats(gavel_file)
    assert summary["samples"] == 8
    done = gavel_main("data", "stats", gavel_file, "--format", "json")
    assert done.code == 0 and json.loads(done.out) == summary


def test_validate_lists_each_problem_with_its_line(gavel_file):
    lines = gavel_file.read_text().splitlines()
    broken = json.loads(lines[1]) | {"hallucinated": "yes"}
    gavel_file.write_text("\n".join([lines[0], json.dumps(broken), *lines[2:]]) + "\n")
    _, errors = data.validate(gavel_file, max_errors=5)
    assert len(errors) == 1 and "line 2" in str(errors[0]) and "hallucinated" in str(errors[0])


def test_split_takes_sizes_as_numbers_or_as_the_flags_text(gavel_file, tmp_path):
    lines = [json.loads(line) for line in gavel_file.read_text().splitlines()]
    unmarked = "".join(
        json.dumps({k: v for k, v in r.items() if k != "split"}) + "\n" for r in lines
    )
    gavel_file.write_text(unmarked)  # synthetic data is marked "test", and is never split again
    by_text = data.split(
        gavel_file, val="0.25", out_dir=tmp_path / "a", image_root=gavel_file.parent
    )
    by_number = data.split(
        gavel_file, val=0.25, out_dir=tmp_path / "b", image_root=gavel_file.parent
    )
    assert [p.name for p in by_text] == ["train", "val"]
    assert sum(p.samples for p in by_text) == 8
    for a, b in zip(by_text, by_number, strict=True):
        assert a.path.read_bytes() == b.path.read_bytes()
    with pytest.raises(ConfigError, match="a split size"):
        data.split(gavel_file, val="half")


def test_convert_round_trips_through_parquet(gavel_file, tmp_path):
    assert data.convert(gavel_file, tmp_path / "parquet") == 8
    assert data.convert(tmp_path / "parquet", tmp_path / "back" / "gavel.jsonl") == 8
    original = [json.loads(line) for line in gavel_file.read_text().splitlines()]
    back = [
        json.loads(line) for line in (tmp_path / "back" / "gavel.jsonl").read_text().splitlines()
    ]
    assert [r["id"] for r in back] == [r["id"] for r in original]
    with pytest.raises(ConfigError, match=r"writes a \.jsonl file"):
        data.convert(tmp_path / "parquet", tmp_path / "out.txt")
