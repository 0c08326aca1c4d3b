"""The base model made ready: coordinate rows start at the vocabulary's mean, on both sides."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="training needs torch (gavel-eval[train])")
pytest.importorskip("transformers", reason="training needs transformers (gavel-eval[train])")

from gavel.errors import ConfigError  # noqa: E402
from gavel.train.model import add_coord_tokens, coord_token_ids, load_base  # noqa: E402
from gavel.train.trainer import TrainSettings, train  # noqa: E402


@pytest.mark.parametrize("padding", [0, 300], ids=["exact", "padded-matrix"])
def test_every_coordinate_row_starts_at_the_vocabulary_mean(qwen_dir: Path, padding: int):
    processor, model = load_base(str(qwen_dir))
    vocabulary = len(processor.tokenizer)
    if padding:  # as Qwen2.5-VL-7B: more embedding rows than tokens, filled with noise
        model.resize_token_embeddings(vocabulary + padding)
        with torch.no_grad():
            model.get_input_embeddings().weight[vocabulary:] = 7.0
            if model.get_output_embeddings().weight is not model.get_input_embeddings().weight:
                model.get_output_embeddings().weight[vocabulary:] = 7.0
    added = add_coord_tokens(processor, model)
    assert added == 1025
    ids = coord_token_ids(processor.tokenizer)
    for layer in (model.get_input_embeddings(), model.get_output_embeddings()):
        weight = layer.weight.detach()
        mean = weight[:vocabulary].mean(dim=0)
        assert torch.allclose(weight[ids], mean.expand(len(ids), -1), atol=1e-6)
    assert model.get_input_embeddings().weight.shape[0] >= max(ids) + 1


def test_lora_with_a_trainable_vision_encoder_is_refused(tmp_path, qwen_dir, mixed_data):
    settings = TrainSettings(
        data=str(mixed_data), base_model=str(qwen_dir), out=str(tmp_path / "run"),
        lora=True, train_vision=True, max_steps=1, progress=False,
    )  # fmt: skip
    with pytest.raises(ConfigError, match="--train-vision with --lora"):
        train(settings)
