"""Image token rules against values worked out by hand from each provider's published rule
(the worked examples of the OpenAI and Anthropic pages where they give one)."""

from __future__ import annotations

import pytest

from gavel.cost.image_tokens import (
    ESTIMATE,
    RULES,
    claude_image_tokens,
    gemini_frame_tokens,
    gemini_image_tokens,
    openai_image_tokens,
    qwen25_image_tokens,
    rule_for,
)


@pytest.mark.parametrize(
    ("size", "detail", "tokens"),
    [
        # OpenAI's own examples: 1024 x 1024 -> 768 x 768 -> 4 tiles -> 85 + 4 * 170.
        ((1024, 1024), "high", 765),
        # 2048 x 4096 -> 1024 x 2048 (fits 2048) -> 768 x 1536 -> 2 x 3 tiles -> 85 + 6 * 170.
        ((2048, 4096), "high", 1105),
        ((4096, 8192), "low", 85),
        # Shortest side 480 < 768: not scaled; ceil(640/512) * ceil(480/512) = 2 tiles.
        ((640, 480), "high", 425),
        ((512, 512), "high", 255),
    ],
)
def test_openai_tiles(size, detail, tokens):
    assert openai_image_tokens(*size, detail=detail) == tokens


@pytest.mark.parametrize(
    ("size", "tokens"),
    [
        # round(640/28) = 23, round(480/28) = 17: 23 * 17 = 391 patches + 2 vision tokens.
        ((640, 480), 393),
        # 28 x 28 = 784 px is under min_pixels 3136: scaled by 2 to 56 x 56 = 2 x 2 patches.
        ((28, 28), 6),
        # 8000 x 6000 rounds to 8008 x 5992 > 28*28*16384 px: beta = sqrt(48e6 / 12845056)
        # = 1.93309, floor(8000 / beta / 28) = 147, floor(6000 / beta / 28) = 110.
        ((8000, 6000), 147 * 110 + 2),
    ],
)
def test_qwen25_vl_patches_after_smart_resize(size, tokens):
    assert qwen25_image_tokens(*size) == tokens


def test_gemini_fixed_count_per_image_tile_and_frame():
    assert gemini_image_tokens(384, 384) == 258  # both sides at most 384: one image
    assert gemini_image_tokens(1000, 800) == 4 * 258  # 2 x 2 tiles of 768 px
    assert gemini_frame_tokens(1920, 1080) == 258  # a video frame, whatever its size


@pytest.mark.parametrize(
    ("size", "tokens"),
    [
        ((1092, 1092), 1590),  # Anthropic's table: 1092 x 1092 is ~1590 tokens
        ((200, 200), 54),  # 40000 / 750 = 53.3, ~54
        ((1000, 1000), 1334),  # 1333.3, ~1334
        # Over ~1,600 tokens: scaled by sqrt(1600 * 750 / 6e6) = 0.44721 to 1342 x 894.
        ((3000, 2000), 1600),
    ],
)
def test_claude_area_over_750(size, tokens):
    assert claude_image_tokens(*size) == tokens


def test_the_family_comes_from_the_preset_then_the_model_name():
    assert rule_for("gpt", "anything") is RULES["openai"]
    assert rule_for("qwen2.5-vl", "my-served-name") is RULES["qwen2.5-vl"]
    assert rule_for(None, "gpt-4o-2024-08-06") is RULES["openai"]
    assert rule_for(None, "anthropic/claude-sonnet-4") is RULES["claude"]
    assert rule_for(None, "Qwen/Qwen2.5-VL-7B-Instruct") is RULES["qwen2.5-vl"]
    assert rule_for("qwen3-vl", "Qwen/Qwen3-VL-8B") is ESTIMATE
    assert not ESTIMATE.published and "estimate" in ESTIMATE.name
