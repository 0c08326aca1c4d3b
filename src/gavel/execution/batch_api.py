"""The batch API: the requests sent as one OpenAI Batch (half price, up to 24 h), or written as
a requests file for ``vllm run-batch``, or that file's output merged (docs/running.md#batch-apis).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gavel.errors import UsageError
from gavel.execution.notes import note

if TYPE_CHECKING:
    from gavel.execution.plan import RunPlan
    from gavel.execution.settings import GenerateSettings

#: Where offline requests (vLLM ``run-batch``) are said to be answered when no base URL is
#: given: a ``vllm serve`` of the same model on this machine, whose answers they are.
OFFLINE_BASE_URL = "http://localhost:8000/v1"


def batch_settings(on: bool, flag: str, fallback: str | None, rounds: int | None,
                   poll: float | None) -> Any:  # fmt: skip
    """The batch runner's settings (None when ``on`` is not set); a tuning setting given
    without ``--FLAG`` itself is refused, naming both."""
    given: dict[str, Any] = {"fallback": fallback, "rounds": rounds, "poll": poll}
    if not on:
        named = [f"--{flag}-{k}" for k, v in given.items() if v is not None]
        if named:
            raise UsageError(f"{', '.join(named)}: only with --{flag}")
        return None
    from gavel.batch.runner import BatchSettings

    return BatchSettings(**{k: v for k, v in given.items() if v is not None})


@dataclass
class BatchRequest:
    """What a generation's batch settings ask for."""

    settings: Any = None
    requests_only: Path | None = None
    from_output: Path | None = None

    @property
    def active(self) -> bool:
        return bool(self.settings or self.requests_only or self.from_output)


def batch_request(s: GenerateSettings, options: dict[str, Any]) -> BatchRequest:
    """Check the batch settings (before anything is loaded or sent); offline modes without a
    base URL record the usual local vLLM server as the answers' endpoint (``options``)."""
    settings = batch_settings(s.batch, "batch", s.batch_fallback, s.batch_rounds, s.batch_poll)
    requests_only, from_output = s.batch_requests_only, s.from_batch_output
    chosen = [f for f, v in (("--batch", settings), ("--batch-requests-only", requests_only),
                             ("--from-batch-output", from_output)) if v]  # fmt: skip
    if len(chosen) > 1:
        raise UsageError(f"{' and '.join(chosen)}: give one of them")
    if chosen and not str(s.model).startswith("openai:"):
        raise UsageError(f"{chosen[0]} applies to openai: models only")
    if chosen and s.executor != "local":
        raise UsageError(f"{chosen[0]}: not with --executor {s.executor}")
    if chosen and len(options.get("base_urls") or ()) > 1:
        raise UsageError(f"{chosen[0]} sends to one server: give one --base-url")
    if (requests_only or from_output) and not (
        options.get("base_urls") or os.environ.get("OPENAI_BASE_URL")
    ):
        options["base_urls"] = (OFFLINE_BASE_URL,)
    return BatchRequest(settings, requests_only, from_output)


class BatchApiExecutor:
    """:mod:`gavel.batch.runner`: one batch, waited for and merged (rerunning resumes it and
    never sends twice); or the requests file only, or its output merged."""

    def run(self, plan: RunPlan) -> Any:
        """The summary of the batch run (or the merge); None after writing a requests file
        only (nothing is recorded then). ``plan.budget``: at the batch price."""
        from gavel.batch import runner
        from gavel.execution.cache import ready
        from gavel.runner.cache import default_cache
        from gavel.runner.defaults import REMOTE_CONCURRENCY

        s, batch, model, requests, out = (plan.settings, plan.batch, plan.model,
                                          plan.prepared.requests, plan.out)  # fmt: skip
        cache = ready(None if s.no_cache else (s.cache or default_cache()))
        if batch.requests_only is not None:
            count = runner.write_requests_only(model, requests, out, batch.requests_only, cache)
            if not count:
                note(f"nothing to write: every sample is answered in {out} (or by the "
                     "answer cache)")  # fmt: skip
                return None
            note(
                f"wrote {count} requests to {batch.requests_only} (nothing sent). Run them "
                f"with: vllm run-batch -i {batch.requests_only} -o OUTPUT.jsonl --model "
                f"{model.name}, then the same command with --from-batch-output OUTPUT.jsonl "
                "instead of --batch-requests-only"
            )
            return None
        if batch.from_output is not None:
            return runner.merge_output(model, requests, out, batch.from_output, cache)
        return runner.run_batch(model, requests, out, cache=cache, settings=batch.settings,
                                progress=not s.no_progress,
                                online={"concurrency": s.concurrency or REMOTE_CONCURRENCY}, budget=plan.budget,
                                prices=plan.prices)  # fmt: skip
