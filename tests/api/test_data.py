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


@pytest.mark.parametrize("function", ["validate", "stats", "split", "convert"])
def test_an_image_root_given_as_a_url_is_refused(function, gavel_file, tmp_path):
    """As ``--image-root URL`` is: at once, naming it with its password hidden, nothing written
    (it was read as a folder that does not exist, or not read at all)."""
    call = {
        "validate": lambda root: data.validate(gavel_file, image_root=root),
        "stats": lambda root: data.stats(gavel_file, image_root=root),
        "split": lambda root: data.split(gavel_file, out_dir=tmp_path / "split", image_root=root),
        "convert": lambda root: data.convert(gavel_file, tmp_path / "ds", image_root=root),
    }[function]
    with pytest.raises(ConfigError, match="a URL is not read") as refused:
        call("https://someone:secret@example.invalid/images")
    assert "'https://***@example.invalid/images'" in str(refused.value)
    assert "secret" not in str(refused.value) and "--image-root" in str(refused.value)
    assert not (tmp_path / "split").exists() and not (tmp_path / "ds").exists()
