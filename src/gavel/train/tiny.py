"""Tiny random-weight VLMs and a tiny GAVEL data set, built offline in seconds.

They exist so the whole training pipeline (data conversion, label masking, the training loop,
checkpoints, multi-process launch, saving, and inference through ``hf:``) can be exercised on a
CPU without downloading anything: the tests, ``bench/train_speed.py`` and the smoke run in
docs/train.md use them. The models are real transformers architectures (Qwen2.5-VL, LLaVA) with
under 200,000 parameters (most of them the embeddings of the coordinate tokens, once added) and
a byte-level BPE tokenizer trained here on a few words and the GAVEL prompt; their answers mean
nothing until trained, and even then only on the data they were trained on.

    python -m gavel.train.tiny qwen2.5-vl DIR     # a model directory hf: can load
    python -m gavel.train.tiny data DIR           # DIR/gavel.jsonl with DIR/images/
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

WORDS = [
    "the", "a", "an", "of", "in", "on", "is", "not", "there", "image", "caption", "matches",
    "square", "circle", "red", "green", "blue", "yellow", "left", "right", "top", "bottom",
    "hallucination", "explanation", "boxes", "true", "false", "yes", "no", "user", "assistant",
    "error", "shows", "instead", "box", "find", "which", "where", "what",
]  # fmt: skip
QWEN_SPECIALS = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
    "<|image_pad|>", "<|video_pad|>",
]  # fmt: skip
#: A shortened Qwen chat template: same turn markers, vision tags and generation prompt.
QWEN_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}{{ '\\n' }}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}{% if part['type'] == 'image' %}"
    "<|vision_start|><|image_pad|><|vision_end|>{% elif part['type'] == 'text' %}"
    "{{ part['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>{{ '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant{{ '\\n' }}{% endif %}"
)
LLAVA_SPECIALS = ["<pad>", "<s>", "</s>", "<image>"]
#: LLaVA-1.5's shape: "USER: <image>\n… ASSISTANT: …", with no end-of-turn token of its own.
LLAVA_TEMPLATE = (
    "{% for message in messages %}{{ message['role'] | upper }}: "
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}{% if part['type'] == 'image' %}<image>{{ '\\n' }}"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}"
    "{{ '\\n' }}{% endfor %}{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)
#: Pixel limits of the tiny Qwen processor: every image becomes 1-4 vision tokens.
QWEN_MIN_PIXELS = 28 * 28 * 4
QWEN_MAX_PIXELS = 28 * 28 * 16
FAMILIES = ("qwen2.5-vl", "llava")
#: BPE vocabulary before the 1,025 coordinate tokens are added.
VOCAB = 600


def _require() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as error:  # pragma: no cover - depends on the environment
        from gavel.errors import ConfigError

        raise ConfigError(
            f"building tiny models needs torch and transformers: pip install "
            f"'gavel-eval[train]' ({error})"
        ) from None
    return torch, transformers


def _bpe(specials: list[str], vocab_size: int) -> Any:
    """A byte-level BPE trained on a few words: any text encodes, common words are short."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE(unk_token=None))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    corpus = [" ".join(WORDS[i:] + WORDS[:i]) for i in range(len(WORDS))]
    punctuation = ['{"hallucination": true, "explanation": "', '", "boxes": []}', "0123456789"]
    # The evaluation prompt too, so a prompt is ~100 tokens rather than ~350 single bytes.
    from gavel.benchmarks.gavel.prompt import BOX_INSTRUCTIONS
    from gavel.prompts import load_template

    prompt = load_template("gavel_v1").render(
        caption="a red square", box_instruction=BOX_INSTRUCTIONS["coord-tokens"]
    )
    tokenizer.train_from_iterator(corpus + [*punctuation, prompt] * 5, trainer)
    return tokenizer


def build_qwen25_vl(
    directory: str | Path, *, hidden: int = 32, layers: int = 2, seed: int = 0
) -> Path:
    """A Qwen2.5-VL with ``layers`` text layers of width ``hidden`` and a one-block vision tower."""
    torch, transformers = _require()
    directory = Path(directory)
    raw = _bpe(QWEN_SPECIALS, VOCAB)
    ids = {token: raw.token_to_id(token) for token in QWEN_SPECIALS}
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=raw, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    heads = 2
    half = hidden // heads // 2  # rotary frequencies per head, split over (t, h, w)
    mrope = [half - 2 * (3 * half // 8), 3 * half // 8, 3 * half // 8]
    config = transformers.Qwen2_5_VLConfig(
        text_config={
            "vocab_size": raw.get_vocab_size(), "hidden_size": hidden,
            "intermediate_size": 2 * hidden, "num_hidden_layers": layers,
            "num_attention_heads": heads, "num_key_value_heads": 1,
            "max_position_embeddings": 2048,
            "rope_parameters": {"rope_type": "default", "mrope_section": mrope,
                                "rope_theta": 10000.0},
            "bos_token_id": ids["<|endoftext|>"], "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"],
        },
        vision_config={
            "depth": 1, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
            "out_hidden_size": hidden, "fullatt_block_indexes": [0], "window_size": 112,
            "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2,
        },
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        tie_word_embeddings=False,
    )  # fmt: skip
    torch.manual_seed(seed)
    model = transformers.Qwen2_5_VLForConditionalGeneration(config).eval()
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    limits = {"min_pixels": QWEN_MIN_PIXELS, "max_pixels": QWEN_MAX_PIXELS}
    processor = transformers.Qwen2_5_VLProcessor(
        image_processor=transformers.Qwen2VLImageProcessor(**limits),
        video_processor=transformers.Qwen2VLVideoProcessor(**limits),
        tokenizer=tokenizer,
        chat_template=QWEN_TEMPLATE,
    )
    model.save_pretrained(directory)
    processor.save_pretrained(directory)
    return directory


def build_llava(directory: str | Path, *, hidden: int = 32, layers: int = 2, seed: int = 0) -> Path:
    """A LLaVA-1.5-shaped model: a one-layer CLIP tower on 28-pixel images, a Llama text model."""
    torch, transformers = _require()
    directory = Path(directory)
    raw = _bpe(LLAVA_SPECIALS, VOCAB)
    ids = {token: raw.token_to_id(token) for token in LLAVA_SPECIALS}
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=raw, bos_token="<s>", eos_token="</s>", pad_token="<pad>"
    )
    config = transformers.LlavaConfig(
        vision_config=transformers.CLIPVisionConfig(
            hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
            image_size=28, patch_size=14, projection_dim=32,
        ),
        text_config=transformers.LlamaConfig(
            vocab_size=raw.get_vocab_size(), hidden_size=hidden, intermediate_size=2 * hidden,
            num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=1,
            max_position_embeddings=2048, bos_token_id=ids["<s>"], eos_token_id=ids["</s>"],
            pad_token_id=ids["<pad>"], tie_word_embeddings=False,
        ),
        image_token_id=ids["<image>"],
        vision_feature_layer=-1,
        vision_feature_select_strategy="default",
    )  # fmt: skip
    torch.manual_seed(seed)
    model = transformers.LlavaForConditionalGeneration(config).eval()
    model.generation_config.eos_token_id = ids["</s>"]
    model.generation_config.pad_token_id = ids["<pad>"]
    processor = transformers.LlavaProcessor(
        image_processor=transformers.CLIPImageProcessor(
            size={"shortest_edge": 28}, crop_size={"height": 28, "width": 28}
        ),
        tokenizer=tokenizer,
        patch_size=14,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        image_token="<image>",
        chat_template=LLAVA_TEMPLATE,
    )
    model.save_pretrained(directory)
    processor.save_pretrained(directory)
    return directory


def build_model(family: str, directory: str | Path, **options: Any) -> Path:
    """One of :data:`FAMILIES`, saved to ``directory`` (created if needed)."""
    builders = {"qwen2.5-vl": build_qwen25_vl, "llava": build_llava}
    if family not in builders:
        raise ValueError(f"unknown tiny model family {family!r}; choose one of {FAMILIES}")
    return builders[family](directory, **options)


_COLOURS = {"red": (220, 40, 40), "green": (40, 180, 60), "blue": (40, 70, 220)}
#: Where each colour's square sits, as a quadrant (left, top) in halves of the image.
_QUADRANTS = {"red": (0, 0), "green": (1, 0), "blue": (0, 1)}
#: Even sizes, so a quadrant's corners are whole pixels and quantize alike in every image.
_SIZES = [(64, 48), (56, 56), (84, 56), (48, 64)]


def tiny_dataset(directory: str | Path, n: int = 32, *, clean: bool = True) -> Path:
    """``directory/gavel.jsonl`` with ``n`` samples, images under ``directory/images/``.

    Each image (of four sizes) has a red, green or blue square filling one quadrant, which the
    colour decides; its true caption is "a red square" and its wrong one "a red circle", whose
    box is the square. ``clean=True`` writes both captions per image (``n / 2`` images); the
    verdict then hangs on one caption word, which a model this small needs
    many epochs to pick up. ``clean=False`` writes only wrong captions (``n`` images): every
    answer has a box, and because the colour (named in the caption) decides the quadrant, a
    tiny model learns to answer in format with the right coordinate tokens within a few epochs.
    Boxes are written as annotators draw them, ``[x, y, w, h]``.
    """
    from PIL import Image, ImageDraw

    directory = Path(directory)
    (directory / "images").mkdir(parents=True, exist_ok=True)
    lines = []
    names = list(_COLOURS)
    images = (n + 1) // 2 if clean else n
    for index in range(images):
        width, height = _SIZES[index % len(_SIZES)]
        colour = names[(index // len(_SIZES)) % len(names)]
        column, row = _QUADRANTS[colour]
        w, h = width // 2, height // 2
        x, y = column * w, row * h
        image = Image.new("RGB", (width, height), (128, 128, 128))
        ImageDraw.Draw(image).rectangle([x, y, x + w - 1, y + h - 1], fill=_COLOURS[colour])
        name = f"images/img{index:04d}.png"
        image.save(directory / name)
        common = {"image": name, "width": width, "height": height, "source": "tiny"}
        if clean:
            lines.append({
                "id": f"tiny-{index:04d}-ok", **common, "caption": f"a {colour} square",
                "hallucinated": False, "category": None,
                "explanation": "the caption matches the image", "boxes": [],
            })  # fmt: skip
        lines.append({
            "id": f"tiny-{index:04d}-bad", **common, "caption": f"a {colour} circle",
            "hallucinated": True, "category": "Obj",
            "explanation": "the shape is a square not a circle", "boxes": [[x, y, w, h]],
        })  # fmt: skip
    path = directory / "gavel.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines[:n]), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Build a tiny random-weight VLM or data set.")
    parser.add_argument("what", choices=[*FAMILIES, "data"])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--n", type=int, default=32, help="data: number of samples")
    parser.add_argument("--seed", type=int, default=0, help="model: weight initialization")
    parser.add_argument(
        "--only-wrong", action="store_true", help="data: only wrong captions, each with a box"
    )
    args = parser.parse_args(argv)
    if args.what == "data":
        print(tiny_dataset(args.directory, args.n, clean=not args.only_wrong))
    else:
        print(build_model(args.what, args.directory, seed=args.seed))


if __name__ == "__main__":
    main()
