"""``gavel data convert``: GAVEL JSONL + images -> Parquet dataset folder -> JSONL + images,
with the same records and byte-identical images."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pq = pytest.importorskip("pyarrow.parquet")

LINES = [
    {
        "id": "coffee-2",
        "image": "images/coffee.jpg",
        "caption": "A silver spoon rests on the saucer to the left of the cup.",
        "hallucinated": True,
        "category": "Loc",
        "explanation": "The spoon is on the right of the cup, not the left.",
        "boxes": [[32.5, 6.5, 10.0, 26.25]],
        "width": 60,
        "height": 40,
        "source": "llava-next",
        "split": "test",
    },
    {
        "id": "coffee-1",
        "image": "images/coffee.jpg",
        "caption": "A cup of coffee on a saucer.",
        "hallucinated": False,
        "category": None,
        "explanation": "The caption matches the image.",
        "boxes": [],
    },
    {
        "id": "dog-1",
        "image": "images/nested/dog.png",
        "caption": "Two dogs sit on the grass.",
        "hallucinated": True,
        "category": "Qty",
        "explanation": "There is one dog.",
        "boxes": [[1.0, 2.0, 20.0, 10.0], [3.0, 4.0, 5.0, 6.0]],
        "annotator": {"name": "kim", "seconds": 41},
        "notes": ["checked twice"],
    },
]


@pytest.fixture
def gavel_folder(tmp_path) -> Path:
    from PIL import Image

    folder = tmp_path / "src"
    (folder / "images" / "nested").mkdir(parents=True)
    Image.new("RGB", (60, 40), (120, 80, 40)).save(folder / "images" / "coffee.jpg", quality=87)
    Image.new("RGBA", (33, 21), (10, 200, 30, 128)).save(folder / "images" / "nested" / "dog.png")
    (folder / "gavel.jsonl").write_text("".join(json.dumps(line) + "\n" for line in LINES))
    return folder


def test_round_trip_keeps_records_and_image_bytes(tmp_path, gavel_main, gavel_folder):
    done = gavel_main("data", "convert", gavel_folder / "gavel.jsonl", tmp_path / "ds")
    assert done.code == 0, done.text
    assert "3 samples" in done.out
    assert sorted(
        p.relative_to(tmp_path / "ds").as_posix() for p in (tmp_path / "ds").rglob("*")
    ) == [
        "README.md",
        "data",
        "data/test-00000-of-00001.parquet",
    ]
    done = gavel_main("data", "convert", tmp_path / "ds", tmp_path / "back" / "gavel.jsonl")
    assert done.code == 0, done.text

    back = [
        json.loads(line) for line in (tmp_path / "back" / "gavel.jsonl").read_text().splitlines()
    ]
    assert back == LINES
    for image in ("images/coffee.jpg", "images/nested/dog.png"):
        assert (tmp_path / "back" / image).read_bytes() == (gavel_folder / image).read_bytes()

    # and once more: the second Parquet file holds the same table as the first
    done = gavel_main("data", "convert", tmp_path / "back" / "gavel.jsonl", tmp_path / "ds2")
    assert done.code == 0, done.text
    shard = Path("data") / "test-00000-of-00001.parquet"
    assert pq.read_table(tmp_path / "ds2" / shard).equals(pq.read_table(tmp_path / "ds" / shard))


def test_the_dataset_folder_is_what_the_hub_expects(tmp_path, gavel_folder):
    from huggingface_hub.repocard import metadata_load

    from gavel.sources.convert import jsonl_to_parquet

    assert jsonl_to_parquet(gavel_folder / "gavel.jsonl", tmp_path / "ds", split="validation") == 3
    shard = tmp_path / "ds" / "data" / "validation-00000-of-00001.parquet"
    table = pq.read_table(shard)
    features = json.loads(table.schema.metadata[b"huggingface"])["info"]["features"]
    assert features["image"] == {"_type": "Image"}
    assert str(table.schema.field("image").type) == "struct<bytes: binary, path: string>"
    assert table.column("image").to_pylist()[2]["path"] == "images/nested/dog.png"
    assert "extra" in table.column_names  # the fields gavel does not know
    card = metadata_load(tmp_path / "ds" / "README.md")
    assert card["configs"] == [
        {
            "config_name": "default",
            "data_files": [{"split": "validation", "path": "data/validation-*.parquet"}],
        }
    ]
    assert {"name": "image", "dtype": "image"} in card["dataset_info"]["features"]
    (split,) = card["dataset_info"]["splits"]
    assert split == {"name": "validation", "num_bytes": split["num_bytes"], "num_examples": 3}


def test_without_unknown_fields_there_is_no_extra_column(tmp_path, gavel_folder):
    from gavel.sources.convert import jsonl_to_parquet

    plain = gavel_folder / "plain.jsonl"
    plain.write_text("".join(json.dumps(line) + "\n" for line in LINES[:2]))
    jsonl_to_parquet(plain, tmp_path / "ds")
    table = pq.read_table(tmp_path / "ds" / "data" / "test-00000-of-00001.parquet")
    assert "extra" not in table.column_names


def test_existing_output_is_never_overwritten(tmp_path, gavel_main, gavel_folder):
    (tmp_path / "ds").mkdir()
    done = gavel_main("data", "convert", gavel_folder / "gavel.jsonl", tmp_path / "ds")
    assert done.code == 2
    assert "already exists" in done.err
    done = gavel_main("data", "convert", gavel_folder / "gavel.jsonl", tmp_path / "ok")
    assert done.code == 0
    # converting back next to the original images would overwrite them: refused, nothing moved
    done = gavel_main("data", "convert", tmp_path / "ok", gavel_folder / "again.jsonl")
    assert done.code == 2
    assert f"{gavel_folder / 'images'}: already exists" in done.err
    assert not (gavel_folder / "again.jsonl").exists()
    assert sorted(p.name for p in gavel_folder.iterdir()) == ["gavel.jsonl", "images"]


def test_a_bad_line_or_missing_image_names_it_and_writes_nothing(
    tmp_path, gavel_main, gavel_folder
):
    bad = [dict(LINES[0]), dict(LINES[1], category="Loc")]
    (gavel_folder / "bad.jsonl").write_text("".join(json.dumps(line) + "\n" for line in bad))
    done = gavel_main("data", "convert", gavel_folder / "bad.jsonl", tmp_path / "ds")
    assert done.code == 2
    assert "bad.jsonl, line 2, field 'category'" in done.err
    missing = [dict(LINES[0], image="images/gone.jpg")]
    (gavel_folder / "missing.jsonl").write_text(json.dumps(missing[0]) + "\n")
    done = gavel_main("data", "convert", gavel_folder / "missing.jsonl", tmp_path / "ds")
    assert done.code == 2
    assert "missing.jsonl, line 1, field 'image': cannot read" in done.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]  # no staging folder left
    if hasattr(os, "mkfifo"):  # a FIFO as an image is refused, not waited on
        os.mkfifo(gavel_folder / "images" / "pipe.jpg")
        piped = [dict(LINES[0], image="images/pipe.jpg")]
        (gavel_folder / "piped.jsonl").write_text(json.dumps(piped[0]) + "\n")
        done = gavel_main("data", "convert", gavel_folder / "piped.jsonl", tmp_path / "ds")
        assert done.code == 2
        assert "piped.jsonl, line 1, field 'image': " in done.err
        assert "pipe.jpg is a FIFO (named pipe)" in done.err
        assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


def test_the_datasets_library_reads_the_folder_as_images(tmp_path, gavel_folder, monkeypatch):
    """What `datasets.load_dataset` (the Hub's own reader) makes of the converted folder."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    datasets = pytest.importorskip("datasets")
    from gavel.sources.convert import jsonl_to_parquet

    jsonl_to_parquet(gavel_folder / "gavel.jsonl", tmp_path / "ds")
    loaded = datasets.load_dataset(str(tmp_path / "ds"), split="test", cache_dir=tmp_path / "hf")
    assert isinstance(loaded.features["image"], datasets.Image)
    assert loaded[2]["image"].size == (33, 21)  # decoded as a PIL image
    assert loaded["id"] == [line["id"] for line in LINES]
    assert loaded[0]["boxes"] == LINES[0]["boxes"]
    raw = loaded.cast_column("image", datasets.Image(decode=False))
    for row, line in zip(raw, LINES, strict=True):
        assert row["image"]["bytes"] == (gavel_folder / line["image"]).read_bytes()


def test_the_card_gives_each_split_its_size_as_the_datasets_library_reads_it(
    tmp_path, gavel_folder, monkeypatch
):
    """``dataset_info.splits[].num_bytes`` (the split's size as Arrow data, what ``datasets``
    counts when it prepares the split, and what ``push_to_hub`` writes), ``download_size`` (the
    split's Parquet files on disk) and ``dataset_size``: without ``num_bytes``, ``datasets``
    ignored the card's splits as malformed."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    datasets = pytest.importorskip("datasets")
    yaml = pytest.importorskip("yaml")
    from gavel.sources.convert import jsonl_to_parquet

    jsonl_to_parquet(gavel_folder / "gavel.jsonl", tmp_path / "ds", split="real_test")
    card = (tmp_path / "ds" / "README.md").read_text()
    info = yaml.safe_load(card.split("---\n")[1])["dataset_info"]
    (split,) = info["splits"]
    files = sorted((tmp_path / "ds" / "data").glob("*.parquet"))
    assert split["name"] == "real_test" and split["num_examples"] == len(LINES)
    assert info["download_size"] == sum(f.stat().st_size for f in files)
    assert info["dataset_size"] == split["num_bytes"]
    # The card as datasets reads it, before preparing anything: every field kept.
    builder = datasets.load_dataset_builder(str(tmp_path / "ds"), cache_dir=tmp_path / "hf")
    assert builder.info.splits["real_test"].num_bytes == split["num_bytes"]
    assert builder.info.splits["real_test"].num_examples == len(LINES)
    assert builder.info.download_size == info["download_size"]
    # What datasets counts itself once it has read the rows (Arrow buffers, padded per batch).
    loaded = datasets.load_dataset(
        str(tmp_path / "ds"), split="real_test", cache_dir=tmp_path / "hf"
    )
    assert split["num_bytes"] == pytest.approx(loaded.info.splits["real_test"].num_bytes, abs=64)
    assert split["num_bytes"] == pytest.approx(loaded.data.nbytes, abs=64)
    images = sum(p.stat().st_size for p in (gavel_folder / "images").rglob("*") if p.is_file())
    assert split["num_bytes"] > images  # the images are embedded (coffee.jpg twice)


@pytest.mark.parametrize("split", ["", "a\nb", "x/../../d", "two words", "-"])
def test_a_split_that_is_no_split_name_is_refused(tmp_path, gavel_main, gavel_folder, split):
    done = gavel_main("data", "convert", gavel_folder / "gavel.jsonl", tmp_path / "ds",
                      "--split", split)  # fmt: skip
    assert done.code == 2, done.text
    assert "Invalid value for '--split'" in done.err and "is not a split name" in done.err
    assert not (tmp_path / "ds").exists()
    dotted = gavel_main("data", "convert", gavel_folder / "gavel.jsonl", tmp_path / "ok",
                        "--split", "real_test.v2")  # fmt: skip
    assert dotted.code == 0, dotted.text
    assert (tmp_path / "ok" / "data" / "real_test.v2-00000-of-00001.parquet").is_file()
