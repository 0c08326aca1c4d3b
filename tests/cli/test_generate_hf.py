"""``gavel generate`` and ``gavel run`` with a local transformers model, batched.

A tiny random-weight Qwen2.5-VL is built here (gavel.train.tiny): its answers mean nothing, but
greedy decoding makes them a fingerprint of the tokens each request got, so a batched run must
reproduce the one-at-a-time run line for line.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("torch", reason="the hf adapter needs torch (gavel-eval[hf])")
pytest.importorskip("transformers", reason="the hf adapter needs transformers (gavel-eval[hf])")

from gavel.cli.main import cli
from gavel.train.tiny import build_qwen25_vl, tiny_dataset

N = 24


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    model = build_qwen25_vl(tmp_path_factory.mktemp("tiny-qwen2.5-vl"))
    data = tiny_dataset(tmp_path_factory.mktemp("data"), N)
    return model, data


def _arguments(setup: tuple[Path, Path], out: Path, *extra: str) -> list[str]:
    model, data = setup
    return ["--data", str(data), "--model", f"hf:{model}", "--preset", "qwen2.5-vl",
            "--device", "cpu", "--dtype", "float32", "--max-tokens", "12", "--no-progress",
            "--out", str(out), *extra]  # fmt: skip


def _generate(setup, out: Path, *extra: str):
    done = CliRunner().invoke(cli, ["generate", *_arguments(setup, out, *extra)])
    assert done.exit_code == 0, done.output
    return done


def _answers(path: Path) -> dict[str, tuple]:
    """Per id: what the model said and the sizes, token counts and finish reason that came
    with it."""
    answers = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        assert record["id"] not in answers, f"{record['id']} written twice"
        # Fewer tokens than the 12 allowed: it ended at its end token, not at the limit.
        assert record["finish_reason"] in ("stop", "length")
        if record["completion_tokens"] < 12:
            assert record["finish_reason"] == "stop"
        answers[record["id"]] = (record["response"], record["input_size"],
                                 record["prompt_tokens"], record["completion_tokens"],
                                 record["finish_reason"])  # fmt: skip
    return answers


@pytest.fixture(scope="module")
def one_at_a_time(setup, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple]:
    out = tmp_path_factory.mktemp("single") / "pred.jsonl"
    done = _generate(setup, out, "--batch-size", "1")
    assert "24 batches of up to 1" in done.output
    return _answers(out)


def test_batched_answers_equal_one_at_a_time_and_the_batch_is_recorded(
    setup, one_at_a_time, tmp_path: Path
) -> None:
    out = tmp_path / "pred.jsonl"
    done = _generate(setup, out, "--batch-size", "5")
    assert "24 answered" in done.output and "5 batches of up to 5" in done.output
    assert len(one_at_a_time) == N
    assert _answers(out) == one_at_a_time
    # Longest first: the answers are not written in input order.
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert ids != sorted(ids)
    manifest = json.loads((tmp_path / "pred.manifest.json").read_text())
    assert manifest["adapter"]["batch_size"] == 5
    assert manifest["settings"]["batching"] == {
        "batch_size": 5, "order": "longest first within each window", "window": 40,
    }  # fmt: skip


def test_the_default_on_the_cpu_is_batches_of_four(setup, tmp_path: Path) -> None:
    out = tmp_path / "pred.jsonl"
    model, data = setup
    subset = tmp_path / "six.jsonl"
    subset.write_text("".join(data.read_text().splitlines(keepends=True)[:6]))
    done = CliRunner().invoke(cli, ["generate", "--data", str(subset), "--image-root",
                                    str(data.parent), "--model", f"hf:{model}", "--device",
                                    "cpu", "--max-tokens", "2", "--no-progress", "--out",
                                    str(out)])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "2 batches of up to 4" in done.output
    assert json.loads((tmp_path / "pred.manifest.json").read_text())["adapter"]["batch_size"] == 4


def test_a_batched_run_resumes_where_it_stopped(setup, one_at_a_time, tmp_path: Path) -> None:
    out = tmp_path / "pred.jsonl"
    _generate(setup, out, "--batch-size", "4")
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:15]) + lines[15][:20])  # a crash mid-line
    done = _generate(setup, out, "--batch-size", "4")
    assert "9 answered, 15 already there" in done.output
    assert _answers(out) == one_at_a_time


def test_kill_9_mid_run_then_rerun_gives_every_answer_once(
    setup, one_at_a_time, tmp_path: Path
) -> None:
    out = tmp_path / "pred.jsonl"
    command = [sys.executable, "-m", "gavel", "generate",
               *_arguments(setup, out, "--batch-size", "2")]  # fmt: skip
    process = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (
        not out.exists() or len(out.read_bytes().splitlines()) < 4
    ):
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait()
    written = out.read_bytes().count(b"\n")  # whole lines: a torn one is removed on rerun
    assert 4 <= written < N, "the kill should land mid-run"
    rerun = _generate(setup, out, "--batch-size", "2")  # the same command, in-process
    assert f"{N - written} answered, {written} already there" in rerun.output
    assert _answers(out) == one_at_a_time


def test_gavel_run_takes_the_batch_size(setup, one_at_a_time, tmp_path: Path) -> None:
    done = CliRunner().invoke(cli, ["run", *_arguments(setup, tmp_path / "run", "--batch-size",
                                                       "8")])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert _answers(tmp_path / "run" / "predictions.jsonl") == one_at_a_time
    manifest = json.loads((tmp_path / "run" / "predictions.manifest.json").read_text())
    assert manifest["settings"]["batching"]["batch_size"] == 8
    assert json.loads((tmp_path / "run" / "results.json").read_text())["counts"]


def test_concurrency_does_not_apply_and_says_so(setup, tmp_path: Path) -> None:
    model, data = setup
    subset = tmp_path / "two.jsonl"
    subset.write_text("".join(data.read_text().splitlines(keepends=True)[:2]))
    done = CliRunner().invoke(cli, ["generate", "--data", str(subset), "--image-root",
                                    str(data.parent), "--model", f"hf:{model}", "--device",
                                    "cpu", "--max-tokens", "2", "--concurrency", "4",
                                    "--no-progress", "--out", str(tmp_path / "p.jsonl")])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "--concurrency does not apply" in done.output


def test_models_that_do_not_batch_refuse_the_option(gavel_main, tmp_path: Path) -> None:
    gavel_main("synth", "--n", "2", "--out", tmp_path / "s")
    data = tmp_path / "s" / "gavel.jsonl"
    scene = gavel_main("generate", "--data", data, "--model", "scene", "--batch-size", "4",
                  "--out", tmp_path / "p.jsonl")  # fmt: skip
    assert scene.code == 2
    assert "Error: --batch-size applies to hf: models only" in scene.err
    served = gavel_main("generate", "--data", data, "--model", "openai:m", "--base-url",
                   "http://127.0.0.1:9/v1", "--batch-size", "4", "--out", tmp_path / "q.jsonl")  # fmt: skip
    assert served.code == 2 and "Traceback" not in served.err
    assert "a served model batches requests on its server" in served.err
    assert "--concurrency" in served.err
    assert not (tmp_path / "p.jsonl").exists() and not (tmp_path / "q.jsonl").exists()
