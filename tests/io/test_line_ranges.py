from __future__ import annotations

import hashlib
import itertools
import random

import pytest

from gavel.errors import DataError
from gavel.io import line_ranges
from gavel.io.jsonl import HashingReader
from gavel.io.line_ranges import file_sha256, lines_between, newlines_between, piece_bounds


def pieces_read(path, pieces):
    bounds = piece_bounds(path, pieces)
    assert bounds is not None
    found = []
    for start, stop in itertools.pairwise(bounds):
        first = 1 + newlines_between(path, 0, start)
        found += list(lines_between(path, start, stop, first))
    return bounds, found


@pytest.mark.parametrize("seed", range(12))
def test_pieces_give_the_lines_and_numbers_a_reading_in_order_gives(tmp_path, seed):
    rng = random.Random(seed)
    lines = []
    for i in range(rng.randint(0, 60)):
        lines.append(rng.choice([b"", b"  ", b"x" * rng.randint(1, 300), b'{"id": %d}' % i]))
    data = b"\n".join(lines) + rng.choice([b"", b"\n"])
    path = tmp_path / "f.jsonl"
    path.write_bytes(data)
    whole = list(HashingReader(path))
    for pieces in (1, 2, 3, 7):
        bounds, found = pieces_read(path, pieces)
        assert found == whole
        assert bounds[0] == 0 and bounds[-1] == len(data) and bounds == sorted(set(bounds))
        assert all(data[cut - 1 : cut] == b"\n" for cut in bounds[1:-1])  # cuts at line starts
    assert file_sha256(path) == hashlib.sha256(data).hexdigest()
    for stop in (0, 1, len(data) // 2, len(data), len(data) + 10):
        assert file_sha256(path, stop) == hashlib.sha256(data[:stop]).hexdigest()


def test_a_line_over_the_limit_near_a_cut_leaves_the_file_in_one_piece(tmp_path, monkeypatch):
    monkeypatch.setattr(line_ranges, "LINE_BYTES", 100)
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"a\n" + b"x" * 500 + b"\nb\n")
    assert piece_bounds(path, 2) is None


def test_a_long_line_inside_a_piece_is_refused_by_its_own_number(tmp_path, monkeypatch):
    from gavel.io import reading

    monkeypatch.setattr(reading, "LINE_BYTES", 100)
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"a\nb\nc\n" + b"x" * 500 + b"\n")
    with pytest.raises(DataError, match=r"line 4: line longer than 100 bytes"):
        list(lines_between(path, 6, path.stat().st_size, 4))


def test_the_hash_of_a_file_or_of_its_first_bytes_read_block_by_block(tmp_path, monkeypatch):
    monkeypatch.setattr(line_ranges, "BLOCK", 7)
    data = bytes(range(256)) * 3
    path = tmp_path / "f.jsonl"
    path.write_bytes(data)
    assert file_sha256(path) == hashlib.sha256(data).hexdigest()
    for stop in (0, 6, 7, 8, 700, len(data), len(data) + 1):
        assert file_sha256(path, stop) == hashlib.sha256(data[:stop]).hexdigest()
