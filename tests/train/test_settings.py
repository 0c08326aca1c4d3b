"""TrainSettings checks each value as ``gavel train sft`` checks its flag, in the same words
(the flags' types are made from the same bounds)."""

from __future__ import annotations

import pytest

from gavel.errors import ConfigError
from gavel.train.settings import TrainSettings

REFUSED = [
    ("epochs", 0, "--epochs", "0"),
    ("keep_checkpoints", 0, "--keep-checkpoints", "0"),
    ("warmup_ratio", 1, "--warmup-ratio", "1"),
    ("lora_rank", 0, "--lora-rank", "0"),
    ("lora_alpha", 0, "--lora-alpha", "0"),
    ("lora_dropout", 1.5, "--lora-dropout", "1.5"),
    ("workers", -1, "--workers", "-1"),
    ("weight_decay", -0.1, "--weight-decay", "-0.1"),
    ("max_length", 8, "--max-length", "8"),
    ("lr", 0.0, "--lr", "0"),
    ("seed", -1, "--seed", "-1"),
    ("schedule", "step", "--schedule", "step"),
    ("mixed_precision", "fp8", "--mixed-precision", "fp8"),
]


@pytest.mark.parametrize(("name", "value", "flag", "given"), REFUSED,
                         ids=[r[0] for r in REFUSED])  # fmt: skip
def test_a_refused_value_is_refused_as_the_flag_refuses_it(name, value, flag, given, gavel_main,
                                                           tmp_path):  # fmt: skip
    data = tmp_path / "train.jsonl"
    data.write_text("")
    done = gavel_main("train", "sft", "--data", data, "--base-model", "m", "--out",
                      tmp_path / "run", flag, given)  # fmt: skip
    assert done.code == 2
    said = next(line for line in done.err.splitlines() if line.startswith("Error: "))
    with pytest.raises(ConfigError) as refused:
        TrainSettings(data="d.jsonl", base_model="m", out="o", **{name: value})
    assert str(refused.value) == said.removeprefix("Error: ")


def test_defaults_and_unset_values_pass():
    settings = TrainSettings(data="d.jsonl", base_model="m", out="o", lr=None, max_steps=None)
    assert settings.learning_rate == 1e-5 and settings.warmup_ratio == 0.03
    assert TrainSettings(data="d", base_model="m", out="o", warmup_ratio=0).warmup_ratio == 0.0
