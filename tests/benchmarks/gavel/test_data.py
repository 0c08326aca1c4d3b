"""The GAVEL loader: every rejected input names file, line and field."""

from __future__ import annotations

import json
import tracemalloc

import pytest
from PIL import Image

from gavel.benchmarks.gavel.data import GavelLoader, load_samples, validate_file
from gavel.errors import DataError


def record(**overrides):
    base = {
        "id": "s1",
        "image": "images/a.png",
        "caption": "A red square sits next to a blue circle.",
        "hallucinated": True,
        "category": "Color",
        "explanation": "The square is green, not red.",
        "boxes": [[10, 20, 30, 40]],
        "width": 200,
        "height": 100,
    }
    base.update(overrides)
    return base


def write(tmp_path, *lines, name="data.jsonl"):
    path = tmp_path / name
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    )
    return path


def error_of(path) -> DataError:
    with pytest.raises(DataError) as info:
        load_samples(path)
    return info.value


def test_a_valid_file_loads_with_xyxy_boxes(tmp_path):
    samples, loader = load_samples(
        write(tmp_path, record(), record(id="s2", hallucinated=False, category=None, boxes=[]))
    )
    assert [s.id for s in samples] == ["s1", "s2"]
    assert samples[0].boxes == [(10.0, 20.0, 40.0, 60.0)]
    assert samples[0].column == "Color"
    assert samples[1].column == "No hall."
    assert len(loader.sha256) == 64


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ("{not json", None, "not valid JSON"),
        (record(id=None), "id", "Expected `str`"),
        ({k: v for k, v in record().items() if k != "id"}, "id", "missing required field"),
        (record(category="Colour"), "category", "unknown category 'Colour'"),
        (record(category=None), "category", "missing"),
        (record(hallucinated=False), "category", "must be null"),
        (record(hallucinated=False, category=None), "boxes", "must be empty"),
        (record(boxes=[[1, 2, 3]]), "boxes[0]", "expected [x, y, w, h]"),
        (record(boxes=[[1, 2, -3, 4]]), "boxes[0]", "negative width or height"),
        (record(boxes=[[1, 2, 0, 4]]), "boxes[0]", "zero-size"),
        (record(boxes=[[500, 500, 10, 10]]), "boxes[0]", "outside"),
        (record(image="../../etc/passwd"), "image", "escapes the data root"),
        (record(image="/etc/passwd"), "image", "absolute image path"),
        (record(image="C:\\data\\a.png"), "image", "absolute image path"),
        (record(image="images/../../a.png"), "image", "escapes the data root"),
        (record(caption="  "), "caption", "empty caption"),
        (record(width=0), "width", "positive"),
        (record(boxes=[["a", 1, 2, 3]]), "boxes[0][0]", "Expected `float`"),
    ],
)
def test_each_bad_line_is_located(tmp_path, line, field, message):
    path = write(tmp_path, record(id="ok"), line)
    error = error_of(path)
    assert error.path == str(path)
    assert error.line == 2
    assert error.field == field
    assert message in error.message
    assert "line 2" in str(error)


def test_non_finite_box_is_named(tmp_path):
    path = write(
        tmp_path,
        '{"id": "a", "image": "a.png", "caption": "x", "hallucinated": true, '
        '"category": "Obj", "boxes": [[NaN, 1, 2, 3]], "width": 5, "height": 5}',
    )
    error = error_of(path)
    assert (error.line, error.field) == (1, "boxes[0]")
    assert "non-finite" in error.message


def test_duplicate_id_names_both_lines(tmp_path):
    error = error_of(write(tmp_path, record(), record(id="x"), record()))
    assert (error.line, error.field) == (3, "id")
    assert "first on line 1" in error.message


def test_boxes_sticking_out_are_clipped_and_counted(tmp_path):
    samples, loader = load_samples(
        write(tmp_path, record(boxes=[[-10, 90, 50, 30], [150, 0, 100, 10]]))
    )
    assert samples[0].boxes == [(0.0, 90.0, 40.0, 100.0), (150.0, 0.0, 200.0, 10.0)]
    assert loader.report.clipped_boxes == 2


def test_size_is_read_from_the_image_when_absent(tmp_path):
    (tmp_path / "images").mkdir()
    Image.new("RGB", (64, 48)).save(tmp_path / "images" / "a.png")
    line = record(boxes=[[1, 1, 5, 5]])
    del line["width"], line["height"]
    samples, loader = load_samples(write(tmp_path, line))
    assert (samples[0].width, samples[0].height) == (64, 48)
    assert loader.report.sizes_read_from_images == 1


def test_missing_size_and_missing_image_is_an_error(tmp_path):
    line = record()
    del line["width"]
    error = error_of(write(tmp_path, line))
    assert error.field == "width"
    assert "not found" in error.message


def test_symlink_escaping_the_root_is_refused(tmp_path):
    outside = tmp_path / "outside.png"
    Image.new("RGB", (8, 8)).save(outside)
    root = tmp_path / "root"
    root.mkdir()
    (root / "link.png").symlink_to(outside)
    line = record(image="link.png", boxes=[[1, 1, 2, 2]])
    del line["width"], line["height"]
    path = write(root, line)
    error = error_of(path)
    assert error.field == "image"
    assert "escapes" in error.message


def test_empty_file_is_an_error(tmp_path):
    assert "no samples" in str(error_of(write(tmp_path)))


def test_missing_file_is_an_error(tmp_path):
    assert "file not found" in str(error_of(tmp_path / "nope.jsonl"))


def test_validate_collects_every_problem(tmp_path):
    path = write(
        tmp_path, record(), record(id="b", category="X"), record(id="c", boxes=[[1]]), record()
    )
    report, errors = validate_file(path)
    assert [(e.line, e.field) for e in errors] == [(2, "category"), (3, "boxes[0]"), (4, "id")]
    assert report.samples == 1


def test_a_100k_line_file_streams_in_bounded_memory(tmp_path):
    path = tmp_path / "big.jsonl"
    with path.open("w") as handle:
        for i in range(100_000):
            handle.write(json.dumps(record(id=f"s{i}")) + "\n")
    tracemalloc.start()
    count = sum(1 for _ in GavelLoader(path))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert count == 100_000
    # Only the id index grows with the file (about 100 bytes per id); the records do not.
    assert peak < 30 * 1024 * 1024


@pytest.mark.parametrize("width", ["1" + "0" * 30, "7" * 5000, str(2**31)])
def test_sizes_no_image_has_are_refused(tmp_path, width):
    line = json.dumps(record(width="@")).replace('"@"', width)
    error = error_of(write(tmp_path, line))
    assert (error.line, error.field) == (1, "width")
    assert "no image has a side that long" in error.message or "out of range" in error.message


def test_a_gold_box_whose_sum_overflows_is_not_called_zero_size(tmp_path):
    """Each value is finite; 1e308 + 1e308 is not. The box lies far outside the image."""
    error = error_of(write(tmp_path, record(boxes=[[1e308, 1e308, 1e308, 1e308]])))
    assert error.field == "boxes[0]"
    assert "zero-size" not in error.message and "lies outside the 200x100 image" in error.message
    covering = load_samples(write(tmp_path, record(boxes=[[0, 0, 1e308, 1e308]])))[0][0]
    assert covering.boxes == [(0.0, 0.0, 200.0, 100.0)]  # clipped to the image


def test_lone_surrogates_and_deep_nesting_are_located(tmp_path):
    surrogate = json.dumps(record()).replace('"s1"', '"s\\udfff"')
    error = error_of(write(tmp_path, json.dumps(record(id="s0")), surrogate))
    assert (error.line, error.field) == (2, "id") and "lone surrogate" in error.message
    deep = json.dumps(record(extra="@")).replace('"@"', "[" * 1000 + "]" * 1000)
    error = error_of(write(tmp_path, deep))
    assert error.line == 1 and "nested too deeply" in error.message
