"""``gavel generate`` and ``gavel score --judge`` against a real third-party server: the
``transformers serve`` of the transformers library, serving a tiny random-weight vision model
built here, offline, on 127.0.0.1.

Its answers mean nothing, so the structure is asserted, not the text: one line per sample, the
server's own words on its refusals, a wrong model name stopped at once. Skipped when the
``serving`` extra of transformers (FastAPI, Uvicorn) is not installed.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import gavel_tests_served_cli as served_cli  # registered by tests/models/conftest.py
import pytest

for _module, _why in (("openai", "the api extra"), ("torch", "torch"), ("transformers", "it")):
    pytest.importorskip(_module, reason=f"transformers serve needs {_why}")
if importlib.util.find_spec("fastapi") is None or importlib.util.find_spec("uvicorn") is None:
    pytest.skip(
        "transformers serve needs its serving extra: pip install 'transformers[serving]'",
        allow_module_level=True,
    )

#: Seconds the server may take to load the tiny model and answer /health.
STARTUP = 180
MAX_TOKENS = "8"

#: The commands here run in-process: an exception that a thread or a finalizer would print as
#: a traceback on the console fails the test instead of passing unseen.
pytestmark = pytest.mark.filterwarnings(
    "error::pytest.PytestUnhandledThreadExceptionWarning",
    "error::pytest.PytestUnraisableExceptionWarning",
)


free_port, lines, synth = served_cli.free_port, served_cli.lines, served_cli.synth


def as_completed(run):
    """``served_cli``'s helpers read a completed process; here the commands run in-process
    (only the server is a process of its own)."""

    def call(*args) -> subprocess.CompletedProcess[str]:
        done = run(*args)
        return subprocess.CompletedProcess(args, done.code, done.out, done.err)

    return call


@pytest.fixture
def gavel(gavel_main):
    """In this module ``gavel ARGS`` runs in-process, through the real entry point."""
    return as_completed(gavel_main)


def transformers_command() -> list[str]:
    script = Path(sys.executable).with_name("transformers")
    if script.exists():
        return [str(script)]
    found = shutil.which("transformers")
    if found is None:
        pytest.skip("the transformers command is not on PATH")
    return [found]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(base URL, model name) of a running ``transformers serve`` pinned to a tiny model."""
    from gavel.train.tiny import build_model

    root = tmp_path_factory.mktemp("transformers-serve")
    model = build_model("qwen2.5-vl", root / "tiny-qwen")
    port = free_port()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_HOME": str(root / "hf-home"),  # nothing of the user's cache is listed or read
        "OMP_NUM_THREADS": "1",
    }
    log = (root / "serve.log").open("w")
    process = subprocess.Popen(
        [*transformers_command(), "serve", str(model), "--host", "127.0.0.1",
         "--port", str(port), "--device", "cpu", "--dtype", "float32"],
        stdout=log, stderr=subprocess.STDOUT, env=env,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP
        while True:
            if process.poll() is not None:
                pytest.fail(
                    f"transformers serve exited: {(root / 'serve.log').read_text()[-2000:]}"
                )
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"transformers serve did not start within {STARTUP} s")
            time.sleep(0.5)
        yield f"{url}/v1", str(model)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def generate(gavel, served, benchmark: str, data: Path, out: Path, *flags: str):
    url, model = served
    return served_cli.generate(gavel, url, model, benchmark, data, out, *flags,
                               max_tokens=MAX_TOKENS, concurrency="4")  # fmt: skip


@pytest.mark.parametrize("benchmark", ["gavel", "detailverify", "videohallucer"])
def test_every_benchmark_generates_and_scores_against_transformers_serve(
    gavel, served, tmp_path, benchmark
):
    if benchmark == "videohallucer":
        pytest.importorskip("av", reason="VideoHallucer's videos need PyAV")
    data, expected = synth(gavel, benchmark, tmp_path / "data")
    out = tmp_path / "pred.jsonl"
    done = generate(gavel, served, benchmark, data, out)
    assert done.returncode == 0, done.stderr
    served_cli.check_answered_and_scored(
        gavel, tmp_path, benchmark, data, out, expected, MAX_TOKENS
    )


def judge(gavel, served, tmp_path, data: Path, predictions: Path, *flags: str):
    url, model = served
    return served_cli.judge(gavel, url, model, tmp_path, data, predictions, *flags)


@pytest.fixture(scope="module")
def gavel_predictions(gavel_shared, served, tmp_path_factory) -> tuple[Path, Path]:
    """A data set and its answers, which the judge tests only read."""
    folder, run = tmp_path_factory.mktemp("predictions"), as_completed(gavel_shared)
    data, _ = synth(run, "gavel", folder / "data")
    out = folder / "pred.jsonl"
    assert generate(run, served, "gavel", data, out).returncode == 0
    return data, out


def test_a_small_local_judge_that_answers_nonsense_is_judge_error_never_a_score(
    gavel, served, tmp_path, gavel_predictions
):
    data, predictions = gavel_predictions
    done = judge(gavel, served, tmp_path, data, predictions)
    assert done.returncode == 0, done.stderr
    served_cli.check_every_sample_is_judge_error(tmp_path / "run", predictions)


def test_a_field_the_server_refuses_is_named_with_its_words(
    gavel, served, tmp_path, gavel_predictions
):
    data, predictions = gavel_predictions
    done = judge(gavel, served, tmp_path, data, predictions,
                 "--judge-extra-body", '{"gavel_probe": 1}')  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    # transformers serve's FastAPI 422, in its own words, and the flag that sent the field.
    assert "HTTP 422: Unexpected fields in the request: {'gavel_probe'}" in done.stderr
    assert "refuses the field 'gavel_probe'" in done.stderr and "--judge-extra-body" in done.stderr


def test_a_wrong_model_name_stops_at_once_with_the_servers_words(gavel, served, tmp_path):
    data, expected = synth(gavel, "gavel", tmp_path / "data")
    url, model = served
    out = tmp_path / "pred.jsonl"
    done = gavel("generate", "--data", data, "--model", "openai:no-such-model",
                 "--base-url", url, "--no-cache", "--no-progress", "--concurrency", "1",
                 "--out", out)  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    # The server's 400 ("Server is pinned to ...") and what it serves, after one request.
    assert "HTTP 400: Server is pinned to" in done.stderr and model in done.stderr
    assert "--model openai:NAME" in done.stderr
    assert len(lines(out)) == 1 < expected
