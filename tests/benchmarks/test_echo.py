"""The echo filter holds the prompts every benchmark declares, a plugin's included."""

from __future__ import annotations

import sys

from gavel.benchmarks.registry import benchmarks, echo_filter, get_benchmark
from gavel.parsing.verdict import read_answer

#: A plugin benchmark's own prompt: each rule line, copied, reads as a verdict.
PROMPT = (
    "Look at the photo and read the caption: {caption}\n"
    "Say that there is no hallucination when every word matches the photo.\n"
    "Say that the caption contains an error when one word does not."
)

PLUGIN = {
    "entry_points": {"gavel.benchmarks": {"verdicts": "gavel_verdicts:BENCHMARK"}},
    "files": {
        "gavel_verdicts/__init__.py": f"""
from gavel.benchmarks.spec import Benchmark
from gavel.prompts import PromptTexts

PROMPT = {PROMPT!r}


def unused(*args):
    raise NotImplementedError


BENCHMARK = Benchmark(
    "verdicts", "captions judged in words", "JSONL file", unused, unused, unused, unused,
    prompts=lambda: PromptTexts((PROMPT,)),
)
"""
    },
}


def test_a_plugin_benchmarks_own_prompt_is_filtered(plugin_site):
    plugin_site.install("gavel-verdicts", "1.0", **PLUGIN)
    copied = "Say that there is no hallucination when every word matches the photo."
    assert read_answer(copied, echo=echo_filter()).verdict is False  # not loaded yet
    try:
        benchmark = get_benchmark("verdicts")
        assert benchmark in benchmarks()
        reading = read_answer(copied, echo=echo_filter())
        assert reading.verdict is None and reading.copied == 1
        other = "Say that the caption contains an error when one word does not."
        assert read_answer(other, echo=echo_filter()).verdict is None
        # The model's own words after the copied rule are still read.
        own = copied + " The caption contains an error: the cup is green."
        assert read_answer(own, echo=echo_filter()).verdict is True
    finally:
        sys.modules.pop("gavel_verdicts", None)


def test_every_built_in_benchmark_declares_its_prompts():
    for benchmark in benchmarks()[:3]:
        assert benchmark.prompts is not None and benchmark.prompts().templates, benchmark.name
