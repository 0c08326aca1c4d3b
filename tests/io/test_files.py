"""Atomic writes: all or nothing, and files as readable as ones written directly."""

from __future__ import annotations

import os
import stat

import pytest

from gavel.io.files import atomic_write_bytes, atomic_write_lines


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_an_atomic_write_gets_the_mode_of_a_plain_write(tmp_path):
    plain = tmp_path / "plain.txt"
    plain.write_bytes(b"x")
    atomic_write_bytes(tmp_path / "atomic.json", b"{}")
    atomic_write_lines(tmp_path / "lines.jsonl", [b"{}"])
    assert mode(tmp_path / "atomic.json") == mode(plain) == mode(tmp_path / "lines.jsonl")
    assert (tmp_path / "lines.jsonl").read_bytes() == b"{}\n"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "results.json"
    target.write_bytes(b"old")

    def broken():
        yield b"new"
        raise RuntimeError("disk gone")

    with pytest.raises(RuntimeError):
        atomic_write_lines(target, broken())
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]
