"""``gavel train``: help that explains, and clear errors before any training starts."""

from __future__ import annotations

import sys

import pytest

from gavel.errors import ConfigError
from gavel.train.tiny import tiny_dataset


def test_help_explains_the_method_and_the_defaults(gavel):
    done = gavel("train", "sft", "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "<p-512>..<p512>" in text and "q(v, S)" in text
    for option in ("--epochs", "--grad-accum", "--lora", "--template", "--stop-after"):
        assert option in text
    assert "[default: 3" in text and "[default: 8" in text  # epochs, gradient accumulation
    assert "gavel-sft" in gavel("train", "--help").stdout


def test_bad_options_are_reported_without_a_traceback(gavel, tmp_path):
    data = tiny_dataset(tmp_path / "data", 4)
    common = ["train", "sft", "--data", data, "--out", tmp_path / "out"]
    done = gavel(*common, "--base-model", tmp_path, "--template", "nope")
    assert done.returncode == 2 and "unknown response template 'nope'" in done.stderr
    done = gavel(*common, "--base-model", tmp_path, "--prompt", "gavel_v9")
    assert done.returncode == 2 and "unknown prompt template 'gavel_v9'" in done.stderr
    assert "Traceback" not in done.stderr


def test_missing_torch_names_the_extra(monkeypatch):
    from gavel.train.model import require

    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ConfigError, match=r"gavel-eval\[train\]"):
        require()
