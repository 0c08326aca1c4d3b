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
    for args in (["data", "validate", tmp_path / "blank.jsonl"],
                 ["data", "stats", tmp_path / "blank.jsonl"]):  # fmt: skip
        code, text = gavel_main(*args)
        assert code != 0 and "no samples in file" in text and "Traceback" not in text
    for args in (["data", "validate", "/dev/null"], ["data", "stats", "/dev/null"]):
        code, text = gavel_main(*args)  # a device is never read as data, however empty
        assert code != 0 and "gavel reads regular files only" in text and "Traceback" not in text


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


def test_results_that_hit_the_file_size_limit_leave_the_old_pair(tmp_path, gavel_main):
    """The file-size limit stands in for a full disk where no small file system can be mounted
    (tests/cli/test_full_disk.py mounts one): results.json and results.scores.jsonl change
    together or not at all."""
    out = tmp_path / "run" / "results.json"
    assert gavel_main(*score(out)).code == 0
    before = {p.name: p.read_bytes() for p in out.parent.iterdir()}
    limit = min(len(data) for data in before.values()) + 100  # the new pair is larger
    args = [*score(out)[:4], PHOTOS / "predictions" / "gpt.jsonl", *score(out)[5:]]
    done = subprocess.run([sys.executable, "-c", LIMITED, str(limit), *map(str, args)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "the file-size limit was reached (File too large)" in done.stderr
    assert {p.name: p.read_bytes() for p in out.parent.iterdir()} == before
    assert gavel_main(*args).code == 0
    assert {p.name: p.read_bytes() for p in out.parent.iterdir()} != before


# --- clean exits against a real OpenAI-protocol server on loopback ----------------------------

#: Every ResourceWarning shown: an unclosed socket or session would print one.
WARNINGS = ["-W", "always::ResourceWarning"]
LEAKS = ("Unclosed", "ResourceWarning", "Traceback")


def gavel_process(*args, popen: bool = False):
    command = [sys.executable, *WARNINGS, "-m", "gavel", *map(str, args)]
    if popen:
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def generating(url: str, out: Path) -> list:
    return ["generate", "--data", PHOTOS / "gavel.jsonl", "--model", "openai:m",
            "--base-url", url, "--api-key-env", "GAVEL_TEST_KEY", "--no-cache",
            "--no-progress", "--out", out]  # fmt: skip


def judging(url: str, out: Path) -> list:
    return [*score(out), "--judge", "openai:m", "--judge-base-url", url,
            "--judge-api-key-env", "GAVEL_TEST_KEY", "--no-judge-cache"]  # fmt: skip


def closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def interrupted(process, server, after: int) -> tuple[int, str]:
    """SIGINT once the server has seen ``after`` requests; (exit status, stderr)."""
    import signal
    import time

    deadline = time.monotonic() + 60
    while server.hits < after and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    return process.returncode, stderr


def test_no_connection_is_left_open_on_any_way_a_generation_ends(server, fake, api_key, tmp_path):
    server.served = [{"id": "another-model", "owned_by": "vllm"}]
    refused = gavel_process(*generating(server.url, tmp_path / "a.jsonl"))
    assert refused.returncode == 2 and "does not serve the model 'm'" in refused.stderr
    assert server.hits == 0 and server.models_asked == 1
    server.served = None
    away = gavel_process(*generating(f"http://127.0.0.1:{closed_port()}/v1", tmp_path / "b.jsonl"))
    assert away.returncode == 2 and "connection refused" in away.stderr
    server.plan = lambda body, number: fake.Fault(status=401, message="Incorrect API key")
    stopped = gavel_process(*generating(server.url, tmp_path / "c.jsonl"))
    assert stopped.returncode == 2 and "requests sent, alike: HTTP 401" in stopped.stderr
    server.plan, server.latency = None, 0.3
    hits = server.hits
    code, stderr = interrupted(
        gavel_process(*generating(server.url, tmp_path / "d.jsonl"), "--concurrency", "2",
                      popen=True), server, hits + 3)  # fmt: skip
    assert code == 130 and "interrupted:" in stderr
    for done in (refused.stderr, away.stderr, stopped.stderr, stderr):
        assert not any(word in done for word in LEAKS), done


def results_of(out: Path) -> dict:
    assert out.exists(), "results.json is written however the judge ends"
    return json.loads(out.read_text())


def test_results_are_written_when_the_judge_is_refused_stopped_or_interrupted(
    server, fake, api_key, tmp_path
):
    server.served = [{"id": "another-model", "owned_by": "vllm"}]
    refused = gavel_process(*judging(server.url, tmp_path / "a" / "results.json"))
    assert refused.returncode == 2 and "does not serve the model 'm'" in refused.stderr
    assert server.hits == 0
    result = results_of(tmp_path / "a" / "results.json")
    judge = result["metrics"]["explanation"]["judge"]
    assert "does not serve the model 'm'" in judge["stopped"]
    assert result["metrics"]["verification"] and result["metrics"]["grounding"]  # kept
    assert result["counts"]["judge_error"] > 0
    scores = [json.loads(line) for line in (tmp_path / "a" / "results.scores.jsonl").open()]
    assert all(s["judge_detail"].startswith("not judged: the judge run stopped")
               for s in scores if s.get("judge_status") == "judge_error")  # fmt: skip

    server.served = None
    server.plan = lambda body, number: fake.Fault(status=401, message="Incorrect API key")
    stopped = gavel_process(*judging(server.url, tmp_path / "b" / "results.json"))
    assert stopped.returncode == 2 and "the judge did not finish" in stopped.stderr
    assert "Incorrect API key" in results_of(tmp_path / "b" / "results.json")["metrics"][
        "explanation"]["judge"]["stopped"]  # fmt: skip

    server.plan, server.latency = None, 0.3
    server.reply = lambda body, number: '{"score": 4, "reason": "right object"}'
    hits = server.hits
    code, stderr = interrupted(
        gavel_process(*judging(server.url, tmp_path / "c" / "results.json"),
                      "--judge-concurrency", "1", popen=True), server, hits + 2)  # fmt: skip
    assert code == 130, stderr
    result = results_of(tmp_path / "c" / "results.json")
    assert "interrupted" in result["metrics"]["explanation"]["judge"]["stopped"]
    assert result["metrics"]["explanation"]["counts"]["ok"] >= 1  # what was judged is kept
    assert result["metrics"]["explanation"]["judge"]["served_model"] == {"replies": ["m"]}
    for done in (refused.stderr, stopped.stderr, stderr):
        assert not any(word in done for word in LEAKS), done


@pytest.mark.parametrize("damage", ["duplicated", "torn", "not-utf8"])
def test_a_resume_file_that_cannot_be_read_ends_in_its_message_only(
    server, api_key, tmp_path, damage
):
    out = tmp_path / "p.jsonl"
    done = gavel_process(*generating(server.url, out))
    assert done.returncode == 0, done.stderr
    first, second, *rest = out.read_bytes().splitlines(keepends=True)
    broken = {
        "duplicated": [first, first, second],
        "torn": [first, second[: len(second) // 2] + b"\n", *rest],
        "not-utf8": [first, b'{"id": "\xff\xfe"}\n', second],
    }[damage]
    out.write_bytes(b"".join(broken))
    again = gavel_process(*generating(server.url, out))
    assert again.returncode == 2 and str(out) in again.stderr, again.stderr
    assert not any(word in again.stderr for word in LEAKS), again.stderr
    assert len([line for line in again.stderr.splitlines() if line.strip()]) <= 2, again.stderr
    assert out.read_bytes() == b"".join(broken)  # nothing rewritten
