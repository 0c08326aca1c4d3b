"""What gavel knows and where each is from (``gavel list``): the benchmarks, kinds of model and
judges, and the model families' presets and box conventions, each with one example reply and
the boxes gavel reads from it.

Built-in ones are described from their registries; each plugin is imported here to describe
it (the only place that imports plugins it does not run), and one that fails to import is a
line saying why, so a broken plugin is found before a run needs it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gavel.errors import GavelError
from gavel.plugins import Plugin, plugins

__all__ = ["EXAMPLE_SIZE", "KINDS", "Entry", "registered"]

#: What can be listed, in the order listed.
KINDS = ("benchmarks", "models", "judges", "presets", "conventions")
#: The image the examples of presets and conventions are read for: (width, height) in pixels.
EXAMPLE_SIZE = (1000, 800)


@dataclass(frozen=True)
class Entry:
    """One thing gavel can be asked to use, and whether it can be."""

    kind: str
    name: str
    #: ``built-in``, or the plugin's distribution, version and entry point.
    source: str
    description: str
    #: ``ok``, ``error`` (the plugin failed to load) or ``shadowed`` (a built-in has its name).
    status: str = "ok"
    #: Presets and conventions: one reply in their form, and the boxes gavel reads from it
    #: (pixels of an :data:`EXAMPLE_SIZE` image).
    example: str | None = None
    example_boxes: list[list[float]] = field(default_factory=list)
    #: Presets: their box convention and where its rule comes from.
    convention: str | None = None
    rule_source: str | None = None


def _first_line(text: str | None) -> str:
    return (text or "").strip().partition("\n")[0]


def _plugin_entries(
    kind: str, builtins: dict[str, str], describe: Callable[[Plugin], str]
) -> list[Entry]:
    entries = [Entry(kind, name, "built-in", text) for name, text in builtins.items()]
    for name, plugin in plugins(kind).items():
        entries.append(_plugin_entry(plugin, name in builtins, describe))
    return entries


def _plugin_entry(plugin: Plugin, shadowed: bool, describe: Callable[[Plugin], str]) -> Entry:
    source = f"plugin {plugin.distribution} {plugin.version} ({plugin.group}: {plugin.value})"
    if shadowed:
        return Entry(plugin.kind, plugin.name, source, "ignored: a built-in has this name",
                     "shadowed")  # fmt: skip
    try:
        return Entry(plugin.kind, plugin.name, source, describe(plugin))
    except GavelError as error:
        return Entry(plugin.kind, plugin.name, source, str(error), "error")


def _describe_benchmark(plugin: Plugin) -> str:
    from gavel.benchmarks.registry import get_benchmark

    return get_benchmark(plugin.name).summary


def _describe_factory(plugin: Plugin) -> str:
    factory = plugin.load()
    if not callable(factory):
        raise plugin.refuse(f"is a {type(factory).__name__}, not a factory")
    return _first_line(factory.__doc__)


def _read(example: str, convention: str) -> list[list[float]]:
    from gavel.api.replies import parse_reply

    width, height = EXAMPLE_SIZE
    reading = parse_reply(example, convention=convention, width=width, height=height)
    return [[round(v, 2) for v in box] for box in reading.boxes]


def _presets() -> list[Entry]:
    from gavel.models.presets import get_preset, preset_names

    entries = []
    for name in preset_names():
        preset = get_preset(name)
        entries.append(Entry("preset", name, "built-in", preset.notes, example=preset.example,
                             example_boxes=_read(preset.example, preset.box_format),
                             convention=preset.box_format, rule_source=preset.source))  # fmt: skip
    return entries


def _conventions() -> list[Entry]:
    from gavel.parsing import convention_names, get_convention

    entries = []
    for name in convention_names():
        convention = get_convention(name)
        entries.append(Entry("convention", name, "built-in", convention.description,
                             example=convention.example,
                             example_boxes=_read(convention.example, name)))  # fmt: skip
    return entries


def registered(kinds: tuple[str, ...] = KINDS) -> list[Entry]:
    """Every entry of ``kinds``, built-in ones first; a plugin that fails to load is an entry
    with status ``error`` and its message, never an exception."""
    entries: list[Entry] = []
    if "benchmarks" in kinds:
        from gavel.benchmarks.registry import builtin_names, get_benchmark

        own = {name: get_benchmark(name).summary for name in builtin_names()}
        entries += _plugin_entries("benchmark", own, _describe_benchmark)
    if "models" in kinds:
        from gavel.models.registry import builtin_help, builtin_prefixes

        own = {prefix: builtin_help(prefix) for prefix in builtin_prefixes()}
        entries += _plugin_entries("model", own, _describe_factory)
    if "judges" in kinds:
        from gavel.judge.apply import BUILTIN_JUDGES

        entries += _plugin_entries("judge", dict(BUILTIN_JUDGES), _describe_factory)
    if "presets" in kinds:
        entries += _presets()
    if "conventions" in kinds:
        entries += _conventions()
    return entries
