"""Choosing the files of a split: the dataset card's configs first, else the file names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gavel.errors import DataError
from gavel.sources.card import select

pytest.importorskip("huggingface_hub")

CARD = """---
configs:
- config_name: real_test
  default: true
  data_files:
  - split: test
    path: data/real_test.jsonl
  - split: preview
    path: data/real_preview-*.jsonl
- config_name: synthetic_test
  data_files: data/synthetic_test.jsonl
---
"""


def _files(root: Path, *names: str) -> None:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("{}\n")


def test_configs_of_the_card(tmp_path):
    (tmp_path / "README.md").write_text(CARD)
    _files(tmp_path, "data/real_test.jsonl", "data/real_preview-0.jsonl",
           "data/real_preview-1.jsonl", "data/synthetic_test.jsonl")  # fmt: skip
    default = select(tmp_path, None)
    assert (default.config, default.split) == ("real_test", "test")
    assert default.files == [tmp_path / "data/real_test.jsonl"]
    preview = select(tmp_path, "preview")
    assert preview.files == [tmp_path / f"data/real_preview-{n}.jsonl" for n in (0, 1)]
    synthetic = select(tmp_path, "synthetic_test")
    assert synthetic.config == "synthetic_test"
    assert synthetic.files == [tmp_path / "data/synthetic_test.jsonl"]
    with pytest.raises(
        DataError, match="no config or split 'train'; configs: real_test, synthetic_test"
    ):
        select(tmp_path, "train")


def test_splits_from_file_names(tmp_path):
    _files(tmp_path, "data/train-00000-of-00002.parquet", "data/train-00001-of-00002.parquet",
           "data/test-00000-of-00001.parquet", "data/validation.parquet")  # fmt: skip
    assert select(tmp_path, None).files == [tmp_path / "data/test-00000-of-00001.parquet"]
    assert select(tmp_path, "train").files == [
        tmp_path / f"data/train-0000{n}-of-00002.parquet" for n in (0, 1)
    ]
    assert select(tmp_path, "validation").split == "validation"
    with pytest.raises(DataError, match="no split 'dev'; splits: test, train, validation"):
        select(tmp_path, "dev")


def test_several_splits_without_test_must_be_named(tmp_path):
    _files(tmp_path, "data/train.parquet", "data/validation.parquet")
    with pytest.raises(DataError, match=r"several splits \(train, validation\); name one"):
        select(tmp_path, None)


def test_a_config_naming_no_file_is_an_error(tmp_path):
    (tmp_path / "README.md").write_text(CARD)
    with pytest.raises(DataError, match="'test' names no existing file"):
        select(tmp_path, None)


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("configs: 5", "is int (expected a list of configs)"),
        ("configs:\n- config_name: x\n  data_files: 5", "data_files is int (expected a list)"),
        ("configs:\n- data_files:\n  - path: 7", "a data_files path is not text"),
        ("configs:\n- data_files:\n  - path: /etc/*.jsonl", "absolute data_files path"),
    ],
)
def test_a_card_of_the_wrong_shape_is_one_error_naming_it(tmp_path, header, message):
    (tmp_path / "README.md").write_text(f"---\n{header}\n---\n")
    _files(tmp_path, "data/test.jsonl")
    with pytest.raises(DataError, match=re.escape(message)) as raised:
        select(tmp_path, None)
    assert raised.value.path == str(tmp_path / "README.md") and raised.value.field == "configs"
