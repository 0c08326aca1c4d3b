"""The judge of a scoring: built from its settings before any scoring (a wrong setting or a
missing extra is reported before the expensive work), then run over a scored GAVEL run."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from gavel.errors import ConfigError, UsageError
from gavel.io.run_files import judge_replies_path
from gavel.io.spool import LineSpool, SpooledRecords
from gavel.records import GavelSample, GavelScore, Result, Score
from gavel.runner.cache import default_cache
from gavel.scoring.files import without_userinfo
from gavel.setting_checks import json_object

#: Judged scores encoded before each write to their spool.
LINES_PER_WRITE = 4096


def make_judge(out: Path | None, judge_spec: str, judge_base_urls: tuple[str, ...],
               judge_api_key_env: str | None, judge_concurrency: int, judge_max_tokens: int,
               judge_temperature: float, judge_extra_body: str | None, judge_retries: int,
               judge_cache: Path | None, no_judge_cache: bool, judge_price: str | None = None,
               judge_timeout: float | None = None, no_judge_model_check: bool = False,
               progress: bool = True, judge_rpm: float | None = None,
               judge_tpm: float | None = None):  # fmt: skip
    """The judge the settings describe; an LLM judge's replies go beside ``out``."""
    from gavel.judge.apply import JudgeOptions, load_judge

    extra = json_object(judge_extra_body, "--judge-extra-body")
    cache = None if no_judge_cache else (judge_cache or default_cache())
    price = _price(judge_price)
    options = JudgeOptions(
        base_urls=judge_base_urls, api_key_env=judge_api_key_env,
        concurrency=judge_concurrency, max_tokens=judge_max_tokens,
        temperature=judge_temperature, extra_body=extra, invalid_retries=judge_retries,
        cache=cache, replies=judge_replies_path(out) if out is not None else None,
        progress=progress, timeout=judge_timeout, model_check=not no_judge_model_check,
        rpm=judge_rpm, tpm=judge_tpm,
    )  # fmt: skip
    judge = load_judge(judge_spec, options)
    if price is not None and hasattr(judge, "prices"):
        judge.prices = {judge.name: price.per_thousand()}  # the runner's unit
    return judge


def _price(text: str | None):
    from gavel.cost.prices import parse_price

    return None if text is None else parse_price(text, "--judge-price")


def judge_for(benchmark: str, out: Path | None, judge_spec: str | None, **settings: Any):
    """The judge the settings ask for, or None (no ``judge_spec``); only GAVEL's
    explanations are judged."""
    if judge_spec is None:
        return None
    if benchmark != "gavel":
        raise ConfigError("--judge scores GAVEL explanations; it does not apply to " + benchmark)
    return make_judge(out, judge_spec, **settings)


def judge_batch(judge_spec: str | None, out: Path | None, judge_base_urls: Sequence[str], *,
                on: bool, fallback: str | None, rounds: int | None,
                poll: float | None) -> Any:  # fmt: skip
    """The batch settings of the judge (``--judge-batch`` and its tuning), checked against
    the rest: an LLM judge, a place for the batch's records, one server; None without."""
    from gavel.execution.batch_request import batch_settings

    settings = batch_settings(on, "judge-batch", fallback, rounds, poll)
    if settings is None:
        return None
    if judge_spec is None or not judge_spec.startswith("openai:"):
        raise UsageError("--judge-batch needs an LLM judge: --judge openai:MODEL")
    if out is None:
        raise UsageError("--judge-batch needs --out: the batch is recorded beside it")
    if len(judge_base_urls) > 1:
        raise UsageError("--judge-batch sends to one server: give one --judge-base-url")
    return settings


def use_batch(judge: Any, settings: Any) -> None:
    """Make ``judge`` (an LLM judge) send its requests as a batch (``settings``, if any)."""
    if settings is not None:
        judge.batch = settings


def add_judge_scores(judge, data_file: Path, image_root: Path | None, out: Path | None,
                     result: Result, scores: Sequence[Score],
                     ) -> tuple[dict | None, Sequence[GavelScore]]:  # fmt: skip
    """Run the judge over a scored GAVEL run and record it (metrics, manifest): the ledger
    entry to append when the run's files are written, if any, and the scores with the
    judge's fields. The judge's usage goes to stderr in one line."""
    from gavel.benchmarks.gavel.data import load_samples

    samples, _ = load_samples(data_file, image_root)
    scored = {score.id for score in scores}  # a selection scores some samples only
    samples = [sample for sample in samples if sample.id in scored]
    judged = judge_scores(result, samples, gavel_scores(scores), judge, progress=True)
    usage = result.metrics["explanation"]["judge"].get("usage")
    if usage and usage.get("sent"):
        refused = f", {usage['refused']} without a valid score" if usage.get("refused") else ""
        repaired = f", {usage['repaired']} scored after a repair" if usage.get("repaired") else ""
        print(
            f"judge {judge.name}: {usage['answered'] - usage['errors']} answered "
            f"({usage['cached']} from the cache), {usage['errors']} failed{refused}{repaired}, "
            f"tokens {usage['prompt_tokens']:,} in / {usage['completion_tokens']:,} out",
            file=sys.stderr,
            flush=True,
        )
    if usage is not None and out is not None:
        return {"judge": judge.name, "results": str(out), **usage}, judged
    return None, judged


def judge_scores(result: Result, samples: Sequence[GavelSample],
                 scores: Sequence[GavelScore], judge: Any,
                 progress: bool = False) -> Sequence[GavelScore]:  # fmt: skip
    """Judge a GAVEL run (``gavel.judge.apply.judge_result``) and give back its scores with
    the judge's fields: a list is filled in place; scores kept on disk are read one at a time,
    filled and written to a new spool (its lines without a URL's password)."""
    from gavel.judge.apply import judge_result, record_judged
    from gavel.judge.items import attach_one, judge_items

    if not isinstance(scores, SpooledRecords):
        judge_result(result, samples, scores, judge, progress=progress)
        return scores
    judged = judge.judge(judge_items(samples, scores), progress=progress)
    by_id = {item.id: item for item in judged}
    encode = msgspec.json.Encoder().encode
    spool = LineSpool(len(scores))
    lines: list[bytes] = []
    written = 0
    for score in scores:
        attach_one(score, by_id.get(score.id))
        lines.append(encode(without_userinfo(score)) + b"\n")
        if len(lines) >= LINES_PER_WRITE or written + len(lines) == len(scores):
            spool.put(range(written, written + len(lines)), lines)
            written += len(lines)
            lines = []
    record_judged(result, judge, judged)
    return SpooledRecords(spool, GavelScore)


def gavel_scores(scores: Sequence[Score]) -> Sequence[GavelScore]:
    """The scores of a GAVEL run as GAVEL's: the same objects (or the same spool), which the
    judge fills in; any other benchmark's scores are refused (the judge reads verdicts and
    explanations)."""
    if isinstance(scores, SpooledRecords) and scores.kind is GavelScore:
        return scores
    kept = [score for score in scores if isinstance(score, GavelScore)]
    if len(kept) != len(scores):
        raise ConfigError("the judge scores GAVEL explanations; these are another benchmark's")
    return kept
