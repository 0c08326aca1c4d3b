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
