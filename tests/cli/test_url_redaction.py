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


#: Every command that takes a folder of images (``--image-root``, curation's and annotation's
#: ``--images``), with the other arguments it needs: ``{data}`` is a GAVEL file, ``{tmp}`` a
#: fresh folder.
IMAGE_ROOT_COMMANDS = {
    "generate": ["generate", "--data", "{data}", "--model", "scene", "--out", "{tmp}/p.jsonl",
                 "--image-root"],
    "score": ["score", "--data", "{data}", "--predictions", "{tmp}/p.jsonl", "--image-root"],
    "run": ["run", "--data", "{data}", "--model", "scene", "--out", "{tmp}/run", "--image-root"],
    "data validate": ["data", "validate", "{data}", "--image-root"],
    "data stats": ["data", "stats", "{data}", "--image-root"],
    "data split": ["data", "split", "{data}", "--out-dir", "{tmp}/split", "--image-root"],
    "data convert": ["data", "convert", "{data}", "{tmp}/ds", "--image-root"],
    "export lmms-eval": ["export", "lmms-eval", "{tmp}/task", "--data", "{data}",
                         "--image-root"],
    "train sft": ["train", "sft", "--data", "{data}", "--base-model", "{tmp}/m", "--out",
                  "{tmp}/sft", "--image-root"],
    "report": ["report", "{data}", "--out", "{tmp}/page", "--image-root"],
    "curate captions": ["curate", "captions", "--model", "scene", "--out", "{tmp}/pairs.jsonl",
                        "--images"],
    "curate import": ["curate", "import", "--prompts", "{data}", "--out", "{tmp}/pairs.jsonl",
                      "--images"],
    "curate score": ["curate", "score", "--pairs", "{data}", "--model", "scene", "--out",
                     "{tmp}/scored.jsonl", "--images"],
    "annotate init": ["annotate", "init", "--db", "{tmp}/project.sqlite", "--images"],
}  # fmt: skip


@pytest.mark.parametrize("command", sorted(IMAGE_ROOT_COMMANDS))
def test_an_image_root_given_as_a_url_is_refused_at_once(command, gavel_main, tmp_path):
    """Not read as a folder that does not exist (every sample failing, or a message showing
    the password): refused before anything is read or written, its password hidden."""
    data = example_dir("photos") / "gavel.jsonl"
    url = with_password("http://example.invalid/images")
    args = [a.format(data=data, tmp=tmp_path) for a in IMAGE_ROOT_COMMANDS[command]]
    done = gavel_main(*args, url)
    flag = args[-1]
    assert done.code == 2 and "a URL is not read" in done.err, done.text
    assert f"'{flag}'" in done.err and "'http://***@example.invalid/images'" in done.err
    assert PASSWORD not in done.text
    assert list(tmp_path.iterdir()) == []  # nothing written


#: The commands that take their data as an argument, and the argument's name in their usage.
DATA_ARGUMENTS = {
    "data validate": (["data", "validate", "{url}"], "FILE"),
    "data stats": (["data", "stats", "{url}"], "FILE"),
    "data split": (["data", "split", "{url}"], "FILE"),
    "data convert": (["data", "convert", "{url}", "{tmp}/back.jsonl"], "IN"),
}


@pytest.mark.parametrize("command", sorted(DATA_ARGUMENTS))
def test_data_given_as_a_url_argument_is_refused_naming_the_argument(command, gavel_main, tmp_path):
    """The message names what was typed (the argument), not a flag the command does not have."""
    url = f"https://someone:{PASSWORD}@example.invalid/gavel.jsonl"
    template, name = DATA_ARGUMENTS[command]
    done = gavel_main(*(a.format(url=url, tmp=tmp_path) for a in template))
    assert done.code == 2 and "a URL is not read" in done.err, done.text
    assert f"Invalid value for '{name}'" in done.err and "--data" not in done.err
    assert "'https://***@example.invalid/gavel.jsonl'" in done.err
    assert PASSWORD not in done.text
    assert list(tmp_path.iterdir()) == []


def test_a_hub_dataset_argument_is_still_read_as_one(gavel_main):
    """``hf:OWNER/NAME`` is no URL: it reaches the Hub's own checks."""
    done = gavel_main("data", "validate", "hf:not a repo")
    assert done.code == 2 and "expected hf:OWNER/NAME" in done.err, done.text
