"""Rows written out in each loader's layout: DetailVerifyBench from Parquet, VideoHallucer
rows nested as the release's JSON, names shared by rows, and two builds racing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GAVEL_CACHE_DIR", str(tmp_path / "cache"))


def test_detailverify_rows_from_parquet_with_embedded_images(tmp_path, gavel_main):
    from gavel.benchmarks.detailverify.data import read_samples
    from gavel.sources import resolve_data

    done = gavel_main("synth", "--benchmark", "detailverify", "--n", "3", "--out", tmp_path / "d")
    assert done.code == 0, done.text
    lines = [
        json.loads(line) for line in (tmp_path / "d" / "real_test.jsonl").read_text().splitlines()
    ]
    images = {line["filename"]: (tmp_path / "d" / line["image"]).read_bytes() for line in lines}
    rows = [line | {"image": {"bytes": images[line["filename"]], "path": None}} for line in lines]
    data = tmp_path / "real_test.parquet"
    pq.write_table(pa.Table.from_pylist(rows), data)

    path, root, source = resolve_data("detailverify", data)
    samples, _ = read_samples(path)
    local, _ = read_samples(tmp_path / "d" / "real_test.jsonl")
    assert samples == local
    for sample in samples:
        assert (root / sample.image).read_bytes() == images[sample.id]
    assert source["rows"] == 3


def test_detailverify_jsonl_errors_name_the_line(tmp_path, hub_cache):
    from gavel.errors import DataError
    from gavel.sources import resolve_data

    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    (repo / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    good = {"image": "pic.png", "image_path": "x/pic.png", "description_tag": "A cat."}
    bad = {
        "image": "pic.png",
        "image_path": "x/two.png",
        "description_tag": "<HALLUCINATION>A cat.",
    }
    (repo / "data" / "test.jsonl").write_text(json.dumps(good) + "\n\n" + json.dumps(bad) + "\n")
    snapshot = hub_cache.add("owner/dvb", repo, "c" * 40)
    with pytest.raises(DataError) as raised:
        resolve_data("detailverify", "hf:owner/dvb")
    assert str(raised.value).startswith(
        f"{snapshot / 'data' / 'test.jsonl'}, line 3, field 'description_tag': unbalanced gold tags"
    )


def test_videohallucer_rows_nested_as_the_release(tmp_path):
    from gavel.benchmarks.videohallucer.data import load_dataset
    from gavel.sources import resolve_data

    video = b"\x00\x00\x00\x18ftypmp42 not really a video"
    rows = [
        {
            "category": "object_relation",
            "type": "subject",
            "basic": {"video": {"bytes": video, "path": "v1.mp4"}, "question": "A?", "answer": "yes"},
            "hallucination": {"video": {"bytes": video, "path": "v1.mp4"}, "question": "B?", "answer": "No "},
        },
        {
            "category": "external_factual",
            "type": None,
            "basic": {"video": {"bytes": video, "path": None}, "question": "C?", "answer": "yes"},
            "hallucination": {
                "video": {"bytes": video, "path": None}, "question": "D?", "answer": "no",
                "explanation": "Because.",
            },
        },
    ]  # fmt: skip
    data = tmp_path / "vh.parquet"
    pq.write_table(pa.Table.from_pylist(rows), data)
    path, root, _ = resolve_data("videohallucer", data)
    loaded = load_dataset(path)
    assert [p.id for p in loaded.pairs] == ["object_relation/0", "external_factual/0"]
    first, second = loaded.pairs
    assert (first.basic.video, first.hallucination.answer, first.type) == (
        "v1.mp4",
        "no",
        "subject",
    )
    assert second.hallucination.explanation == "Because."
    assert second.basic.video.endswith(".mp4")  # named by content, the suffix from its bytes
    for pair in loaded.pairs:
        assert (root / pair.category / "videos" / pair.basic.video).read_bytes() == video


def test_one_name_with_two_contents_is_an_error(tmp_path):
    from gavel.errors import DataError
    from gavel.sources import resolve_data

    def row(number: int, data: bytes) -> dict:
        return {"id": f"s{number}", "image": {"bytes": data, "path": "images/same.png"},
                "caption": "A caption.", "hallucinated": False, "category": None,
                "width": 4, "height": 4}  # fmt: skip

    data = tmp_path / "two.parquet"
    pq.write_table(pa.Table.from_pylist([row(1, b"one"), row(2, b"one"), row(3, b"two")]), data)
    with pytest.raises(DataError, match=r"field 'image': row 3: 'images/same.png' is named by an"):
        resolve_data("gavel", data)


def test_two_builds_of_one_folder_end_with_one_complete_copy(tmp_path):
    from gavel.benchmarks.gavel import LAYOUT
    from gavel.sources import resolve_data
    from gavel.sources.card import Selection
    from gavel.sources.materialize import _build

    row = {"id": "s1", "image": {"bytes": b"x", "path": "i.png"}, "caption": "A caption.",
           "hallucinated": False, "category": None, "width": 4, "height": 4}  # fmt: skip
    data = tmp_path / "one.parquet"
    pq.write_table(pa.Table.from_pylist([row]), data)
    first = resolve_data("gavel", data)
    folder = Path(first.source["materialized"])
    # a second process that started before the first finished renames onto the finished copy
    again = _build(LAYOUT, tmp_path, Selection([data], None, None), folder, {"source": "parquet"})
    assert Path(again["data"]) == first.path
    assert sorted(p.name for p in folder.parent.iterdir()) == [folder.name]  # no staging left


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "JSON nested too deeply"),
        ('{"note": "\\udfff"}', "lone surrogate escape (not Unicode text)"),
        ('{"note": ' + "7" * 5000 + "}", "not valid JSON (a number with too many digits)"),
        ("[1]", "not a JSON object"),
    ],
    ids=["deep", "surrogate", "digits", "list"],
)
def test_a_bad_extra_column_is_one_error_naming_the_row(tmp_path, gavel_main, extra, message):
    done = gavel_main("synth", "--n", "2", "--out", tmp_path / "s")
    assert done.code == 0, done.text
    source = tmp_path / "s" / "gavel.jsonl"
    lines = [json.loads(line) for line in source.read_text().splitlines()]
    lines[0]["note"] = "kept in the extra column"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert gavel_main("data", "convert", source, tmp_path / "pq").code == 0
    shard = next((tmp_path / "pq" / "data").glob("*.parquet"))
    table = pq.read_table(shard)
    column = table.column("extra").to_pylist()
    column[0] = extra
    index = table.schema.get_field_index("extra")
    pq.write_table(table.set_column(index, "extra", pa.array(column, pa.string())), shard)
    for args in (["data", "validate", tmp_path / "pq"],
                 ["data", "convert", tmp_path / "pq", tmp_path / "back.jsonl"]):  # fmt: skip
        done = gavel_main(*args)
        assert done.code == 2, done.text
        assert done.err.strip() == f"error: {shard}, field 'extra': row 1: {message}"
    assert not (tmp_path / "back.jsonl").exists()
