"""Materializing Parquet data: bad files are one located message and leave nothing behind,
a finished folder is reused, a half-written one never is, and memory stays flat."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


def _png(width: int = 8, height: int = 6) -> bytes:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (1, 2, 3)).save(buffer, format="PNG")
    return buffer.getvalue()


def _row(number: int, **changes) -> dict:
    row = {
        "id": f"s{number}",
        "image": {"bytes": _png(), "path": f"images/s{number}.png"},
        "caption": f"Sample {number}.",
        "hallucinated": False,
        "category": None,
        "explanation": "",
        "boxes": [],
    }
    return row | changes


def _write(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=2)
    return path


def _cache_entries(cache: Path) -> list[str]:
    data = cache / "data"
    return sorted(p.relative_to(data).as_posix() for p in data.rglob("*")) if data.exists() else []


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("GAVEL_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_file_that_is_not_parquet_is_named(tmp_path, gavel_main, cache):
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 this is not really parquet")
    done = gavel_main("data", "validate", bad)
    assert done.code == 2
    assert f"error: {bad}: not a readable Parquet file" in done.err
    good = _write(tmp_path / "good.parquet", [_row(n) for n in range(1, 7)])
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    done = gavel_main("data", "validate", cut)
    assert done.code == 2
    assert f"{cut}: not a readable Parquet file" in done.err
    assert "Traceback" not in done.text


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (
            {"image": {"bytes": None, "path": None}},
            "field 'image': row 3: neither bytes nor a path",
        ),
        (
            {"image": {"bytes": None, "path": "images/absent.png"}},
            "field 'image.path': row 3: no bytes embedded and no file 'images/absent.png'",
        ),
        (
            {"image": {"bytes": None, "path": "../outside.png"}},
            "field 'image.path': row 3: path '../outside.png' escapes the data root",
        ),
        (
            {"hallucinated": True, "category": "Nope"},
            "field 'category': row 3: unknown category 'Nope'",
        ),
        (
            {"hallucinated": True, "category": "Color", "boxes": [[1.0, 2.0, -3.0, 4.0]]},
            "field 'boxes[0]': row 3: negative width or height",
        ),
    ],
)
def test_a_bad_row_names_file_row_and_field_and_nothing_is_cached(
    tmp_path, gavel_main, cache, change, where
):
    rows = [_row(1), _row(2), _row(3, **change), _row(4)]
    data = _write(tmp_path / "ds" / "data" / "test-00000-of-00001.parquet", rows)
    done = gavel_main("data", "validate", tmp_path / "ds")
    assert done.code == 2, done.text
    assert f"error: {data}, {where}" in done.err
    assert "Traceback" not in done.text
    leftovers = [p for p in _cache_entries(cache) if not p.count("/") <= 1]
    assert leftovers == []  # no finished folder, no staging folder


def test_rows_of_several_files_are_counted_per_file(tmp_path, gavel_main, cache):
    _write(tmp_path / "ds" / "data" / "test-00000-of-00002.parquet", [_row(1), _row(2)])
    second = _write(
        tmp_path / "ds" / "data" / "test-00001-of-00002.parquet",
        [_row(3), _row(4, caption=" ")],
    )
    done = gavel_main("data", "validate", tmp_path / "ds")
    assert done.code == 2
    assert f"error: {second}, field 'caption': row 2: empty caption" in done.err


def test_a_finished_folder_is_reused_and_a_half_written_one_never_read(tmp_path, cache):
    from gavel.sources import resolve_data
    from gavel.sources.materialize import MARKER

    data = _write(tmp_path / "one.parquet", [_row(n) for n in range(1, 5)])
    first = resolve_data("gavel", data)
    folder = Path(first.source["materialized"])
    # a killed build left a staging folder with a wrong file: ignored
    stale = folder.parent / f".{folder.name}.0123456789ab.tmp"
    stale.mkdir()
    (stale / "data.jsonl").write_text("garbage\n")
    marker = (folder / MARKER).stat()
    again = resolve_data("gavel", data)
    assert again == first
    assert (folder / MARKER).stat().st_mtime_ns == marker.st_mtime_ns  # not rebuilt
    # a folder without its marker (interrupted before the rename cannot happen, but a user may
    # delete the marker) is rebuilt rather than trusted
    (folder / MARKER).unlink()
    (folder / "data.jsonl").write_text("garbage\n")
    with pytest.raises(OSError):
        resolve_data("gavel", data)  # the rename onto an occupied folder is refused


def test_changing_the_data_gives_another_folder(tmp_path, cache):
    from gavel.sources import resolve_data

    data = _write(tmp_path / "one.parquet", [_row(1), _row(2)])
    first = resolve_data("gavel", data)
    _write(data, [_row(1), _row(2, caption="Changed.")])
    second = resolve_data("gavel", data)
    assert first.path != second.path
    assert first.source["data_sha256"] != second.source["data_sha256"]
    assert "Changed." in second.path.read_text()


def test_image_root_is_refused_for_parquet_data(tmp_path, gavel_main, cache):
    data = _write(tmp_path / "one.parquet", [_row(1)])
    done = gavel_main("data", "validate", data, "--image-root", tmp_path)
    assert done.code == 2
    assert "--image-root does not apply to Hub or Parquet data" in done.err


MAKE = textwrap.dedent(
    """
    import os, sys
    import pyarrow as pa, pyarrow.parquet as pq
    path, rows, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    schema = pa.schema([("id", pa.string()), ("image", image), ("caption", pa.string()),
                        ("hallucinated", pa.bool_()), ("category", pa.string()),
                        ("width", pa.int64()), ("height", pa.int64())])
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, rows, 16):
            batch = [{"id": f"s{n}", "image": {"bytes": os.urandom(size), "path": f"i/{n}.png"},
                      "caption": "A caption.", "hallucinated": False, "category": None,
                      "width": 64, "height": 64} for n in range(start, min(rows, start + 16))]
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
    """
)
MEASURE = textwrap.dedent(
    """
    import resource, sys
    from gavel.sources import resolve_data
    resolved = resolve_data("gavel", sys.argv[1])
    print(resolved.source["rows"], resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    """
)


def test_memory_does_not_grow_with_the_dataset(tmp_path):
    """Peak memory (RSS) of materializing 10 MB and 100 MB of embedded images: the tenfold
    dataset may cost a little more (row groups vary), never in proportion."""
    size = 256 * 1024
    peaks = {}
    env = dict(os.environ, GAVEL_CACHE_DIR=str(tmp_path / "cache"))
    for rows in (40, 400):
        data = tmp_path / f"d{rows}.parquet"
        subprocess.run([sys.executable, "-c", MAKE, str(data), str(rows), str(size)], check=True)
        done = subprocess.run(
            [sys.executable, "-c", MEASURE, str(data)],
            capture_output=True, text=True, env=env, check=True, timeout=300,
        )  # fmt: skip
        count, peak_kib = map(int, done.stdout.split())
        assert count == rows
        peaks[rows] = peak_kib * 1024
    growth = peaks[400] - peaks[40]
    data_growth = 360 * size
    assert growth < data_growth / 5, (peaks, data_growth)
    written = sorted((tmp_path / "cache").rglob("i/*.png"))
    assert len(written) == 440


def test_without_the_hub_extra_the_message_names_it(tmp_path, gavel_main, cache, monkeypatch):
    data = _write(tmp_path / "one.parquet", [_row(1)])
    for module in ("pyarrow", "pyarrow.parquet"):
        monkeypatch.setitem(sys.modules, module, None)  # import now fails, as if not installed
    done = gavel_main("data", "validate", data)
    assert done.code == 2
    assert "Hub and Parquet data need pyarrow: pip install 'gavel-eval[hub]'" in done.err
