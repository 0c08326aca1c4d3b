"""A batch run waiting on its batch holds its output: the same command in a second process is
refused at once, uploads and creates nothing, and leaves the batch folder as it was."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

from gavel.examples import example_dir

DATA = example_dir("photos") / "gavel.jsonl"
SAMPLES = len(DATA.read_text().splitlines())


def generate(server, tmp_path: Path, out: Path) -> list:
    return ["generate", "--data", DATA, "--model", "openai:batch-model", "--preset", "gpt",
            "--base-url", server.url, "--api-key-env", "GAVEL_TEST_KEY", "--max-tokens", "64",
            "--cache", tmp_path / "cache.sqlite", "--no-progress", "--out", out,
            "--batch", "--batch-poll", "0.05"]  # fmt: skip


def folder_state(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.suffix != ".lock"}  # fmt: skip


def test_a_second_batch_run_into_the_same_file_is_refused(start, batch_server, tmp_path, api_key):
    batch_server.hold_at = 0  # the batch waits, however busy the machine
    out = tmp_path / "run" / "p.jsonl"
    first = start(*generate(batch_server, tmp_path, out))
    deadline = time.monotonic() + 60
    while batch_server.polls < 2:
        assert first.process.poll() is None, first.process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    before, uploads, created = folder_state(out.parent), batch_server.uploads, batch_server.created
    second = subprocess.run([sys.executable, "-m", "gavel", *map(str, generate(batch_server, tmp_path, out))],
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert second.returncode == 2, second.stderr
    assert second.stderr.count("\n") == 1 and "Traceback" not in second.stderr
    assert second.stderr.startswith(f"error: {out} is being written by another gavel process "
                                    f"(pid {first.process.pid} on {socket.gethostname()}, since ")  # fmt: skip
    assert (batch_server.uploads, batch_server.created) == (uploads, created) == (1, 1)
    assert folder_state(out.parent) == before
    batch_server.hold_at = None
    assert first.process.wait(timeout=60) == 0, first.process.communicate()
    assert len({json.loads(line)["id"] for line in out.read_text().splitlines()}) == SAMPLES
    assert set(batch_server.billed.values()) == {1}
