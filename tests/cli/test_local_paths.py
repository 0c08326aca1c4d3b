"""A URL where gavel reads a local path (``--image-root``, ``--images``, ``--data`` and the
data arguments) is refused at once by every command, naming what was typed, its password
hidden (docs/security.md, "URLs")."""

from __future__ import annotations

import pytest

from gavel.examples import example_dir

#: No prefix a key scanner knows: only the URL's shape says it is a secret.
PASSWORD = "hunter2-correct-horse"


def with_password(url: str) -> str:
    return url.replace("http://", f"http://someone:{PASSWORD}@")


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
