"""Benchmarks, model adapters and judges from other distributions, through entry points.

A third-party package declares, in its ``pyproject.toml``::

    [project.entry-points."gavel.benchmarks"]
    counting = "gavel_counting:BENCHMARK"

and gavel finds it by name (docs/plugins.md). Finding names reads only the installed
distributions' metadata (``entry_points.txt``); a plugin's module is imported when a run
chooses it or ``gavel list`` describes it, so a slow or broken plugin costs nothing to the
commands that do not use it, and a broken one is one message naming its distribution, its
entry point and the error, at the moment it is used.

Built-in names always win: a plugin with the name of a built-in is reported once (on stderr)
when that name is used, and listed as shadowed by ``gavel list``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from gavel.errors import GavelError

#: The entry-point group of each kind of plugin.
GROUPS = {
    "benchmark": "gavel.benchmarks",
    "model": "gavel.models",
    "judge": "gavel.judges",
}


class PluginError(GavelError):
    """A plugin that could not be imported, or that is not what its group expects."""


@dataclass
class Plugin:
    """One entry point of one distribution, not imported until :meth:`load`."""

    kind: str
    name: str
    #: ``module:attribute`` as the entry point declares it.
    value: str
    distribution: str
    version: str
    _entry: Any = field(repr=False, default=None)
    _loaded: Any = field(repr=False, default=None)
    _error: PluginError | None = field(repr=False, default=None)

    @property
    def group(self) -> str:
        return GROUPS[self.kind]

    def origin(self) -> str:
        """Where it comes from, as messages and ``gavel list`` name it."""
        return (
            f"distribution {self.distribution} {self.version}, entry point "
            f"{self.group}: {self.name} = {self.value}"
        )

    def load(self) -> Any:
        """The object the entry point names; a failure to import is a :class:`PluginError`
        naming the distribution, the entry point and the error (raised again on each call)."""
        if self._error is not None:
            raise self._error
        if self._loaded is None:
            try:
                self._loaded = self._entry.load()
            except (Exception, SystemExit) as error:  # whatever the plugin's import raises
                self._error = PluginError(
                    f"the {self.kind} plugin {self.name!r} ({self.origin()}) failed to load: "
                    f"{_failure(error)}"
                )
                raise self._error from None
        return self._loaded

    def call(self, factory: Any, *args: Any, **kwargs: Any) -> Any:
        """``factory(*args, **kwargs)``; what it raises besides a :class:`GavelError` (a bug in
        the plugin, not a user's mistake) becomes one message naming the plugin. A plugin that
        calls ``sys.exit`` is such a failure too: gavel would otherwise end silently with the
        plugin's status (0 for a run that did nothing)."""
        try:
            return factory(*args, **kwargs)
        except GavelError:
            raise
        except (Exception, SystemExit) as error:
            raise self.refuse(f"failed: {_failure(error)}") from None

    @property
    def loaded(self) -> Any:
        """The object, if :meth:`load` imported it already (else None)."""
        return self._loaded

    def refuse(self, what: str) -> PluginError:
        """The error for a plugin whose object is not what its group expects."""
        return PluginError(f"the {self.kind} plugin {self.name!r} ({self.origin()}) {what}")


def _failure(error: BaseException) -> str:
    if isinstance(error, SystemExit):
        return f"it called sys.exit({error.code!r})"
    return f"{type(error).__name__}: {error}"


#: Found plugins per kind, for the ``sys.path`` they were found on.
_FOUND: dict[tuple[str, tuple[str, ...]], dict[str, Plugin]] = {}
#: Shadowed plugins already reported in this process.
_WARNED: set[tuple[str, str]] = set()


def plugins(kind: str) -> dict[str, Plugin]:
    """Every plugin of ``kind`` installed, by name (the first distribution found wins a name
    two declare). Reads metadata only; imports no plugin."""
    key = (kind, tuple(sys.path))
    if key not in _FOUND:
        from importlib.metadata import entry_points

        found: dict[str, Plugin] = {}
        for entry in entry_points(group=GROUPS[kind]):
            dist = entry.dist
            name = dist.metadata["Name"] if dist is not None else None
            found.setdefault(
                entry.name,
                Plugin(
                    kind,
                    entry.name,
                    entry.value,
                    name or "(unknown distribution)",
                    (dist.version if dist is not None else None) or "?",
                    entry,
                ),
            )
        _FOUND[key] = found
    return _FOUND[key]


def plugin_names(kind: str, builtins: list[str]) -> list[str]:
    """The names of the plugins of ``kind`` that no built-in shadows, in the order found."""
    taken = set(builtins)
    return [name for name in plugins(kind) if name not in taken]


def warn_if_shadowed(kind: str, name: str) -> None:
    """Say once on stderr that a built-in ``name`` is used over a plugin of the same name."""
    plugin = plugins(kind).get(name)
    if plugin is None or (kind, name) in _WARNED:
        return
    _WARNED.add((kind, name))
    print(
        f"warning: the built-in {kind} {name!r} is used; the plugin of the same name "
        f"({plugin.origin()}) is ignored",
        file=sys.stderr,
    )
