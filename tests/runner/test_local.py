"""The local runner: append-only, resumable, and exactly one line per sample after a crash."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

from gavel.requests import Answer, Capabilities, Request
from gavel.runner.local import repair_tail, run_model
from gavel.synth.gavel_set import generate_gavel


class CountingModel:
    """Answers with the request id and remembers how often it was asked."""

    name = "counting"
    capabilities = Capabilities(box_format="pixel")

    def __init__(self, fail_on: set[str] = frozenset()):
        self.asked: list[str] = []
        self.fail_on = fail_on

    def settings(self):
        return {}

    def answer(self, request: Request) -> Answer:
        self.asked.append(request.sample_id)
        if request.sample_id in self.fail_on:
            raise TimeoutError("the server did not answer")
        return Answer(f'{{"hallucination": false, "id": "{request.sample_id}"}}')


def requests(n: int):
    return [Request(sample_id=f"s{i}", task="gavel", prompt="p") for i in range(n)]


def ids(path):
    return [json.loads(line)["id"] for line in path.read_text().splitlines()]


def test_resume_sends_nothing_twice(tmp_path):
    out = tmp_path / "pred.jsonl"
    first = CountingModel()
    run_model(first, requests(5), out, progress=False)
    second = CountingModel()
    summary = run_model(second, requests(8), out, progress=False)
    assert second.asked == ["s5", "s6", "s7"]
    assert (summary.skipped, summary.answered) == (5, 3)
    assert ids(out) == [f"s{i}" for i in range(8)]


def test_a_line_cut_short_by_a_crash_is_dropped_and_redone(tmp_path):
    out = tmp_path / "pred.jsonl"
    run_model(CountingModel(), requests(3), out, progress=False)
    with out.open("ab") as handle:
        handle.write(b'{"id": "s3", "respo')  # the process died mid-write
    model = CountingModel()
    run_model(model, requests(4), out, progress=False)
    assert model.asked == ["s3"]
    assert ids(out) == ["s0", "s1", "s2", "s3"]


def test_repair_tail_keeps_complete_files(tmp_path):
    out = tmp_path / "p.jsonl"
    out.write_bytes(b'{"id": "a"}\n')
    repair_tail(out)
    assert out.read_bytes() == b'{"id": "a"}\n'


def test_failed_calls_are_recorded_not_fatal(tmp_path):
    out = tmp_path / "pred.jsonl"
    summary = run_model(CountingModel(fail_on={"s1"}), requests(3), out, progress=False)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert summary.errors == 1
    assert lines[1]["error"].startswith("TimeoutError")
    assert "response" not in lines[1]


def test_kill_9_then_rerun_gives_every_sample_exactly_once(tmp_path):
    generate_gavel(tmp_path, 80, seed=4, difficulty="easy")
    out = tmp_path / "pred.jsonl"
    command = [sys.executable, "-m", "gavel", "generate", "--data", str(tmp_path / "gavel.jsonl"),
               "--model", "scene", "--out", str(out), "--no-progress"]  # fmt: skip
    process = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (
        not out.exists() or len(out.read_bytes().splitlines()) < 10
    ):
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait()
    written_before = len(out.read_bytes().splitlines())
    assert 10 <= written_before < 80, "the kill should land mid-run"
    subprocess.run(command, check=True, stderr=subprocess.DEVNULL)
    answered = ids(out)
    assert len(answered) == len(set(answered)) == 80
