"""Model specs on the command line (``openai:MODEL``, ``scene``, ``replay:FILE``) -> adapters.

Other distributions add kinds of model through the ``gavel.models`` entry-point group
(:mod:`gavel.plugins`): the entry point's name is the spec's prefix and its object a factory
called as the built-in ones are. A plugin is imported only when a spec names it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gavel.errors import ConfigError
from gavel.plugins import plugin_names, plugins, warn_if_shadowed
from gavel.requests import Model

Factory = Callable[..., Model]
_FACTORIES: dict[str, tuple[Factory, str]] = {}


def register(prefix: str, help_text: str) -> Callable[[Factory], Factory]:
    """Register a factory for specs ``prefix`` or ``prefix:ARGUMENT``.

    The factory is called with the argument and the command line's model options (endpoint,
    sampling, image size, …); options left at None mean "not given".
    """

    def decorate(factory: Factory) -> Factory:
        _FACTORIES[prefix] = (factory, help_text)
        return factory

    return decorate


def load_model(spec: str, **options: Any) -> Model:
    prefix, _, argument = spec.partition(":")
    if prefix in _FACTORIES:
        warn_if_shadowed("model", prefix)
        return _FACTORIES[prefix][0](argument, **options)
    plugin = plugins("model").get(prefix)
    if plugin is None:
        raise ConfigError(f"unknown model {spec!r}; use one of: {describe_specs()}")
    factory = plugin.load()
    if not callable(factory):
        raise plugin.refuse(f"is a {type(factory).__name__}, not a factory of models")
    model = plugin.call(factory, argument, **options)
    missing = [name for name in _MODEL_PARTS if not hasattr(model, name)]
    if missing or not callable(model.answer) or not callable(model.settings):
        raise plugin.refuse(
            f"returned a {type(model).__name__}, not a model (a model has "
            f"{', '.join(_MODEL_PARTS[:-1])} and {_MODEL_PARTS[-1]}; docs/plugins.md)"
        )
    return model


#: What every model has (gavel.requests.Model); the runner reads them all.
_MODEL_PARTS = ("name", "capabilities", "settings", "answer")


def builtin_prefixes() -> list[str]:
    return list(_FACTORIES)


def builtin_help(prefix: str) -> str:
    return _FACTORIES[prefix][1]


def spec_prefixes() -> list[str]:
    """The registered kinds of model (``openai``, ``hf``, ...) and the plugins', as a spec
    starts."""
    return [*_FACTORIES, *plugin_names("model", list(_FACTORIES))]


def describe_specs() -> str:
    own = [help_text for _, help_text in _FACTORIES.values()]
    found = plugins("model")
    others = [
        f"{n}[:ARG] (from {found[n].distribution})" for n in plugin_names("model", list(_FACTORIES))
    ]
    return ", ".join(own + others)


def _no_options(name: str, options: dict[str, Any]) -> None:
    given = sorted(k for k, v in options.items() if v not in (None, (), []))
    if given:
        raise ConfigError(f"the {name} model takes no {', '.join(given)} option(s)")


@register("openai", "openai:MODEL (any OpenAI-compatible server: vLLM, SGLang, hosted APIs)")
def _openai(argument: str, **options: Any) -> Model:
    try:
        import aiohttp  # noqa: F401  (checked here, so a missing extra fails before any work)

        from gavel.models.openai_compat import from_spec
    except ImportError as error:
        raise ConfigError(
            f"the openai adapter needs the 'api' extra: pip install 'gavel-eval[api]' ({error})"
        ) from None
    return from_spec(argument, **options)


@register("hf", "hf:PATH (a local transformers model; pip install 'gavel-eval[hf]')")
def _hf(argument: str, **options: Any) -> Model:
    from gavel.models.hf import from_spec

    return from_spec(argument, **options)


@register("scene", "scene (the built-in model for synthetic scenes)")
def _scene(argument: str, **options: Any) -> Model:
    from gavel.models.scene.adapter import SceneModel

    _no_options("scene", options)
    return SceneModel()


@register("replay", "replay:PREDICTIONS.jsonl (answers saved earlier)")
def _replay(argument: str, **options: Any) -> Model:
    from gavel.models.replay import ReplayModel

    _no_options("replay", options)
    if not argument:
        raise ConfigError("replay needs a file: replay:PREDICTIONS.jsonl")
    return ReplayModel(argument)
