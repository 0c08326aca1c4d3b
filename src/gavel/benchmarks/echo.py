"""The echo filter: every prompt gavel sends, so a reader sets aside text a model copied.

A model that parrots its prompt (the answer template, a rule line, the question with its "yes
or no") must earn nothing (:mod:`gavel.parsing.echo`). The readers in :mod:`gavel.parsing`
know no prompt: their callers hand them this filter, built from the shipped template files, the
judge's prompts and the prompts each benchmark declares (:attr:`Benchmark.prompts
<gavel.benchmarks.spec.Benchmark.prompts>`), the built-in ones and every plugin loaded, so a
plugin benchmark's own prompt is filtered like a shipped one.
"""

from __future__ import annotations

from gavel.parsing.echo import EchoFilter
from gavel.prompts import PromptTexts, template_texts
from gavel.prompts.judge import JUDGE_PROMPTS

#: The filter last built, and the declared prompts it was built from.
_BUILT: tuple[tuple[PromptTexts, ...], EchoFilter] | None = None


def echo_filter() -> EchoFilter:
    """The filter of every prompt sent (built once for each set of benchmarks known)."""
    global _BUILT
    from gavel.benchmarks.registry import benchmarks

    declared = tuple(b.prompts() for b in benchmarks() if b.prompts is not None)
    if _BUILT is None or _BUILT[0] != declared:
        _BUILT = (declared, filter_of([template_texts(), *declared, JUDGE_PROMPTS]))
    return _BUILT[1]


def filter_of(prompts: list[PromptTexts]) -> EchoFilter:
    """The filter of these prompts: every template's fixed text, then every plain text."""
    templates = [text for texts in prompts for text in texts.templates]
    plain = [text for texts in prompts for text in texts.plain]
    return EchoFilter.from_templates(templates, plain)
