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


def test_files_written_together_all_change_or_none_does(tmp_path, monkeypatch):
    from gavel.io import files

    first, second = tmp_path / "a.scores.jsonl", tmp_path / "a.json"
    first.write_bytes(b"old scores")
    second.write_bytes(b"old summary")
    real = files.stage_bytes
    staged = []

    def full_disk_on_the_second(path, payload):
        if staged:
            raise OSError(28, "No space left on device")
        staged.append(path)
        return real(path, payload)

    monkeypatch.setattr(files, "stage_bytes", full_disk_on_the_second)
    with pytest.raises(OSError, match="No space"):
        files.write_together([(first, b"new scores"), (second, b"new summary")])
    assert (first.read_bytes(), second.read_bytes()) == (b"old scores", b"old summary")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "a.scores.jsonl"]
    monkeypatch.setattr(files, "stage_bytes", real)

    def ledger_fails():
        raise OSError(27, "File too large", str(tmp_path / "ledger"))

    with pytest.raises(OSError, match="too large"):
        files.write_together([(first, b"new"), (second, b"new")], before_commit=ledger_fails)
    assert (first.read_bytes(), second.read_bytes()) == (b"old scores", b"old summary")
    files.write_together([(first, b"new scores"), (second, b"new summary")])
    assert (first.read_bytes(), second.read_bytes()) == (b"new scores", b"new summary")


def test_a_target_that_is_a_folder_is_refused_before_any_file_changes(tmp_path):
    from gavel.io.files import write_together

    (tmp_path / "results.json").mkdir()
    (tmp_path / "results.scores.jsonl").write_bytes(b"old")
    with pytest.raises(IsADirectoryError) as raised:
        write_together(
            [(tmp_path / "results.scores.jsonl", b"new"), (tmp_path / "results.json", b"{}")]
        )
    assert raised.value.filename == str(tmp_path / "results.json")
    assert (tmp_path / "results.scores.jsonl").read_bytes() == b"old"


def test_a_failed_write_names_its_file(tmp_path, monkeypatch):
    import builtins  # noqa: F401 - the failure comes from the real file object

    from gavel.io.files import stage_bytes

    class Refusing:
        def __init__(self, fd, mode):
            os.close(fd)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def write(self, payload):
            raise OSError(30, "Read-only file system")

    monkeypatch.setattr(os, "fdopen", Refusing)
    with pytest.raises(OSError) as raised:
        stage_bytes(tmp_path / "results.json", b"{}")
    assert raised.value.filename == str(tmp_path / "results.json")
    assert list(tmp_path.iterdir()) == []


def test_an_append_that_fails_leaves_no_half_line(tmp_path):
    import resource
    import subprocess
    import sys

    log = tmp_path / "judge-ledger.jsonl"
    log.write_bytes(b'{"first": 1}\n')
    script = (
        "import resource, sys\n"
        "from gavel.io.files import append_line\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (40, 40))\n"
        "try:\n"
        "    append_line(sys.argv[1], b'{\"second\": \"' + b'x' * 100 + b'\"}')\n"
        "except OSError as error:\n"
        "    print(error.filename, error.strerror)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(log)], capture_output=True, text=True)
    assert done.stdout.strip() == f"{log} File too large", done.stderr
    assert log.read_bytes() == b'{"first": 1}\n'
    assert resource.getrlimit(resource.RLIMIT_FSIZE)  # the limit applied to the child only


def test_an_append_that_fails_to_start_a_file_leaves_none(tmp_path):
    import subprocess
    import sys

    log = tmp_path / "judge-ledger.jsonl"
    script = (
        "import resource, sys\n"
        "from gavel.io.files import append_line\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (40, 40))\n"
        "try:\n"
        "    append_line(sys.argv[1], b'x' * 100)\n"
        "except OSError as error:\n"
        "    print(error.strerror)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(log)], capture_output=True, text=True)
    assert done.stdout.strip() == "File too large", done.stderr
    assert list(tmp_path.iterdir()) == []  # not an empty ledger either


def test_a_file_staged_in_many_chunks_names_the_hash_of_all_of_them(tmp_path):
    """From the second chunk on the hash is taken in a thread beside the writes: the same
    SHA-256 as of the bytes written, in order."""
    import hashlib

    from gavel.io.files import stage_chunks

    chunks = [bytes([i]) * (1000 + 37 * i) for i in range(50)]
    for given in (chunks[:1], chunks[:2], chunks):
        temp, sha256 = stage_chunks(tmp_path / "out.jsonl", iter(given))
        assert temp.read_bytes() == b"".join(given)
        assert sha256 == hashlib.sha256(b"".join(given)).hexdigest()
        temp.unlink()
