"""Two gavel processes writing one output at once: the second is refused at once, naming the
file and the process that writes it, and touches nothing; a writer killed with SIGKILL blocks
no rerun. Real processes against the loopback OpenAI-protocol server."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from gavel.examples import example_dir
from gavel.io.output_lock import lock_path

PHOTOS = example_dir("photos")
DATA = PHOTOS / "gavel.jsonl"
SAMPLES = len(DATA.read_text().splitlines())
LEAKS = ("Traceback", "Unclosed", "ResourceWarning")


def gavel_process(*args, popen: bool = False):
    command = [sys.executable, "-W", "always::ResourceWarning", "-m", "gavel", *map(str, args)]
    if popen:
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def generating(url: str, out: Path) -> list:
    return ["generate", "--data", DATA, "--model", "openai:m", "--base-url", url,
            "--api-key-env", "GAVEL_TEST_KEY", "--no-cache", "--no-progress",
            "--concurrency", "1", "--out", out]  # fmt: skip


def judging(url: str, out: Path) -> list:
    return ["score", "--data", DATA, "--predictions", PHOTOS / "predictions" / "gpt.jsonl",
            "--out", out, "--bootstrap", "0", "--judge", "openai:m", "--judge-base-url", url,
            "--judge-api-key-env", "GAVEL_TEST_KEY", "--no-judge-cache",
            "--judge-concurrency", "1"]  # fmt: skip


def hold_after(server, answered: int) -> threading.Event:
    """The server answers ``answered`` requests, then holds every further one until the event
    is set: the process asking is then in the middle of its run, on a machine of any speed."""
    go_on = threading.Event()

    def plan(body, number):
        if number > answered:
            go_on.wait(60)
        return None

    server.plan = plan
    return go_on


def wait_for(condition, process, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the run never got there"
        time.sleep(0.02)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def refused_by(done, out: Path, holder) -> None:
    assert done.returncode == 2, done.stderr
    assert not any(word in done.stderr for word in LEAKS), done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: {out} is being written by another gavel process "
                               f"(pid {holder.pid} on {socket.gethostname()}, since ")  # fmt: skip


def test_a_second_generation_into_the_same_file_is_refused(server, api_key, tmp_path):
    out = tmp_path / "pred.jsonl"
    go_on = hold_after(server, 3)
    first = gavel_process(*generating(server.url, out), popen=True)
    try:
        wait_for(lambda: server.hits > 3, first)
        before, hits = snapshot(tmp_path), server.hits
        assert json.loads(lock_path(out).read_text())["pid"] == first.pid
        second = gavel_process(*generating(server.url, out))
        refused_by(second, out, first)
        assert server.hits == hits and server.models_asked == 1  # the second asked nothing
        assert snapshot(tmp_path) == before  # and wrote nothing
    finally:
        go_on.set()
    assert first.wait(timeout=60) == 0, first.communicate()
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == SAMPLES
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pred.jsonl", "pred.manifest.json"]


def test_a_writer_killed_with_sigkill_blocks_no_rerun(server, api_key, tmp_path):
    out = tmp_path / "pred.jsonl"
    go_on = hold_after(server, 4)
    first = gavel_process(*generating(server.url, out), popen=True)
    wait_for(lambda: server.hits > 4, first)
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=30)
    assert lock_path(out).exists()  # left behind; the kernel released the lock
    go_on.set()
    written = len(out.read_text().splitlines())
    hits = server.hits
    again = gavel_process(*generating(server.url, out))
    assert again.returncode == 0, again.stderr
    assert server.hits - hits == SAMPLES - written  # only what was missing was asked
    assert len(out.read_text().splitlines()) == SAMPLES
    assert not lock_path(out).exists()


def test_a_second_scoring_into_the_same_results_is_refused(server, api_key, tmp_path):
    out = tmp_path / "run" / "results.json"
    server.reply = lambda body, number: '{"score": 4, "reason": "right object"}'
    scored = gavel_process("score", "--data", DATA, "--predictions",
                           PHOTOS / "predictions" / "gpt.jsonl", "--out", out, "--bootstrap", "0")  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    go_on = hold_after(server, 2)
    first = gavel_process(*judging(server.url, out), popen=True)
    try:
        wait_for(lambda: server.hits > 2, first)
        before = snapshot(out.parent)
        for second in (gavel_process(*judging(server.url, out)),
                       gavel_process("score", "--data", DATA, "--predictions",
                                     PHOTOS / "predictions" / "qwen3-vl.jsonl", "--out", out)):  # fmt: skip
            refused_by(second, out, first)
        assert snapshot(out.parent) == before  # the pair and the judge's replies as they were
    finally:
        go_on.set()
    assert first.wait(timeout=60) == 0, first.communicate()
    result = json.loads(out.read_text())
    assert result["metrics"]["explanation"]["counts"]["ok"] > 0
    replies = (out.parent / "results.judge.jsonl").read_text().splitlines()
    assert len({json.loads(line)["id"] for line in replies}) == len(replies)


def test_a_second_run_into_the_same_folder_is_refused(server, api_key, tmp_path):
    folder = tmp_path / "run"
    command = ["run", "--data", DATA, "--model", "openai:m", "--base-url", server.url,
               "--api-key-env", "GAVEL_TEST_KEY", "--no-cache", "--no-progress",
               "--concurrency", "1", "--bootstrap", "0", "--out", folder]  # fmt: skip
    go_on = hold_after(server, 3)
    first = gavel_process(*command, popen=True)
    try:
        wait_for(lambda: server.hits > 3, first)
        before = snapshot(folder)
        refused_by(gavel_process(*command), folder / "predictions.jsonl", first)
        assert snapshot(folder) == before
    finally:
        go_on.set()
    assert first.wait(timeout=60) == 0, first.communicate()
    assert len((folder / "predictions.jsonl").read_text().splitlines()) == SAMPLES
