"""A URL where a local path goes: told apart from paths, shown without its password."""

from __future__ import annotations

from pathlib import Path

import pytest

from gavel.errors import ConfigError
from gavel.io.urls import FOLDER_INSTEAD, refuse_url, url_refusal


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("http://u:pw@host/x.jsonl", "'http://***@host/x.jsonl'"),
        ("HTTPS://host/images", "'HTTPS://host/images'"),
        ("file:///etc/images", "'file:///etc/images'"),
        (Path("s3://key:pw@bucket/images"), "'s3://***@bucket/images'"),  # a Path keeps one /
        ("hf://datasets/owner/name", "'hf://datasets/owner/name'"),
    ],
)
def test_a_url_is_named_with_its_password_hidden(value, shown):
    refusal = url_refusal(value, "give a local folder")
    assert refusal == f"{shown}: a URL is not read; give a local folder"


@pytest.mark.parametrize(
    "value", ["images", "./http/x", "C:/data/images", "c:\\data", "hf:owner/name", "/abs/path:/x"]
)
def test_paths_and_hub_specs_are_no_urls(value):
    assert url_refusal(value, "give a local folder") is None


def test_refusing_names_the_flag_and_lets_none_and_paths_pass():
    refuse_url(None, "--image-root", FOLDER_INSTEAD)
    refuse_url(Path("images"), "--image-root", FOLDER_INSTEAD)
    with pytest.raises(ConfigError, match=r"^--image-root 'ftp://\*\*\*@h/i': a URL is not read"):
        refuse_url("ftp://a:b@h/i", "--image-root", FOLDER_INSTEAD)
