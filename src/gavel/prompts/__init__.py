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


def template_names() -> list[str]:
    """Every template file shipped with gavel (``gavel_v1``, ``videohallucer_v1``, ...)."""
    folder = resources.files(__package__)
    return sorted(p.name[:-4] for p in folder.iterdir() if p.name.endswith(".txt"))


def shipped_prompts() -> tuple[list[str], list[str]]:
    """Every prompt gavel ever sends, as ``(templates, plain texts)``: the template files, the
    DetailVerifyBench thinking prompt, the LLM judge's prompts and the box instructions that
    fill the GAVEL prompt. Readers remove echoes of these (:mod:`gavel.parsing.echo`)."""
    # Imported here: those modules import the parsers, which import this one.
    from gavel.benchmarks.detailverify.prompt import load_prompt
    from gavel.benchmarks.gavel.prompt import BOX_INSTRUCTIONS
    from gavel.judge.protocol import HALLUCINATION_PROMPT, NO_HALLUCINATION_PROMPT, SYSTEM_PROMPT

    templates = [load_template(name).text for name in template_names()]
    templates += [load_prompt(thinking=True).text, HALLUCINATION_PROMPT, NO_HALLUCINATION_PROMPT]
    return templates, [SYSTEM_PROMPT, *BOX_INSTRUCTIONS.values()]


_ECHO = None


def prompt_echo():
    """The :class:`gavel.parsing.echo.EchoFilter` of every shipped prompt (built once)."""
    global _ECHO
    if _ECHO is None:
        from gavel.parsing.echo import EchoFilter

        templates, plain = shipped_prompts()
        _ECHO = EchoFilter.from_templates(templates, plain)
    return _ECHO
