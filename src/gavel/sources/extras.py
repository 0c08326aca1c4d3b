"""The optional libraries Hub and Parquet data need, with a message naming the extra."""

from __future__ import annotations

import importlib
from types import ModuleType

from gavel.errors import ConfigError


def need(module: str) -> ModuleType:
    """``import module``, or a configuration error saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        top = module.partition(".")[0]
        raise ConfigError(
            f"Hub and Parquet data need {top}: pip install 'gavel-eval[hub]'"
        ) from None
