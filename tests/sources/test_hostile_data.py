"""Data written by strangers: a dataset card, the rows of a Parquet file or a flag never make
gavel write outside the folder it was told to write to, nor read outside the dataset."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("huggingface_hub")

COMMIT = "c" * 40


def _png(shade: int = 3) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (8, 6), (1, 2, shade)).save(buffer, format="PNG")
    return buffer.getvalue()


def _row(number: int, image: dict | str) -> dict:
    return {
        "id": f"s{number}",
        "image": image,
        "caption": f"Sample {number}.",
        "hallucinated": False,
        "category": None,
        "explanation": "",
        "boxes": [],
    }


def _parquet(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def _card(folder: Path, configs: list[dict]) -> None:
    import yaml

    (folder / "README.md").write_text(f"---\n{yaml.safe_dump({'configs': configs})}---\n")


def _names(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def _planted(tmp_path: Path, word: str) -> list[str]:
    """Every path under ``tmp_path`` whose name holds ``word``, outside the Hub's cache."""
    return [
        name for name in _names(tmp_path) if word in name.rpartition("/")[2]
        and not name.startswith("hf-cache/")
    ]  # fmt: skip


# --- 1. nothing is written outside the folder gavel was told to write to -----------------------


@pytest.mark.parametrize(
    "configs",
    [
        [{"config_name": "../../../../../escaped", "default": True,
          "data_files": [{"split": "test", "path": "data/test-*.parquet"}]}],
        [{"config_name": "default",
          "data_files": [{"split": "../../../../../escaped", "path": "data/test-*.parquet"}]}],
    ],
    ids=["config_name", "split"],
)  # fmt: skip
def test_a_card_naming_a_config_or_split_with_dotdot_writes_nothing_outside_the_cache(
    tmp_path, gavel_main, hub_cache, configs
):
    repo = tmp_path / "repo"
    _parquet(repo / "data" / "test-00000-of-00001.parquet", [_row(1, {"bytes": _png()})])
    _card(repo, configs)
    hub_cache.add("stranger/card", repo, COMMIT)
    done = gavel_main("data", "stats", "hf:stranger/card")
    assert done.code == 2 and "Traceback" not in done.text, done.text
    assert "README.md" in done.err and "is not a single file or folder name" in done.err
    assert _planted(tmp_path, "escaped") == []


def test_image_names_of_parquet_rows_are_written_under_images_only(tmp_path, gavel_main):
    home = tmp_path / "home"
    home.mkdir()
    rows = [
        _row(1, {"bytes": _png(1), "path": ".ssh/authorized_keys"}),
        _row(2, {"bytes": _png(2), "path": ".profile"}),
        _row(3, {"bytes": _png(3), "path": "../x"}),
        _row(4, {"bytes": _png(4), "path": str(tmp_path / "absolute.png")}),
        _row(5, {"bytes": _png(5), "path": "bin/ls"}),
        _row(6, {"bytes": _png(6), "path": "images/kept.png"}),
    ]
    evil = _parquet(tmp_path / "evil.parquet", rows)
    done = gavel_main("data", "convert", evil, home / "d.jsonl")
    assert done.code == 0, done.text
    assert sorted(p.name for p in home.iterdir()) == ["d.jsonl", "images"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil.parquet", "home"]
    records = [json.loads(line) for line in (home / "d.jsonl").read_text().splitlines()]
    for record, row in zip(records, rows, strict=True):
        assert record["image"].startswith("images/")
        assert (home / record["image"]).read_bytes() == row["image"]["bytes"]
    assert records[5]["image"] == "images/kept.png"
    assert records[0]["image"] == "images/.ssh/authorized_keys"


def test_a_split_flag_that_climbs_out_of_the_output_is_refused(tmp_path, gavel_main):
    from PIL import Image

    (tmp_path / "src" / "images").mkdir(parents=True)
    Image.new("RGB", (8, 6)).save(tmp_path / "src" / "images" / "a.png")
    line = {"id": "a", "image": "images/a.png", "caption": "A.", "hallucinated": False,
            "category": None, "explanation": "", "boxes": []}  # fmt: skip
    (tmp_path / "src" / "g.jsonl").write_text(json.dumps(line) + "\n")
    out = tmp_path / "deep" / "er" / "OUT"
    out.parent.mkdir(parents=True)
    for split in ("x/../../../../d/evil", "..", "", "a\nb"):
        done = gavel_main("data", "convert", tmp_path / "src" / "g.jsonl", out, "--split", split)
        assert done.code == 2 and "Traceback" not in done.text, done.text
        assert "--split" in done.err
    assert _names(tmp_path / "deep") == ["er"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep", "src"]


# --- 2. nothing outside the dataset is read ---------------------------------------------------


@pytest.fixture
def secret(tmp_path) -> Path:
    """A file beside the dataset that a card or a row must not reach: a valid GAVEL row."""
    (tmp_path / "secret.png").write_bytes(_png(9))
    path = tmp_path / "secret.jsonl"
    path.write_text(json.dumps(_row(1, "secret.png")) + "\n")
    return path


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "absolute glob"])
def test_card_data_files_outside_the_dataset_are_not_read(tmp_path, gavel_main, secret, kind):
    ds = tmp_path / "ds"
    _parquet(ds / "data" / "test-00000-of-00001.parquet", [_row(1, {"bytes": _png()})])
    path = {"dotdot": "../secret.jsonl", "absolute": str(secret),
            "absolute glob": str(tmp_path / "secret*.jsonl")}[kind]  # fmt: skip
    _card(ds, [{"config_name": "default", "data_files": [{"split": "test", "path": path}]}])
    done = gavel_main("data", "stats", ds)
    assert done.code == 2 and "Traceback" not in done.text, done.text
    assert f"{ds / 'README.md'}" in done.err and "data_files" in done.err
    assert "escapes the dataset" in done.err or "not allowed" in done.err


def test_a_card_of_the_wrong_shape_is_one_message(tmp_path, gavel_main):
    ds = tmp_path / "ds"
    _parquet(ds / "data" / "test-00000-of-00001.parquet", [_row(1, {"bytes": _png()})])
    (ds / "README.md").write_text("---\nconfigs: 5\n---\n")
    done = gavel_main("data", "stats", ds)
    assert done.code == 2 and "Traceback" not in done.text, done.text
    assert "configs" in done.err and "expected a list" in done.err


def test_a_data_file_linking_out_of_the_dataset_is_not_read(tmp_path, gavel_main, secret):
    ds = tmp_path / "ds"
    _parquet(ds / "data" / "test-00000-of-00001.parquet", [_row(1, {"bytes": _png()})])
    (ds / "data" / "train.jsonl").symlink_to(secret)
    done = gavel_main("data", "stats", f"{ds}", "--format", "json")
    assert done.code == 0, done.text  # the test split is the default: the link is not read
    (ds / "data" / "test-00000-of-00001.parquet").unlink()
    (ds / "data" / "train.jsonl").unlink()
    (ds / "data" / "x.parquet").symlink_to(secret.with_suffix(".parquet"))
    _parquet(secret.with_suffix(".parquet"), [_row(1, {"bytes": _png()})])
    done = gavel_main("data", "stats", ds)
    assert done.code == 2 and "outside" in done.err and "Traceback" not in done.text, done.text


def test_an_image_path_linking_out_of_the_dataset_is_not_followed(
    tmp_path, gavel_main, secret, monkeypatch
):
    monkeypatch.setenv("GAVEL_CACHE_DIR", str(tmp_path / "cache"))
    ds = tmp_path / "ds"
    _parquet(ds / "data" / "test-00000-of-00001.parquet", [_row(1, {"path": "leak.png"})])
    (ds / "data" / "leak.png").symlink_to(tmp_path / "secret.png")
    done = gavel_main("data", "convert", ds, tmp_path / "out" / "d.jsonl")
    assert done.code == 2 and "Traceback" not in done.text, done.text
    assert "field 'image.path'" in done.err and "outside" in done.err
    assert not (tmp_path / "out").exists() or _names(tmp_path / "out") == []
    done = gavel_main("data", "stats", ds)
    assert done.code == 2 and "outside" in done.err
    assert not [n for n in _names(tmp_path / "cache") if n.endswith(".png")]
