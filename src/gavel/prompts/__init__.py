"""Versioned prompt templates; their SHA-256 goes into every manifest.

This package only holds prompt texts (:mod:`gavel.prompts.judge`: the judge's): it imports no
reader, so every reader below the benchmarks can be handed the prompts it must ignore.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources

from gavel.errors import ConfigError


@dataclass(frozen=True)
class Template:
    name: str
    text: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()

    def render(self, **fields: str) -> str:
        return self.text.format(**fields)


def load_template(name: str) -> Template:
    """A template shipped with gavel, e.g. ``gavel_v1``; another name is a ConfigError
    listing the shipped ones (never a path inside the package)."""
    if not isinstance(name, str) or name not in template_names():
        shipped = ", ".join(template_names())
        raise ConfigError(f"unknown prompt template {name!r}; gavel ships {shipped}")
    text = resources.files(__package__).joinpath(f"{name}.txt").read_text(encoding="utf-8")
    return Template(name, text)


def template_names() -> list[str]:
    """Every template file shipped with gavel (``gavel_v1``, ``videohallucer_v1``, ...)."""
    folder = resources.files(__package__)
    return sorted(p.name[:-4] for p in folder.iterdir() if p.name.endswith(".txt"))


@dataclass(frozen=True)
class PromptTexts:
    """The prompts one part of gavel sends, as its echo filter needs them: ``templates`` are
    ``str.format`` templates (cut at their fields), ``plain`` are texts sent as they are.

    Each benchmark declares its own (:attr:`gavel.benchmarks.spec.Benchmark.prompts`), so text a
    model copied from any of them, a plugin's included, is set aside before its answer is read
    (:mod:`gavel.benchmarks.echo`)."""

    templates: tuple[str, ...] = ()
    plain: tuple[str, ...] = ()


def template_texts() -> PromptTexts:
    """Every template file shipped with gavel, as prompts sent."""
    return PromptTexts(tuple(load_template(name).text for name in template_names()))
