"""Inputs are regular files: a FIFO or a device is refused at once instead of read."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest

from gavel.errors import DataError
from gavel.io import reading
from gavel.io.jsonl import HashingReader
from gavel.io.reading import bounded_lines, open_regular, read_small


def test_a_fifo_and_a_device_are_refused_naming_the_file(tmp_path):
    fifo = tmp_path / "data.jsonl"
    os.mkfifo(fifo)  # nobody writes to it: opening it for reading would wait forever
    with pytest.raises(DataError, match=r"data\.jsonl: is a FIFO \(named pipe\)"):
        list(HashingReader(fifo))
    with pytest.raises(DataError, match="/dev/zero: is a device"):
        list(HashingReader(Path("/dev/zero")))  # would be read until memory runs out
    with pytest.raises(DataError, match="is a device"):
        read_small("/dev/null", 10, "a test")


def test_a_regular_file_is_read_up_to_its_limit(tmp_path):
    path = tmp_path / "small.txt"
    path.write_bytes(b"x" * 2048)
    assert read_small(path, 2048, "a test") == b"x" * 2048
    with pytest.raises(DataError, match="larger than 1 KiB, too large for a test"):
        read_small(path, 1024, "a test")
    link = tmp_path / "link.txt"
    link.symlink_to(path)  # a link to a regular file is that file
    with open_regular(link) as handle:
        assert handle.read(3) == b"xxx"
    with pytest.raises(IsADirectoryError):
        open_regular(tmp_path)


def test_lines_are_given_as_iteration_gives_them_up_to_the_limit(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"1234\n\n" + b"x" * 9 + b"\n" + b"last")  # 9 bytes and its newline
    with path.open("rb") as handle:
        assert list(bounded_lines(handle, path, limit=10)) == [
            b"1234\n", b"\n", b"x" * 9 + b"\n", b"last"
        ]  # fmt: skip


def test_a_line_longer_than_the_limit_is_refused_without_reading_it_whole(tmp_path):
    path = tmp_path / "long.jsonl"
    path.write_bytes(b'{"id": 1}\n' + b"x" * (8 << 20) + b"\n")  # 8 MiB in one line
    tracemalloc.start()
    try:
        with path.open("rb") as handle, pytest.raises(DataError) as refused:
            list(bounded_lines(handle, path, limit=1 << 16))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (
        str(refused.value)
        == f"{path}, line 2: line longer than 65536 bytes: one line holds one record"
    )
    assert peak < 1 << 20  # a 64 KiB read at most, never the 8 MiB line


def test_the_benchmark_loaders_refuse_a_giant_line_naming_it(tmp_path, monkeypatch, gavel_main):
    monkeypatch.setattr(reading, "LINE_BYTES", 1 << 20)
    data = tmp_path / "gavel.jsonl"
    data.write_bytes(b'{"id": "' + b"a" * (3 << 20) + b'"}\n')
    said = f"{data}, line 1: line longer than 1 MiB: one line holds one record"
    done = gavel_main("data", "validate", data)
    assert done.code == 1 and said in done.err  # validate's exit for a file with problems
    done = gavel_main("generate", "--data", data, "--model", "scene", "--out", tmp_path / "p")
    assert done.code == 2 and said in done.err
