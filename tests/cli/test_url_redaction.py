"""A password written into a base URL's userinfo (``http://user:PASSWORD@host``) never reaches a
file gavel writes or a message it prints, whichever way the endpoint fails (the judge's URL:
tests/cli/test_score_judge.py)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from gavel.examples import example_dir

pytest.importorskip("openai", reason="the OpenAI-compatible client needs the api extra")

#: No prefix a key scanner knows (sk-, hf_): only the URL's shape says it is a secret.
PASSWORD = "hunter2-correct-horse"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def with_password(url: str) -> str:
    return url.replace("http://", f"http://someone:{PASSWORD}@")


def written(folder: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


def test_an_unreachable_model_endpoint_is_named_without_its_password(gavel, tmp_path, api_key):
    url = with_password(f"http://127.0.0.1:{free_port()}/v1")
    done = gavel("generate", "--data", example_dir("photos") / "gavel.jsonl", "--model",
                 "openai:m", "--base-url", url, "--api-key-env", "GAVEL_TEST_KEY", "--no-cache",
                 "--out", tmp_path / "out" / "p.jsonl")  # fmt: skip
    assert done.returncode == 2 and "cannot reach http://***@127.0.0.1:" in done.stderr
    assert PASSWORD not in done.stdout + done.stderr + written(tmp_path / "out")


def test_a_model_server_that_does_not_serve_the_model_is_named_without_its_password(
    gavel, server, tmp_path, api_key
):
    server.served = [{"id": "other", "object": "model", "owned_by": "vllm"}]
    done = gavel("generate", "--data", example_dir("photos") / "gavel.jsonl", "--model",
                 "openai:m", "--base-url", with_password(server.url), "--api-key-env",
                 "GAVEL_TEST_KEY", "--no-cache", "--out", tmp_path / "out" / "p.jsonl")  # fmt: skip
    assert done.returncode == 2 and "does not serve the model 'm'" in done.stderr
    assert PASSWORD not in done.stdout + done.stderr + written(tmp_path / "out")


def test_log_lines_name_a_server_without_its_password(gavel, server, tmp_path, api_key):
    done = gavel("-v", "generate", "--data", example_dir("photos") / "gavel.jsonl", "--model",
                 "openai:m", "--base-url", with_password(server.url), "--api-key-env",
                 "GAVEL_TEST_KEY", "--no-cache", "--out", tmp_path / "out" / "p.jsonl")  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown = server.url.replace("http://", "http://***@")
    assert f"GET {shown}/models cannot tell whether 'm' is served" in done.stderr
    assert PASSWORD not in done.stdout + done.stderr + written(tmp_path / "out")


@pytest.mark.parametrize("command", ["generate", "score", "run"])
def test_data_given_as_a_url_is_refused_without_its_password(command, gavel_main, tmp_path):
    url = with_password("http://example.invalid/gavel.jsonl")
    flags = {"generate": ["--model", "scene", "--out", tmp_path / "p.jsonl"],
             "score": ["--predictions", tmp_path / "p.jsonl"],
             "run": ["--model", "scene", "--out", tmp_path / "run"]}[command]  # fmt: skip
    done = gavel_main(command, "--data", url, *flags)
    assert done.code == 2 and "a URL is not read" in done.err, done.text
    assert "http://***@example.invalid" in done.err and PASSWORD not in done.text


def test_a_url_given_where_a_path_goes_is_named_without_its_password(gavel_main, tmp_path):
    """A path made of a URL prints as ``http:/someone:PASSWORD@...``: redacted in the "file not
    found" message, the manifest and a local model's error lines alike. (A URL itself is
    refused at once, below; a local folder may still be named like one.)"""
    data = example_dir("photos") / "gavel.jsonl"
    url = with_password("http://example.invalid/images")
    folder = tmp_path / "http:" / f"someone:{PASSWORD}@example.invalid" / "images"
    folder.mkdir(parents=True)  # a folder without the images
    out = tmp_path / "out" / "p.jsonl"
    done = gavel_main("generate", "--data", data, "--model", "scene", "--image-root", folder,
                      "--out", out, "--no-progress")  # fmt: skip
    assert done.code == 2 and PASSWORD not in done.text
    assert "http:/***@example.invalid" in out.read_text()  # each sample's error line
    assert PASSWORD not in written(tmp_path / "out")
    done = gavel_main("score", "--data", data, "--predictions", url + "/p.jsonl")
    assert done.code == 2 and "http:/***@example.invalid/images/p.jsonl: file not found" in done.err
    assert PASSWORD not in done.text
