"""Choosing a judge from the command line and adding its scores to a scored GAVEL run.

``openai:MODEL`` is the paper's protocol on any OpenAI-compatible server; ``offline`` is the
embedding proxy, which needs no network and is labelled a proxy wherever it appears. Other
distributions add judges through the ``gavel.judges`` entry-point group (:mod:`gavel.plugins`):
``--judge NAME[:ARG]`` calls the factory the entry point ``NAME`` names with ``ARG`` and the
:class:`JudgeOptions`; it is imported only then.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from gavel.errors import ConfigError
from gavel.judge.items import JUDGE_ERROR, Judged, JudgeItem, attach, judge_items, summarize_judged
from gavel.manifest import redact_userinfo
from gavel.plugins import plugin_names, plugins, warn_if_shadowed
from gavel.records import GavelSample, GavelScore, Result

#: The command line's names for the judge's settings (see ``OpenAIChatModel.advice``).
JUDGE_FLAGS = {
    "model": "--judge openai:NAME",
    "base_url": "--judge-base-url",
    "api_key_env": "--judge-api-key-env",
    "max_tokens": "--judge-max-tokens",
    "temperature": "--judge-temperature",
    "extra_body": "--judge-extra-body",
    "model_check": "--no-judge-model-check",
}


class Judge(Protocol):
    proxy: bool

    @property
    def name(self) -> str: ...

    def settings(self) -> dict[str, Any]: ...

    def judge(self, items: Sequence[JudgeItem], progress: bool = False) -> list[Judged]: ...


@dataclass(frozen=True)
class JudgeOptions:
    """The command line's judge flags (None: the judge's default)."""

    base_urls: tuple[str, ...] = ()
    api_key_env: str | None = None
    concurrency: int = 16
    max_tokens: int | None = None
    temperature: float | None = 0.0
    extra_body: dict[str, Any] = field(default_factory=dict)
    invalid_retries: int = 2
    cache: Path | None = None
    replies: Path | None = None
    progress: bool = True
    #: Seconds one request may take (None: the adapter's default).
    timeout: float | None = None
    #: Whether the server's ``GET /models`` is asked for the judge's name before judging.
    model_check: bool = True
    #: Requests and tokens per minute the judge's endpoint allows (None: no budget).
    rpm: float | None = None
    tpm: float | None = None


#: The built-in judges: the name a spec starts with -> what it is.
BUILTIN_JUDGES = {
    "offline": "offline (the embedding proxy: no network; labelled proxy)",
    "openai": "openai:MODEL (the paper's LLM-judge protocol on any OpenAI-compatible server)",
}


def judge_names() -> list[str]:
    """The built-in judges, then the plugins' (found without importing any)."""
    return [*BUILTIN_JUDGES, *plugin_names("judge", list(BUILTIN_JUDGES))]


def load_judge(spec: str, options: JudgeOptions = JudgeOptions()) -> Judge:
    """``offline``, ``openai:MODEL`` or a plugin's ``NAME[:ARG]`` -> a judge."""
    prefix, _, name = spec.partition(":")
    if prefix in BUILTIN_JUDGES:
        warn_if_shadowed("judge", prefix)
    elif prefix in plugins("judge"):
        plugin = plugins("judge")[prefix]
        factory = plugin.load()
        if not callable(factory):
            raise plugin.refuse(f"is a {type(factory).__name__}, not a factory of judges")
        return plugin.call(factory, name, options)
    if spec == "offline":
        from gavel.judge.offline import OfflineJudge

        return OfflineJudge()
    if prefix != "openai" or not name:
        others = "".join(f", '{n}'" for n in judge_names() if n not in BUILTIN_JUDGES)
        raise ConfigError(
            f"unknown judge {spec!r}: use 'offline' or 'openai:MODEL' (any OpenAI-compatible "
            f"server; --judge-base-url points at it){others}"
        )
    from gavel.judge.llm import LLMJudge
    from gavel.models.registry import load_model

    model = load_model(
        spec,
        base_urls=list(options.base_urls) or None,
        api_key_env=options.api_key_env,
        max_tokens=options.max_tokens,
        temperature=options.temperature,
        extra_body=options.extra_body or None,
        timeout=options.timeout,
        model_check=options.model_check,
        rpm=options.rpm,
        tpm=options.tpm,
    )
    if options.max_tokens == 0:  # 0 on the command line: send no token limit at all
        model.max_tokens = None  # type: ignore[attr-defined]
    model.flags = dict(JUDGE_FLAGS)  # type: ignore[attr-defined]  # what a refusal's advice names
    return LLMJudge(
        model,
        concurrency=options.concurrency,
        invalid_retries=options.invalid_retries,
        cache=options.cache,
        replies=options.replies,
        progress=options.progress,
    )


def judge_result(
    result: Result,
    samples: Sequence[GavelSample],
    scores: Sequence[GavelScore],
    judge: Judge,
    progress: bool = False,
) -> list[Judged]:
    """Judge every sample's explanation; fills ``metrics.explanation``, the manifest's judge,
    ``counts.judge_error`` and each score's judge fields. Returns the per-sample records."""
    judged = judge.judge(judge_items(samples, scores), progress=progress)
    attach(scores, judged)
    record_judged(result, judge, judged)
    return judged


def record_judged(result: Result, judge: Judge, judged: Sequence[Judged]) -> None:
    """What :func:`judge_result` records in the result (the scores' fields aside):
    ``metrics.explanation``, the manifest's judge, ``counts.judge_error`` and warnings."""
    described = redact_userinfo(judge.settings())  # recorded: no key, writable paths
    usage = getattr(judge, "usage", None)
    if usage is not None:
        described["usage"] = usage()
    served = getattr(judge, "served", None)
    if callable(served) and served():  # the model that answered, as its server named it
        described["served_model"] = served()
    stopped = getattr(judge, "stopped", None)
    if stopped:  # why the samples left are "not judged", beside the metrics they are out of
        described["stopped"] = stopped
    result.metrics["explanation"] = summarize_judged(judged, described)
    result.manifest.judge = described
    result.counts[JUDGE_ERROR] = sum(j.status == JUDGE_ERROR for j in judged)
    if stopped:
        result.warnings.append(
            f"the judge run stopped before every sample was judged ({stopped}); every other "
            "metric is complete; rerun the same command to judge the rest"
        )
    if result.counts[JUDGE_ERROR]:
        result.warnings.append(
            f"{result.counts[JUDGE_ERROR]} sample(s) got no valid judge score (judge_error): "
            "left out of the explanation means; rerun to ask again"
        )
