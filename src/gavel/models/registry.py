"""Model specs on the command line (``scene``, ``replay:FILE``, …) -> adapters."""

from __future__ import annotations

from collections.abc import Callable

from gavel.errors import ConfigError
from gavel.models.base import Model

_FACTORIES: dict[str, tuple[Callable[[str], Model], str]] = {}


def register(
    prefix: str, help_text: str
) -> Callable[[Callable[[str], Model]], Callable[[str], Model]]:
    """Register a factory for specs ``prefix`` or ``prefix:ARGUMENT``."""

    def decorate(factory: Callable[[str], Model]) -> Callable[[str], Model]:
        _FACTORIES[prefix] = (factory, help_text)
        return factory

    return decorate


def load_model(spec: str) -> Model:
    prefix, _, argument = spec.partition(":")
    if prefix not in _FACTORIES:
        raise ConfigError(f"unknown model {spec!r}; use one of: {describe_specs()}")
    return _FACTORIES[prefix][0](argument)


def describe_specs() -> str:
    return ", ".join(help_text for _, help_text in _FACTORIES.values())


@register("scene", "scene (the built-in model for synthetic scenes)")
def _scene(argument: str) -> Model:
    from gavel.models.scene.adapter import SceneModel

    return SceneModel()


@register("replay", "replay:PREDICTIONS.jsonl (answers saved earlier)")
def _replay(argument: str) -> Model:
    from gavel.models.replay import ReplayModel

    if not argument:
        raise ConfigError("replay needs a file: replay:PREDICTIONS.jsonl")
    return ReplayModel(argument)
