"""Telling ``--data`` values apart: Hub specs, Parquet data, and paths the loaders read."""

from __future__ import annotations

from pathlib import Path

import pytest

from gavel.errors import ConfigError
from gavel.sources.spec import HubSpec, ParquetSpec, parse


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("hf:zyxhhnkh/DetailVerifyBench", HubSpec("zyxhhnkh/DetailVerifyBench")),
        ("hf:owner/name@main", HubSpec("owner/name", "main")),
        ("hf:owner/name:validation", HubSpec("owner/name", None, "validation")),
        ("hf:owner/name@v1.0:real_test", HubSpec("owner/name", "v1.0", "real_test")),
        ("hf:o-1/n.a_m-e@" + "0" * 40, HubSpec("o-1/n.a_m-e", "0" * 40)),
        ("hf:owner/name@refs/pr/3:test", HubSpec("owner/name", "refs/pr/3", "test")),
    ],
)
def test_hub_specs(text, spec):
    assert parse(text) == spec
    assert str(spec) == text


@pytest.mark.parametrize(
    "text",
    [
        "hf:",
        "hf:name",
        "hf:a/b/c",
        "hf:owner/na..me",
        "hf:own--er/name",
        "hf:owner/name@",
        "hf:o/n:",
        "hf:o/n:..",
        "hf:o/n:.",
        "hf:o/n@../../x",
        "hf:o/n@refs/../../../x:test",
    ],
)
def test_malformed_hub_specs_are_a_usage_error(text):
    with pytest.raises(ConfigError, match=r"expected hf:OWNER/NAME\[@REVISION\]\[:SPLIT\]"):
        parse(text)


def test_parquet_files_and_folders(tmp_path):
    assert parse(tmp_path / "x.parquet") == ParquetSpec(tmp_path / "x.parquet")
    (tmp_path / "ds" / "data").mkdir(parents=True)
    assert parse(tmp_path / "ds") is None  # no Parquet file yet: a folder for the loaders
    (tmp_path / "ds" / "data" / "test-00000-of-00001.parquet").touch()
    assert parse(tmp_path / "ds") == ParquetSpec(tmp_path / "ds")


def test_everything_else_is_left_to_the_loaders(tmp_path):
    for path in ("gavel.jsonl", "videohallucer", "temporal.json", "hf-data.jsonl"):
        assert parse(Path(tmp_path / path)) is None


@pytest.mark.parametrize(
    "text", ["http://u:pw@host/x.jsonl", "https://host/data", Path("s3://key:pw@bucket/x")]
)
def test_a_url_is_refused_with_its_password_hidden(text):
    with pytest.raises(ConfigError, match="a URL is not read") as refused:
        parse(text)
    assert "pw" not in str(refused.value)


def test_a_windows_drive_is_a_path():
    assert parse("C:/data/gavel.jsonl") is None
