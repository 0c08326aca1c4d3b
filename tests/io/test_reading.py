"""Inputs are regular files: a FIFO or a device is refused at once instead of read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gavel.errors import DataError
from gavel.io.jsonl import HashingReader
from gavel.io.reading import open_regular, read_small


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
