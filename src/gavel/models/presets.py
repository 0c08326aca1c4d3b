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
