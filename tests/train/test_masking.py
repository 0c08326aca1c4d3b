"""The label mask covers exactly the assistant's answer, checked by decoding; batching."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="training needs torch (gavel-eval[train])")
pytest.importorskip("transformers", reason="training needs transformers (gavel-eval[train])")

from gavel.errors import GavelError  # noqa: E402
from gavel.requests import Request  # noqa: E402
from gavel.train.collate import Collator, join  # noqa: E402
from gavel.train.coords import COORD_TOKENS  # noqa: E402
from gavel.train.masking import IGNORE, ChatEncoder, end_token_ids  # noqa: E402
from gavel.train.model import add_coord_tokens, load_base  # noqa: E402
from gavel.train.sft_data import load_examples  # noqa: E402
from gavel.train.template import BUILTIN  # noqa: E402


def _setup(model_dir: Path, max_length: int = 1024):
    processor, model = load_base(str(model_dir))
    add_coord_tokens(processor, model)
    ends = end_token_ids(processor.tokenizer, model.generation_config)
    return processor, model, ChatEncoder(processor, max_length=max_length, end_ids=ends)


@pytest.fixture(scope="module")
def qwen(qwen_dir: Path):
    return _setup(qwen_dir)


@pytest.fixture(scope="module")
def llava(llava_dir: Path):
    return _setup(llava_dir)


def _split(encoded):
    ids = encoded.features["input_ids"][0].tolist()
    labels = encoded.features["labels"][0].tolist()
    answer_at = [i for i, label in enumerate(labels) if label != IGNORE]
    return ids, labels, answer_at


def test_qwen_mask_is_exactly_the_answer_and_its_end_token(qwen, mixed_data: Path):
    processor, _, encoder = qwen
    tokenizer = processor.tokenizer
    example = load_examples(mixed_data, BUILTIN["json"]).examples[1]  # a wrong caption
    encoded = encoder.encode(example)
    ids, labels, answer_at = _split(encoded)
    # Contiguous, to the end, and labels equal the inputs there.
    assert answer_at == list(range(encoded.prompt_tokens, len(ids)))
    assert [labels[i] for i in answer_at] == [ids[i] for i in answer_at]
    assert tokenizer.decode([ids[i] for i in answer_at]) == example.response + "<|im_end|>"
    prompt = tokenizer.decode(ids[: encoded.prompt_tokens])
    assert prompt.startswith("<|im_start|>user\n<|vision_start|><|image_pad|>")
    assert prompt.endswith("<|im_end|>\n<|im_start|>assistant\n")
    assert 'Caption: "a red circle"' in prompt
    # Each coordinate is one token that carries the loss.
    coord_ids = set(tokenizer.convert_tokens_to_ids(list(COORD_TOKENS)))
    assert sum(ids[i] in coord_ids for i in answer_at) == 4
    assert encoded.features["attention_mask"].sum() == len(ids) and not encoded.truncated


def test_qwen_prompt_tokens_are_what_the_hf_adapter_sends(qwen, qwen_dir: Path, mixed_data):
    from gavel.models.hf import HFModel

    processor, _, encoder = qwen
    example = load_examples(mixed_data, BUILTIN["json"]).examples[0]
    adapter = HFModel(str(qwen_dir), device="cpu", max_new_tokens=1)
    text, images, _ = adapter._prepare(Request(example.id, "gavel", example.prompt,
                                               images=(example.image,)))  # fmt: skip
    sent = processor(text=[text], images=images, return_tensors="pt")["input_ids"][0].tolist()
    encoded = encoder.encode(example)
    assert encoded.features["input_ids"][0, : encoded.prompt_tokens].tolist() == sent


def test_llava_template_without_end_token_gets_eos_appended(llava, mixed_data: Path):
    processor, _, encoder = llava
    example = load_examples(mixed_data, BUILTIN["plain"]).examples[1]
    encoded = encoder.encode(example)
    ids, _, answer_at = _split(encoded)
    assert answer_at == list(range(encoded.prompt_tokens, len(ids)))
    answer = processor.tokenizer.decode([ids[i] for i in answer_at])
    assert answer == " " + example.response + "</s>"
    assert processor.tokenizer.decode(ids[: encoded.prompt_tokens]).endswith("ASSISTANT:")
    assert example.response.startswith("Yes. ") and "<p" in example.response


def test_truncation_keeps_the_prompt_and_counts(qwen_dir: Path, mixed_data: Path):
    _, _, encoder = _setup(qwen_dir)
    example = load_examples(mixed_data, BUILTIN["json"]).examples[1]
    full = encoder.encode(example)
    encoder.max_length = full.prompt_tokens + 5
    cut = encoder.encode(example)
    assert cut.truncated and cut.answer_tokens == 5
    assert cut.features["input_ids"].shape[1] == full.prompt_tokens + 5
    encoder.max_length = full.prompt_tokens
    with pytest.raises(GavelError, match="max-length"):
        encoder.encode(example)


@pytest.mark.parametrize("family", ["qwen", "llava"])
def test_batches_pad_right_and_train(family, request, mixed_data: Path):
    processor, model, encoder = request.getfixturevalue(family)
    examples = load_examples(mixed_data, BUILTIN["json"]).examples[:3]
    items = [encoder.encode(example) for example in examples]
    pad = processor.tokenizer.pad_token_id
    batch = Collator(pad)(items)
    truncated = batch.pop("truncated")
    assert truncated.tolist() == [False, False, False]
    longest = max(item.features["input_ids"].shape[1] for item in items)
    assert batch["input_ids"].shape == (3, longest) == batch["labels"].shape
    for row, item in enumerate(items):
        length = item.features["input_ids"].shape[1]
        assert batch["input_ids"][row, length:].eq(pad).all()
        assert batch["labels"][row, length:].eq(IGNORE).all()
        assert batch["attention_mask"][row, length:].eq(0).all()
        assert batch["labels"][row, :length].equal(item.features["labels"][0])
    if family == "qwen":
        assert batch["image_grid_thw"].shape == (3, 3)
        assert batch["pixel_values"].shape[0] == sum(
            item.features["pixel_values"].shape[0] for item in items
        )
    else:
        assert batch["pixel_values"].shape == (3, 3, 28, 28)
    loss = model(**batch).loss
    assert torch.isfinite(loss)


def test_join_pads_uneven_tiles_with_zero_images():
    a, b = torch.ones(1, 2, 3, 4, 4), torch.ones(1, 3, 3, 4, 4)
    joined = join([a, b])
    assert joined.shape == (2, 3, 3, 4, 4)
    assert joined[0, 2].eq(0).all() and joined[1].eq(1).all()


def test_max_pixels_caps_qwen_images_and_is_saved(qwen_dir: Path, llava_dir: Path, tmp_path):
    from PIL import Image
    from transformers import AutoProcessor

    from gavel.errors import ConfigError
    from gavel.train.model import set_max_pixels

    image = Image.new("RGB", (300, 200))
    processor, _ = load_base(str(qwen_dir))

    def patches(p) -> int:
        return int(p.image_processor(images=[image], return_tensors="pt")["image_grid_thw"].prod())

    before = patches(processor)
    set_max_pixels(processor, 28 * 28 * 4)
    assert patches(processor) * 14 * 14 <= 28 * 28 * 4 < before * 14 * 14
    processor.save_pretrained(tmp_path)
    assert patches(AutoProcessor.from_pretrained(tmp_path)) == patches(processor)
    with pytest.raises(ConfigError, match="minimum"):
        set_max_pixels(processor, 100)
    with pytest.raises(ConfigError, match="pixel budget"):
        set_max_pixels(load_base(str(llava_dir))[0], 10_000)


def test_an_image_that_is_a_pipe_is_a_clear_error_not_a_wait(tmp_path):
    import os

    from gavel.train.masking import _open_rgb

    if not hasattr(os, "mkfifo"):
        pytest.skip("named pipes are POSIX")
    pipe = tmp_path / "pipe.png"
    os.mkfifo(pipe)
    with pytest.raises(GavelError, match=r"cannot read image .*pipe\.png: is a FIFO"):
        _open_rgb(pipe)
