"""What a generation's batch settings ask for, checked before anything is loaded or sent:
one OpenAI Batch, a requests file for ``vllm run-batch``, or that file's output merged
(:class:`~gavel.execution.batch_api.BatchApiExecutor` runs it). Apart from the executor so
that the plan, which checks it, knows no executor."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gavel.errors import UsageError

if TYPE_CHECKING:
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
