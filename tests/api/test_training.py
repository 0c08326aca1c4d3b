"""gavel.api.training called directly: a tiny model built offline, previewed and trained."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="training needs torch (gavel-eval[train])")
pytest.importorskip("transformers", reason="training needs transformers (gavel-eval[train])")
pytest.importorskip("accelerate", reason="training needs accelerate (gavel-eval[train])")

from gavel.api.training import TrainSettings, preview, sft
from gavel.errors import ConfigError
from gavel.train.tiny import build_qwen25_vl, tiny_dataset

pytestmark = pytest.mark.slow


def test_settings_are_checked_when_built():
    with pytest.raises(ConfigError, match=r"'--keep-checkpoints': 0 is not in the range x>=1"):
        TrainSettings(data="d.jsonl", base_model="m", out="o", keep_checkpoints=0)


def test_preview_then_one_step_then_already_trained(tmp_path):
    model = build_qwen25_vl(tmp_path / "model")
    data = tiny_dataset(tmp_path / "data", 4, clean=False)
    shown = preview(data, str(model), count=1)
    assert (shown.examples, shown.images) == (4, 4)
    [first] = list(shown.shown)
    assert first.prompt_tokens > 0 and first.answer_tokens > 0 and not first.truncated
    assert "<p" in first.answer_text  # the gold box as coordinate tokens carries the loss

    settings = TrainSettings(data=str(data), base_model=str(model), out=str(tmp_path / "run"),
                             max_steps=1, grad_accum=1, progress=False)  # fmt: skip
    result = sft(settings)
    assert result.finished and result.step == result.total_steps == 1
    assert (tmp_path / "run" / "train_log.jsonl").is_file()
    again = sft(settings)
    assert again.finished and again.resumed_from == again.step == 1
