"""Splitting GAVEL data by image: no image in two splits, seeded, sizes in images."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gavel.benchmarks.gavel.data import load_samples
from gavel.benchmarks.gavel.split import assign_images, image_counts, parse_size, split_file
from gavel.errors import ConfigError, DataError
from gavel.examples import example_dir
from gavel.train.tiny import tiny_dataset


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """40 lines over 20 images (two captions each), with an extra field to keep."""
    path = tiny_dataset(tmp_path / "d", 40)
    lines = [json.loads(line) | {"annotator": "a"} for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_no_image_in_two_splits_and_nothing_lost(data: Path):
    parts = split_file(data, {"val": 0.2, "test": 3}, seed=1)
    assert [p.name for p in parts] == ["train", "val", "test"]
    assert [p.path.name for p in parts] == ["gavel.train.jsonl", "gavel.val.jsonl",
                                            "gavel.test.jsonl"]  # fmt: skip
    assert [p.images for p in parts] == [13, 4, 3]
    images = [{line["image"] for line in _read(p.path)} for p in parts]
    assert not (images[0] & images[1] or images[0] & images[2] or images[1] & images[2])
    original = _read(data)
    written = [line for p in parts for line in _read(p.path)]
    assert sorted(line["id"] for line in written) == sorted(line["id"] for line in original)
    for part in parts:
        lines = _read(part.path)
        assert all(line["split"] == part.name and line["annotator"] == "a" for line in lines)
        ids = [line["id"] for line in lines]  # file order kept
        assert ids == [line["id"] for line in original if line["id"] in set(ids)]
        load_samples(part.path)  # valid GAVEL files


def test_seeded_and_independent_of_line_order(data: Path, tmp_path: Path):
    first = {line["id"] for line in _read(split_file(data, {"val": 5}, seed=3)[1].path)}
    shuffled = tmp_path / "shuffled" / "gavel.jsonl"
    shuffled.parent.mkdir()
    shuffled.write_text("".join(reversed(data.read_text().splitlines(keepends=True))))
    again = split_file(shuffled, {"val": 5}, seed=3, image_root=data.parent)
    assert {line["id"] for line in _read(again[1].path)} == first
    other = {line["id"] for line in _read(split_file(data, {"val": 5}, seed=4)[1].path)}
    assert other != first


def test_sizes():
    assert parse_size("0.1") == 0.1 and parse_size("200") == 200
    for bad in ("0", "1.5", "-3", "ten"):
        with pytest.raises(ConfigError):
            parse_size(bad)
    assert image_counts(10, {"val": 0.01}) == {"val": 1}  # a fraction never rounds to nothing
    assert image_counts(10, {"val": 0.25, "test": 2}) == {"val": 2, "test": 2}
    with pytest.raises(ConfigError, match="none for training"):
        image_counts(4, {"val": 2, "test": 2})
    assignment = assign_images(["b", "a", "c"], {"val": 1}, seed=0)
    assert sorted(assignment.values()) == ["train", "train", "val"]


def test_outputs_never_replace_the_input(tmp_path: Path):
    source = example_dir("photos")
    path = tmp_path / "gavel.train.jsonl"
    lines = [json.loads(line) for line in (source / "gavel.jsonl").read_text().splitlines()]
    text = "".join(json.dumps(line | {"split": "train"}) + "\n" for line in lines)
    path.write_text(text)
    parts = split_file(path, {"val": 1}, image_root=source)
    assert [p.path.name for p in parts] == ["gavel.train.train.jsonl", "gavel.train.val.jsonl"]
    assert path.read_text() == text
    with pytest.raises(ConfigError, match="remainder"):
        split_file(path, {"train": 1}, image_root=source)


def test_a_file_with_held_out_samples_is_not_split_again(data: Path):
    lines = _read(data)
    lines[0]["split"] = "test"
    data.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(DataError, match="refusing to split again held-out samples"):
        split_file(data, {"val": 0.25}, seed=0)
