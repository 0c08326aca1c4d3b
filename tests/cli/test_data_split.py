"""``gavel data split``: by image, and the outputs pass ``gavel data validate``."""

from __future__ import annotations

import json

from gavel.examples import example_dir

GOLD = example_dir("photos") / "gavel.jsonl"


def unmarked(path) -> str:
    """The example's lines without their ``split: test`` mark (a split refuses held-out lines)."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return "".join(json.dumps({k: v for k, v in line.items() if k != "split"}) + "\n"
                   for line in lines)  # fmt: skip


def test_split_writes_valid_files_with_no_shared_image(gavel, tmp_path):
    data = tmp_path / "gavel.jsonl"
    data.write_text(unmarked(GOLD))
    done = gavel("data", "split", data, "--val", "0.25", "--seed", "7",
                 "--image-root", GOLD.parent)  # fmt: skip
    assert done.returncode == 0, done.stderr
    train, val = tmp_path / "gavel.train.jsonl", tmp_path / "gavel.val.jsonl"
    assert f"{train}:" in done.stdout and "(val)" in done.stdout
    assert "--image-root" in done.stderr  # the images stay where they were
    images = []
    for path in (train, val):
        valid = gavel("data", "validate", path, "--image-root", GOLD.parent)
        assert valid.returncode == 0, valid.stderr
        images.append({json.loads(line)["image"] for line in path.read_text().splitlines()})
    assert images[0] and images[1] and not images[0] & images[1]


def test_split_next_to_the_data_keeps_image_paths_valid(gavel, tmp_path):
    from gavel.train.tiny import tiny_dataset

    data = tiny_dataset(tmp_path, 12)
    done = gavel("data", "split", data, "--val", "2", "--test", "0.2")
    assert done.returncode == 0, done.stderr
    for name in ("train", "val", "test"):
        assert gavel("data", "validate", tmp_path / f"gavel.{name}.jsonl").returncode == 0
    bad = gavel("data", "split", data, "--val", "6")
    assert bad.returncode != 0 and "leaving none for training" in bad.stderr


def test_held_out_lines_are_not_split_again(gavel, tmp_path):
    data = tmp_path / "gavel.jsonl"
    data.write_text(GOLD.read_text())  # every line is marked split "test"
    done = gavel("data", "split", data, "--val", "0.25", "--image-root", GOLD.parent)
    assert done.returncode == 2 and "12 marked split 'test'" in done.stderr
    assert not (tmp_path / "gavel.train.jsonl").exists()
