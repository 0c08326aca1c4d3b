"""gavel.api.judges called directly: the numbers and files `gavel judge-agreement` gives."""

from __future__ import annotations

import json

import pytest

from gavel.api.judges import Agreement, judge_agreement
from gavel.errors import ConfigError


def write_jsonl(path, scores):
    path.write_text("".join(json.dumps({"id": i, "score": s}) + "\n" for i, s in scores.items()))
    return path


def test_two_raters_agree_as_the_command_says(tmp_path):
    first = write_jsonl(tmp_path / "a.jsonl", {"s1": 5, "s2": 4, "s3": 2, "s4": 1})
    second = write_jsonl(tmp_path / "b.jsonl", {"s1": 5, "s2": 3, "s3": 2, "s4": 2, "s9": 4})
    found = judge_agreement([first], judges=[second], labels=["gpt"])
    assert isinstance(found, Agreement)
    assert found.report["samples"] == 4
    [pair] = found.report["pairs"]
    assert (pair["a"], pair["b"], pair["n"]) == ("gpt", "b", 4)
    assert pair["agreement"]["all"]["exact"] == 50.0
    assert found.warnings == ["b (" + str(second) + "): 1 of its 5 samples not in every "
                              "file, left out"]  # fmt: skip
    assert found.table("json") == found.json()
    assert "Judge agreement, 4 samples in every file" in found.table()
    found.save(str(tmp_path / "out.json"), str(tmp_path / "out.png"))  # text paths too
    assert json.loads((tmp_path / "out.json").read_text()) == found.report
    assert (tmp_path / "out.png").read_bytes().startswith(b"\x89PNG")


def test_one_file_alone_is_refused(tmp_path):
    only = write_jsonl(tmp_path / "a.jsonl", {"s1": 5})
    with pytest.raises(ConfigError, match="at least two score files"):
        judge_agreement([only])
