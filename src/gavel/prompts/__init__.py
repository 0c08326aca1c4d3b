"""Versioned prompt templates; their SHA-256 goes into every manifest."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources


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
    """A template shipped with gavel, e.g. ``gavel_v1``."""
    text = resources.files(__package__).joinpath(f"{name}.txt").read_text(encoding="utf-8")
    return Template(name, text)
