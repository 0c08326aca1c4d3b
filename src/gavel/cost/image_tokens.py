"""Tokens an image costs, by the rule each model family publishes.

Every rule takes the size of the image *as sent* (after gavel's own downscaling to the preset's
``max_image_side``) and returns the prompt tokens it adds. A video is sent as its sampled frames,
so a frame costs what an image of its size costs (Gemini gives frames their own count).

- OpenAI GPT-4o class, "Calculating costs" in platform.openai.com/docs/guides/images-vision:
  ``detail: high`` (the default ``auto`` for large images) scales the image to fit in 2048 x 2048,
  then so that its shortest side is 768 px, counts the 512 px tiles that cover it, and charges
  170 tokens a tile plus 85. ``detail: low`` is 85 whatever the size.
- Qwen2.5-VL, the model card and its processor (Qwen2VLImageProcessor): ``smart_resize`` to
  multiples of 28 within the pixel bounds, 14 px patches merged 2 x 2, so one token per 28 x 28
  px of the resized image, plus the ``<|vision_start|>`` and ``<|vision_end|>`` tokens around them.
- Gemini 2.x, ai.google.dev/gemini-api/docs/tokens ("Multimodal tokens"): an image with both
  sides at most 384 px is 258 tokens; a larger one is cut into 768 x 768 tiles of 258 tokens
  each; a video frame is 258 tokens.
- Claude, docs.anthropic.com/en/docs/build-with-claude/vision ("Evaluate image size"):
  ``tokens = width * height / 750`` after the image is scaled down so its long side is at most
  1568 px and it is at most about 1,600 tokens.

Families without a published rule get an estimate of one token per 28 x 28 px (a ViT of 14 px
patches merged 2 x 2, the most common layout), labelled as an estimate.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from gavel.parsing.conventions import qwen_smart_resize

OPENAI_BASE_TOKENS = 85
OPENAI_TILE_TOKENS = 170
GEMINI_TILE_TOKENS = 258
CLAUDE_PIXELS_PER_TOKEN = 750
CLAUDE_MAX_SIDE = 1568
CLAUDE_MAX_TOKENS = 1600
ESTIMATE_PATCH = 28


def openai_image_tokens(width: int, height: int, detail: str = "high") -> int:
    """GPT-4o-class image tokens: 85 + 170 per 512 px tile after the two scalings."""
    if detail == "low":
        return OPENAI_BASE_TOKENS
    w, h = float(width), float(height)
    if max(w, h) > 2048:
        scale = 2048 / max(w, h)
        w, h = w * scale, h * scale
    if min(w, h) > 768:
        scale = 768 / min(w, h)
        w, h = w * scale, h * scale
    tiles = math.ceil(w / 512) * math.ceil(h / 512)
    return OPENAI_BASE_TOKENS + OPENAI_TILE_TOKENS * tiles


def qwen25_image_tokens(width: int, height: int) -> int:
    """Qwen2.5-VL image tokens: one per 28 x 28 px of the smart_resize size, plus 2."""
    resized_w, resized_h = qwen_smart_resize(width, height)
    return (resized_w // 28) * (resized_h // 28) + 2


def gemini_image_tokens(width: int, height: int) -> int:
    """Gemini 2.x image tokens: 258 up to 384 x 384, else 258 per 768 px tile."""
    if max(width, height) <= 384:
        return GEMINI_TILE_TOKENS
    return GEMINI_TILE_TOKENS * math.ceil(width / 768) * math.ceil(height / 768)


def gemini_frame_tokens(width: int, height: int) -> int:
    """Gemini video frame tokens: a fixed 258 whatever the frame's size."""
    return GEMINI_TILE_TOKENS


def claude_image_tokens(width: int, height: int) -> int:
    """Claude image tokens: width * height / 750 after the documented downscaling."""
    scale = min(
        1.0,
        CLAUDE_MAX_SIDE / max(width, height),
        math.sqrt(CLAUDE_MAX_TOKENS * CLAUDE_PIXELS_PER_TOKEN / (width * height)),
    )
    w, h = round(width * scale), round(height * scale)
    return math.ceil(w * h / CLAUDE_PIXELS_PER_TOKEN)


def estimated_image_tokens(width: int, height: int) -> int:
    return math.ceil(width / ESTIMATE_PATCH) * math.ceil(height / ESTIMATE_PATCH)


@dataclass(frozen=True)
class ImageRule:
    """One family's rule: ``image(w, h)`` and ``frame(w, h)`` in tokens."""

    name: str
    image: Callable[[int, int], int]
    frame: Callable[[int, int], int]
    #: False for the fallback estimate.
    published: bool = True


RULES = {
    "openai": ImageRule("OpenAI tiles (85 + 170 per 512 px tile)", openai_image_tokens,
                        openai_image_tokens),
    "qwen2.5-vl": ImageRule("Qwen2.5-VL (28 px patches after smart_resize)", qwen25_image_tokens,
                            qwen25_image_tokens),
    "gemini": ImageRule("Gemini (258 per image tile, 258 per frame)", gemini_image_tokens,
                        gemini_frame_tokens),
    "claude": ImageRule("Claude (width x height / 750)", claude_image_tokens,
                        claude_image_tokens),
}  # fmt: skip
ESTIMATE = ImageRule(
    "estimate (1 token per 28 x 28 px; no published rule for this model)",
    estimated_image_tokens,
    estimated_image_tokens,
    published=False,
)
#: Presets whose family has a rule.
PRESET_FAMILIES = {"gpt": "openai", "qwen2.5-vl": "qwen2.5-vl", "gemini": "gemini"}
#: Model name prefixes (after a provider's ``org/``) of the families with a rule.
NAME_FAMILIES = (
    ("gpt-", "openai"), ("o1", "openai"), ("o3", "openai"), ("o4", "openai"),
    ("chatgpt", "openai"), ("qwen2.5-vl", "qwen2.5-vl"), ("qwen2_5_vl", "qwen2.5-vl"),
    ("gemini", "gemini"), ("claude", "claude"),
)  # fmt: skip


def rule_for(preset: str | None, model: str) -> ImageRule:
    """The rule of the model's family: the preset's, else the model name's, else the estimate."""
    if preset in PRESET_FAMILIES:
        return RULES[PRESET_FAMILIES[preset]]
    name = model.rsplit("/", 1)[-1].lower()
    for prefix, family in NAME_FAMILIES:
        if name.startswith(prefix):
            return RULES[family]
    return ESTIMATE
