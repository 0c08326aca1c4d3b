"""The Batch API flags of ``gavel generate``, ``gavel run`` and ``gavel score``.

Declared here, applied with one line per command (``@batch_options("generate")``,
``@batch_options("judge")``), and read back by :func:`take_generate_flags` and
:func:`take_judge_flags`, so the commands' own code only hands them on. Nothing heavy is
imported until a batch is actually run (``gavel --help`` stays fast).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from gavel.cli.options import FiniteFloat

#: Parameter names of the judge's flags (what ``gavel run`` hands to ``gavel score``).
JUDGE_BATCH_PARAMS = ("batch_judge", "batch_judge_fallback", "batch_judge_rounds",
                      "batch_judge_poll")  # fmt: skip
#: Where offline requests (vLLM ``run-batch``) are said to be answered when no --base-url is
#: given: a ``vllm serve`` of the same model on this machine, whose answers they are.
OFFLINE_BASE_URL = "http://localhost:8000/v1"
FALLBACK_HELP = (
    "What a batch did not answer (failed, invalid, expired): batch = ask it in a next batch "
    "round (up to the rounds), online = ask it online after the first round [default: batch]."
)


def batch_options(which: str):
    """The flags of ``which`` (``generate``: --batch and friends, also on ``gavel run``;
    ``judge``: --judge-batch and friends, on ``gavel score``)."""
    prefix, name = ("judge-batch", "batch_judge") if which == "judge" else ("batch", "batch")
    options = [
        click.option(
            f"--{prefix}",
            name,
            is_flag=True,
            help=(
                "Send the judge's requests as one OpenAI Batch (half price, up to 24 h); needs "
                "--out. Rerunning resumes it (docs/running.md#batch-apis)."
                if which == "judge"
                else "openai: send the requests as one OpenAI Batch (half price, up to 24 h), "
                "wait and merge; rerunning resumes it, never sends twice "
                "(docs/running.md#batch-apis)."
            ),
        ),
        click.option(f"--{prefix}-fallback", f"{name}_fallback",
                     type=click.Choice(["batch", "online"]), default=None, help=FALLBACK_HELP),
        click.option(f"--{prefix}-rounds", f"{name}_rounds", type=click.IntRange(min=1),
                     default=None, help="Batch rounds at most [default: 3]."),
        click.option(f"--{prefix}-poll", f"{name}_poll", type=FiniteFloat(min=0, min_open=True),
                     default=None, metavar="SECONDS",
                     help="Seconds between two questions about a batch's status [default: 30]."),
    ]  # fmt: skip
    if which == "generate":
        options += [
            click.option(
                "--batch-requests-only",
                type=click.Path(path_type=Path, dir_okay=False),
                default=None,
                metavar="FILE",
                help="Only write the requests not yet answered as Batch JSONL to FILE (for "
                "`vllm run-batch`), send nothing; merge its output with --from-batch-output.",
            ),
            click.option(
                "--from-batch-output",
                type=click.Path(path_type=Path, dir_okay=False),
                default=None,
                metavar="FILE",
                help="Merge the output of `vllm run-batch` (from --batch-requests-only's file, "
                "same flags) into --out, as online answers; send nothing.",
            ),
        ]

    def apply(command):
        for option in reversed(options):
            command = option(command)
        return command

    return apply


def _settings(flags: dict[str, Any], name: str, flag: str):
    """BatchSettings from the flags; the tuning flags without the flag itself are refused."""
    given = {k: flags.get(f"{name}_{k}") for k in ("fallback", "rounds", "poll")}
    if not flags.get(name):
        named = [f"--{flag}-{k}" for k, v in given.items() if v is not None]
        if named:
            raise click.UsageError(f"{', '.join(named)}: only with --{flag}")
        return None
    from gavel.batch.runner import BatchSettings

    return BatchSettings(**{k: v for k, v in given.items() if v is not None})


@dataclass
class GenerateBatch:
    """What ``gavel generate``'s batch flags ask for."""

    settings: Any = None
    requests_only: Path | None = None
    from_output: Path | None = None

    @property
    def active(self) -> bool:
        return bool(self.settings or self.requests_only or self.from_output)

    def run(self, model, prepared, out: Path, cache_path: Path | None, no_cache: bool,
            progress: bool, concurrency: int | None, budget=None, prices=None):  # fmt: skip
        """The summary of the batch run (or the merge); after writing a requests file only,
        the command ends here. ``budget``: ``--max-cost`` (at the batch price)."""
        from gavel.batch import runner

        cache = _cache(cache_path, no_cache)
        if self.requests_only is not None:
            count = runner.write_requests_only(model, prepared.requests, out, self.requests_only,
                                               cache)  # fmt: skip
            if not count:
                click.echo(f"nothing to write: every sample is answered in {out} (or by the "
                           "answer cache)", err=True)  # fmt: skip
                click.get_current_context().exit(0)
            click.echo(
                f"wrote {count} requests to {self.requests_only} (nothing sent). Run them "
                f"with: vllm run-batch -i {self.requests_only} -o OUTPUT.jsonl --model "
                f"{model.name}, then the same command with --from-batch-output OUTPUT.jsonl "
                "instead of --batch-requests-only",
                err=True,
            )
            click.get_current_context().exit(0)
        if self.from_output is not None:
            return runner.merge_output(model, prepared.requests, out, self.from_output, cache)
        return runner.run_batch(model, prepared.requests, out, cache=cache,
                                settings=self.settings, progress=progress,
                                online={"concurrency": concurrency or 16}, budget=budget,
                                prices=prices)  # fmt: skip


def _cache(cache_path: Path | None, no_cache: bool) -> Path | None:
    from gavel.runner.cache import default_cache

    cache = None if no_cache else (cache_path or default_cache())
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
    return cache


def take_generate_flags(flags: dict[str, Any], spec: str, executor: str,
                        options: dict[str, Any]) -> GenerateBatch:  # fmt: skip
    """Check the flags (before anything is loaded or sent); offline modes without a
    --base-url record the usual local vLLM server as the answers' endpoint (``options``)."""
    settings = _settings(flags, "batch", "batch")
    requests_only, from_output = flags.get("batch_requests_only"), flags.get("from_batch_output")
    chosen = [f for f, v in (("--batch", settings), ("--batch-requests-only", requests_only),
                             ("--from-batch-output", from_output)) if v]  # fmt: skip
    if len(chosen) > 1:
        raise click.UsageError(f"{' and '.join(chosen)}: give one of them")
    if chosen and not spec.startswith("openai:"):
        raise click.UsageError(f"{chosen[0]} applies to openai: models only")
    if chosen and executor != "local":
        raise click.UsageError(f"{chosen[0]}: not with --executor {executor}")
    if chosen and len(options.get("base_urls") or ()) > 1:
        raise click.UsageError(f"{chosen[0]} sends to one server: give one --base-url")
    if (requests_only or from_output) and not (options.get("base_urls") or _env_url()):
        options["base_urls"] = (OFFLINE_BASE_URL,)
    return GenerateBatch(settings, requests_only, from_output)


def _env_url() -> str | None:
    import os

    return os.environ.get("OPENAI_BASE_URL")


def take_judge_flags(flags: dict[str, Any], judge_spec: str | None, out: Path | None):
    """Remove the judge's batch flags from ``flags`` and check them; returns the settings to
    give the judge (:func:`use_batch`), or None."""
    taken = {name: flags.pop(name, None) for name in JUDGE_BATCH_PARAMS}
    settings = _settings(taken, "batch_judge", "judge-batch")
    if settings is None:
        return None
    if judge_spec is None or not judge_spec.startswith("openai:"):
        raise click.UsageError("--judge-batch needs an LLM judge: --judge openai:MODEL")
    if out is None:
        raise click.UsageError("--judge-batch needs --out: the batch is recorded beside it")
    if len(flags.get("judge_base_urls") or ()) > 1:
        raise click.UsageError("--judge-batch sends to one server: give one --judge-base-url")
    return settings


def use_batch(judge, settings) -> None:
    """Make ``judge`` (an LLM judge) send its requests as a batch."""
    if settings is not None:
        judge.batch = settings
