"""What the operating system says, and what nobody expected, ends in one line (cli/failures.py),
through the real entry point."""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from gavel.cli.failures import BUG_EXIT, DEBUG_VARIABLE, os_error_message, report_failure
from gavel.examples import example_dir

PHOTOS = example_dir("photos")


def score(out: Path) -> list:
    return ["score", "--data", PHOTOS / "gavel.jsonl",
            "--predictions", PHOTOS / "predictions" / "gemini.jsonl",
            "--out", out, "--bootstrap", "0"]  # fmt: skip


def test_an_out_path_that_is_a_folder_or_under_a_file_is_named(tmp_path, gavel_main):
    (tmp_path / "results.json").mkdir()
    code, text = gavel_main(*score(tmp_path / "results.json"))
    assert code == 2
    assert text.strip().endswith(f"error: {tmp_path / 'results.json'}: it is a folder, not a file "
                                 "(Is a directory)")  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]  # nothing beside it
    (tmp_path / "plain").write_text("x")
    code, text = gavel_main(*score(tmp_path / "plain" / "run" / "results.json"))
    assert code == 2
    assert "a part of the path is a file, not a folder" in text and "Traceback" not in text
    assert gavel_main(*score(tmp_path / "ok" / "results.json")).code == 0
    code, text = gavel_main("report", tmp_path / "ok", "--out", tmp_path / "plain")
    assert code == 2 and str(tmp_path / "plain") in text and "Traceback" not in text


def test_a_read_only_folder_and_a_full_disk_are_named(tmp_path, gavel_main, monkeypatch):
    """The tests run as any user (root ignores permissions), so the file system's answer is
    injected where gavel creates its temporary file."""
    import tempfile

    for code_number, words in ((errno.EROFS, "the file system is read-only"),
                               (errno.ENOSPC, "the disk is full")):  # fmt: skip

        def refuse(*args, number=code_number, **kwargs):
            raise OSError(number, os.strerror(number), kwargs.get("dir"))

        monkeypatch.setattr(tempfile, "mkstemp", refuse)
        code, text = gavel_main(*score(tmp_path / "run" / "results.json"))
        assert code == 2, text
        assert f"error: {tmp_path / 'run'}: {words} ({os.strerror(code_number)})" in text
        monkeypatch.undo()
    assert not (tmp_path / "run" / "results.json").exists()


def test_data_commands_on_empty_inputs(tmp_path, gavel_main):
    (tmp_path / "blank.jsonl").write_text("\n   \n")
    for args in (["data", "validate", "/dev/null"], ["data", "stats", "/dev/null"],
                 ["data", "stats", tmp_path / "blank.jsonl"]):  # fmt: skip
        code, text = gavel_main(*args)
        assert code != 0 and "no samples in file" in text and "Traceback" not in text


@pytest.mark.parametrize("content", [b"SQLite format 2\x00" + bytes(200), b"hello\n"])
def test_an_annotation_project_that_is_not_sqlite(tmp_path, gavel_main, content):
    project = tmp_path / "project.sqlite"
    project.write_bytes(content)
    for args in (
        ["init", "--db", project],
        ["serve", "--db", project],
        ["check", "--db", project],
        ["export", "--db", project, "--out", tmp_path / "out.jsonl"],
        ["user", "add", "--db", project, "--name", "ana", "--role", "annotator"],
    ):
        code, text = gavel_main("annotate", *args)
        assert code == 2, (args, text)
        assert f"error: {project} is not a gavel annotation project (not SQLite)" in text
    assert project.read_bytes() == content
    assert not (tmp_path / "out.jsonl").exists()


def test_os_error_messages_name_both_paths_of_a_rename():
    error = OSError(errno.EXDEV, "Invalid cross-device link", "a/x.tmp", None, "b/x")
    assert os_error_message(error) == "a/x.tmp -> b/x: Invalid cross-device link"
    assert os_error_message(OSError(errno.EFBIG, "File too large", "r.json")) == (
        "r.json: the file-size limit was reached (File too large)"
    )


def test_an_unexpected_error_is_one_line_and_a_debug_variable_shows_it(capsys, monkeypatch):
    monkeypatch.delenv(DEBUG_VARIABLE, raising=False)
    assert report_failure(ZeroDivisionError("division by zero")) == BUG_EXIT
    line = capsys.readouterr().err
    assert line.count("\n") == 1
    assert line.startswith("error: internal error (ZeroDivisionError: division by zero)")
    assert f"rerun with {DEBUG_VARIABLE}=1" in line
    assert report_failure(sqlite3.DatabaseError("disk I/O error")) == 2
    assert capsys.readouterr().err == "error: database: disk I/O error\n"
    monkeypatch.setenv(DEBUG_VARIABLE, "1")
    with pytest.raises(ZeroDivisionError):
        report_failure(ZeroDivisionError("division by zero"))


LIMITED = (
    "import resource, sys\n"
    "limit = int(sys.argv[1])\n"
    "resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))\n"
    "from gavel.cli.main import main\n"
    "main(sys.argv[2:])\n"
)


def generate_limited(limit: int, *args) -> subprocess.CompletedProcess[str]:
    """``gavel generate`` in a child process whose files may not grow past ``limit`` bytes."""
    return subprocess.run([sys.executable, "-c", LIMITED, str(limit), "generate", *map(str, args)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_answers_that_hit_the_file_size_limit_name_the_file_and_resume(tmp_path, gavel_main):
    assert gavel_main("synth", "--n", "6", "--out", tmp_path / "set").code == 0
    args = ["--data", tmp_path / "set" / "gavel.jsonl", "--model", "scene", "--no-progress",
            "--out", tmp_path / "pred.jsonl"]  # fmt: skip
    done = generate_limited(700, *args)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"error: {tmp_path / 'pred.jsonl'}: the file-size limit was reached" in done.stderr
    code, text = gavel_main("generate", *args)  # resumes: a torn last line is repaired
    assert code == 0, text
    lines = (tmp_path / "pred.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["id"] for line in lines) == [f"synth-{i:05d}" for i in range(6)]
