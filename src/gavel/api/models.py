"""The models gavel can run and the model families it knows, as a caller names them."""

from __future__ import annotations


def describe_models() -> str:
    """How a model is named (``openai:MODEL``, ``hf:PATH``, ``scene``, the plugins' kinds)."""
    from gavel.models.registry import describe_specs

    return describe_specs()


def preset_names() -> list[str]:
    """The model families a generation's ``preset`` takes (each declares its box convention,
    image size and GAVEL prompt)."""
    from gavel.models.presets import preset_names as names

    return names()
