"""The echo filter: the prompts gavel sends, so a reader sets aside text a model copied.

A model that parrots its prompt (the answer template, a rule line, the question with its "yes
or no") must earn nothing (:mod:`gavel.parsing.echo`). The readers in :mod:`gavel.parsing`
know no prompt, and a benchmark's scoring knows only its own: the caller that scores a run
hands it the filter of every prompt sent (``RunSettings.echo``), built by the registry
(:func:`gavel.benchmarks.registry.echo_filter`) from the shipped template files, the judge's
prompts and the prompts each benchmark declares (:attr:`Benchmark.prompts
<gavel.benchmarks.spec.Benchmark.prompts>`), the built-in ones and every plugin loaded, so a
plugin benchmark's own prompt is filtered like a shipped one. This module knows no benchmark:
it turns prompts into a filter, and gives the filter a benchmark falls back on when its caller
handed none (the shipped templates', the judge's and its own prompts).
"""

from __future__ import annotations

from collections.abc import Callable

from gavel.parsing.echo import EchoFilter
from gavel.prompts import PromptTexts, template_texts
from gavel.prompts.judge import JUDGE_PROMPTS

#: The fallback filters built so far, by the declared prompts they hold.
_BUILT: dict[tuple[PromptTexts, ...], EchoFilter] = {}


def filter_of(prompts: list[PromptTexts]) -> EchoFilter:
    """The filter of these prompts: every template's fixed text, then every plain text."""
    templates = [text for texts in prompts for text in texts.templates]
    plain = [text for texts in prompts for text in texts.plain]
    return EchoFilter.from_templates(templates, plain)


def with_declared(declared: tuple[PromptTexts, ...]) -> EchoFilter:
    """The filter of the shipped templates, ``declared`` and the judge's prompts (built once
    for each set of declared prompts)."""
    built = _BUILT.get(declared)
    if built is None:
        built = _BUILT[declared] = filter_of([template_texts(), *declared, JUDGE_PROMPTS])
    return built


def chosen(given: EchoFilter | None, own: Callable[[], PromptTexts] | None) -> EchoFilter:
    """The filter a caller handed a benchmark's scoring, else the one of the shipped prompts
    and the benchmark's ``own`` (its :attr:`Benchmark.prompts`)."""
    if given is not None:
        return given
    return with_declared(() if own is None else (own(),))
