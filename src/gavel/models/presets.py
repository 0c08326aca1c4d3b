"""Presets for model families: the box convention their answers use and how to prompt them.

A preset only declares; it never inspects answers. The convention is what the family is known to
emit when asked for boxes (docs/data-format.md lists the conversions); the GAVEL prompt asks for
boxes in exactly that convention, so the declaration and the request agree. DetailVerifyBench and
VideoHallucer use their official prompts for every family.
"""

from __future__ import annotations

from dataclasses import dataclass

from gavel.errors import ConfigError
from gavel.media.sampling import FrameSampling


@dataclass(frozen=True)
class Preset:
    name: str
    box_format: str
    #: Longest image side sent to the model (None: send as is).
    max_image_side: int | None
    #: The GAVEL prompt template shipped with gavel.
    gavel_prompt: str
    notes: str
    #: How a video's frames are chosen for this family (None: gavel's default, 8 uniform).
    frames: FrameSampling | None = None


_PRESETS: dict[str, Preset] = {}


def _register(preset: Preset) -> None:
    _PRESETS[preset.name] = preset


def get_preset(name: str) -> Preset:
    try:
        return _PRESETS[name]
    except KeyError:
        raise ConfigError(
            f"unknown preset {name!r}; choose one of: {', '.join(_PRESETS)}"
        ) from None


def preset_names() -> list[str]:
    return list(_PRESETS)


_register(Preset(
    "qwen2.5-vl", "resized-pixel", None, "gavel_v1",
    "absolute pixels of the processor's resized input (smart_resize, factor 28)",
))  # fmt: skip
_register(Preset("qwen3-vl", "rel1000", None, "gavel_v1", "coordinates relative to 0-1000"))
_register(Preset("internvl3.5", "rel1000", None, "gavel_v1", "coordinates relative to 0-1000"))
_register(Preset(
    "gpt", "pixel", 1024, "gavel_v1",
    "pixels of the image as sent; images are downscaled to a 1024 px long side",
))  # fmt: skip
_register(Preset(
    "gemini", "yx1000", None, "gavel_v1",
    "box_2d as [ymin, xmin, ymax, xmax] in 0-1000; videos as one frame per second (the rate "
    "Gemini samples video files at), at most 32",
    FrameSampling(mode="fps", fps=1.0, max_frames=32),
))  # fmt: skip
_register(Preset(
    "florence-2", "loc1000", None, "gavel_v1",
    "<loc_N> tokens in 1000 bins; Florence-2 grounds phrases but rarely states a verdict",
))  # fmt: skip
_register(Preset("generic", "pixel", None, "gavel_v1", "pixels of the image as sent"))
_register(Preset(
    "gavel-sft", "coord-tokens", None, "gavel_v1",
    "a model trained with `gavel train sft`: <p-512>..<p512> coordinate tokens, asked with "
    "the prompt it was trained on",
))  # fmt: skip
_register(Preset(
    "qwen-vl", "qwen-vl", None, "gavel_v1",
    "Qwen-VL (v1): <ref>phrase</ref><box>(x1,y1),(x2,y2)</box>, corner pairs in 0-1000; "
    "several <box> may follow one <ref>",
))  # fmt: skip
_register(Preset(
    "florence-2-ocr", "loc1000-quad", None, "gavel_v1",
    "Florence-2 asked with <OCR_WITH_REGION>: eight <loc_N> tokens (a quadrilateral) per text "
    "region, read as its bounding box",
))  # fmt: skip
_register(Preset(
    "kosmos-2", "patch32", None, "gavel_v1",
    "<object><patch_index_N><patch_index_M></object>: two cells of a 32 x 32 grid",
))  # fmt: skip
_register(Preset(
    "deepseek-vl2", "rel999", None, "gavel_v1",
    "<|ref|>phrase<|/ref|><|det|>[[x1, y1, x2, y2]]<|/det|>, relative 0-999",
))  # fmt: skip
_register(Preset(
    "kimi-vl", "rel1", None, "gavel_v1",
    'Kimi-VL writes {"bbox_2d": [x1, y1, x2, y2]} relative 0-1 (not 0-1000 like Qwen3-VL)',
))  # fmt: skip
_register(Preset(
    "molmo", "rel100", None, "gavel_v1",
    'Molmo points, <point x="17.0" y="66.5">, are percent of the image; a point is not a '
    "box, so such answers give no box",
))  # fmt: skip
_register(Preset(
    "llava-1.5", "rel1-square", None, "gavel_v1",
    "[x1, y1, x2, y2] in 0-1 of the image padded to a centred square (LLaVA-1.5's "
    "expand2square)",
))  # fmt: skip
_register(Preset(
    "minicpm-v", "rel1000", None, "gavel_v1",
    "MiniCPM-V: <ref>phrase</ref><box>x1 y1 x2 y2</box>, blank-separated, relative 0-1000",
))  # fmt: skip
_register(Preset(
    "cogvlm", "rel1000", None, "gavel_v1",
    "CogVLM / CogAgent: [[x1,y1,x2,y2]] relative x 1000, zero-padded to three digits "
    "([[086,540,400,760]]); read as a list in prose (lenient)",
))  # fmt: skip
_register(Preset(
    "glm-4.5v", "rel1000", None, "gavel_v1",
    "GLM-4.5V / GLM-4.1V: <|begin_of_box|>[[x1,y1,x2,y2]]<|end_of_box|>, relative 0-1000",
))  # fmt: skip
_register(Preset(
    "claude", "pixel", 1092, "gavel_v1",
    "pixels of the image Claude sees; a long side of 1092 px keeps every aspect ratio within "
    "Claude's visual-token budget (1,568 tokens of 28 x 28 px), so Claude does not resize "
    "and the image it sees is the one sent (its padding is bottom and right only)",
))  # fmt: skip
_register(Preset(
    "gpt-4.1", "pixel", 768, "gavel_v1",
    "pixels of the image as sent, asked for as JSON; a long side of 768 px is under both of "
    "the API's high-detail resizes (fit 2048 square, shortest side 768), so the model sees "
    "the image as sent",
))  # fmt: skip
_register(Preset(
    "gpt-5", "pixel", 768, "gavel_v1",
    "as gpt-4.1: pixels of the image as sent (768 px long side, never resized by the API)",
))  # fmt: skip
_register(Preset(
    "llama-4", "pixel", None, "gavel_v1",
    "no box syntax is documented for Llama 4 (its card names image grounding only); gavel "
    "asks for [x1, y1, x2, y2] in pixels of the image as sent",
))  # fmt: skip
_register(Preset(
    "pixtral", "pixel", 1024, "gavel_v1",
    "no box syntax is documented for Pixtral; gavel asks for pixels of the image as sent, at "
    "most 1024 px (the processor's longest edge, so the image is not resized again)",
))  # fmt: skip
_register(Preset(
    "phi-4-multimodal", "pixel", None, "gavel_v1",
    "no box syntax is documented for Phi-4-multimodal; gavel asks for [x1, y1, x2, y2] in "
    "pixels of the image as sent",
))  # fmt: skip
