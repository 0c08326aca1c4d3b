"""The paper's LLM judge, asked through the same runner as generation.

Every request goes through :func:`gavel.runner.async_runner.run_async`, so the judge gets the
runner's bounded concurrency, transport retries with backoff, ``Retry-After``, failure budget,
SQLite answer cache and crash-safe append-only output, with nothing re-implemented here.

Two things are the judge's own:

- **Reply validation.** :func:`validating_judge` wraps the chat model
  (:class:`gavel.runner.validating.ValidatingModel`): a reply without a valid
  ``{"score": 1-5}`` (:func:`gavel.judge.protocol.read_reply`, which refuses text copied from
  the prompt) is asked again, up to ``invalid_retries`` more times, each re-ask showing the
  judge its own reply and :data:`REPAIR_PROMPT` (the protocol's hash says so: a repaired
  score was asked differently); then the request fails, the
  runner writes an error line, and the sample becomes ``judge_error``. Only valid replies reach
  the cache. A weak judge never stops the scoring: refused replies do not spend the runner's
  failure budget, which only failures of the endpoint do.
- **Content-addressed resume.** A request's id is the sample id plus a digest of the judge's
  identity and the exact messages, so the replies file resumes exactly: rerunning after a crash
  sends only what is not there, and a changed prediction, ground truth, prompt or judge setting
  is a new request instead of a stale answer. After a run the file keeps only the current
  requests (rewritten atomically).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from gavel.errors import GavelError
from gavel.io.files import atomic_write_lines
from gavel.io.predictions import PredictionReader
from gavel.judge.items import JUDGE_ERROR, OK, Judged, JudgeItem, not_answered
from gavel.judge.protocol import PROMPT_VERSION, judge_messages, read_reply
from gavel.prompts.judge import HALLUCINATION_PROMPT, NO_HALLUCINATION_PROMPT, SYSTEM_PROMPT
from gavel.records import Prediction
from gavel.requests import Model, Request
from gavel.runner.async_runner import (
    AsyncRunSummary,
    Prices,
    RunAborted,
    RunInterrupted,
    run_async,
)
from gavel.runner.cache import model_identity
from gavel.runner.validating import ValidatingModel
from gavel.transport.retry import RetryPolicy

#: Re-asks after a reply without a valid score, before the sample is a judge_error.
DEFAULT_INVALID_RETRIES = 2
#: What a re-ask adds after the judge's refused reply (which it is shown again): the same
#: request at temperature 0 gets the same reply from a deterministic server.
REPAIR_PROMPT = (
    "Your reply has no valid score. Answer with only the JSON object "
    '{ "score": 1-5, "reason": "one short sentence" }'
)
TASK = "gavel-judge"
#: Longest ``detail`` kept for a sample that was never asked.
MAX_DETAIL = 600


def prompt_sha256(repair: bool = False) -> str:
    """SHA-256 of the protocol's three texts, and of the repair instruction when re-asks use
    it: which prompts made a score."""
    texts = [SYSTEM_PROMPT, HALLUCINATION_PROMPT, NO_HALLUCINATION_PROMPT]
    text = "\0".join([*texts, REPAIR_PROMPT] if repair else texts)
    return hashlib.sha256(text.encode()).hexdigest()


def validating_judge(model: Model, invalid_retries: int) -> ValidatingModel:
    """The judge model: a reply without a valid score is asked again with the reply and
    :data:`REPAIR_PROMPT` after the prompt, then fails (``invalid_retries`` 0: never re-asked,
    so no repair either)."""
    repair = invalid_retries > 0
    return ValidatingModel(
        model,
        lambda text, request: read_reply(text, request.prompt) is not None,
        invalid_retries=invalid_retries,
        extra_settings={
            "judge_prompt": PROMPT_VERSION,
            "judge_prompt_sha256": prompt_sha256(repair),
            "judge_repair": repair,
        },
        expected="valid score",
        with_request=True,
        repair=REPAIR_PROMPT if repair else None,
    )


def _request(item: JudgeItem, identity: str) -> Request:
    system, user = judge_messages(item.prediction or "", item.ground_truth, item.hallucinated)
    digest = hashlib.sha256(
        json.dumps([identity, system["content"], user["content"]]).encode()
    ).hexdigest()[:16]
    return Request(
        sample_id=f"{item.id}#{digest}", task=TASK, prompt=user["content"], system=system["content"]
    )


class LLMJudge:
    """Scores explanations with a chat model under the paper's protocol (appendix A.3)."""

    proxy = False

    def __init__(
        self,
        model: Model,
        *,
        concurrency: int = 16,
        invalid_retries: int = DEFAULT_INVALID_RETRIES,
        retries: RetryPolicy | int = RetryPolicy(),  # noqa: B008 - frozen, shared
        cache: str | Path | None = None,
        replies: str | Path | None = None,
        progress: bool = True,
        prices: Prices | None = None,
    ):
        self.model = validating_judge(model, invalid_retries)
        self.concurrency = concurrency
        self.retries = retries
        self.cache = cache
        self.replies = Path(replies) if replies is not None else None
        self.progress = progress
        self.prices = prices
        #: A spending limit (:class:`gavel.cost.budget.Budget`), or None.
        self.budget: Any = None
        self.summary: AsyncRunSummary | None = None
        #: Why the last :meth:`judge` call stopped before every sample was asked (the
        #: endpoint failed: unreachable, the model not served, the failure budget ran out, or
        #: Ctrl-C); None when it finished.
        self.stopped: str | None = None
        #: The exit status the stop asks for (130 after Ctrl-C, else 2).
        self.exit_code = 2
        #: ``gavel.batch.runner.BatchSettings`` to send the requests as a batch (None: online).
        self.batch: Any = None
        #: Scores of the last :meth:`judge` call that came from a re-ask with the repair
        #: instruction (this run's and those resumed from the replies file).
        self.repaired = 0

    @property
    def name(self) -> str:
        return self.model.name

    def settings(self) -> dict[str, Any]:
        """For the manifest: the judge model's settings (never a key) and the protocol."""
        return {
            "name": self.name,
            "kind": "llm",
            "proxy": False,
            "prompt_version": PROMPT_VERSION,
            "prompt_sha256": prompt_sha256(self.model.repair is not None),
            "repair": self.model.repair is not None,
            "model": self.model.inner.settings(),
            "invalid_retries": self.model.invalid_retries,
            "concurrency": self.concurrency,
            "cache": str(self.cache) if self.cache is not None else None,
            "replies": str(self.replies) if self.replies is not None else None,
        }

    def served(self) -> dict[str, Any]:
        """The model that answered, as the judge's server named it (replies, ``/models``)."""
        served = getattr(self.model.inner, "served", None)
        return served() if callable(served) else {}

    def judge(self, items: Sequence[JudgeItem], progress: bool | None = None) -> list[Judged]:
        """One :class:`Judged` per item, in order; unanswered samples are not sent.
        ``progress`` overrides the constructor's choice of a progress bar."""
        if progress is not None:
            self.progress = progress
        requests = self.requests_for(items)
        self.stopped, self.exit_code = None, 2
        with tempfile.TemporaryDirectory(prefix="gavel-judge-") as scratch:
            path = self.replies or Path(scratch) / "replies.jsonl"
            try:
                self.summary = self._run(list(requests.values()), path)
                self.stopped = getattr(self.summary, "stopped", None)  # a batch run's stop
            except (RunAborted, RunInterrupted) as stop:  # keep what was judged
                self.summary, self.stopped = stop.summary, str(stop)
                self.exit_code = getattr(stop, "exit_code", 2)
            except GavelError as stop:  # the model check refused it, a batch interrupted...
                self.stopped, self.exit_code = str(stop), getattr(stop, "exit_code", 2)
            except KeyboardInterrupt:  # Ctrl-C outside the runner's own handling
                self.stopped, self.exit_code = "interrupted (Ctrl-C)", 130
            if self.budget is not None and self.budget.reached and self.stopped is None:
                self.stopped = self.budget.message(path)  # --max-cost: the rest is not asked
            replies = _read_replies(path, {r.sample_id for r in requests.values()})
            _keep_only(path, replies)
        self.repaired = sum(
            1
            for reply in replies.values()
            if reply.error is None and (reply.meta or {}).get("repaired")
        )
        unasked = f"not judged: the judge run stopped ({self.stopped})" if self.stopped else None
        return [self._judged(item, requests.get(item.id), replies, unasked) for item in items]

    def requests_for(self, items: Sequence[JudgeItem]) -> dict[str, Request]:
        """The request of each answered item, by item id (what :meth:`judge` sends)."""
        identity = model_identity(self.model)
        return {item.id: _request(item, identity) for item in items if item.prediction is not None}

    def _run(self, requests: list[Request], path: Path) -> AsyncRunSummary:
        if self.batch is not None:
            return self._run_batch(requests, path)
        summary = AsyncRunSummary(model=self.name)
        total = len(requests)
        if self.budget is not None:  # --max-cost: no request once the ledger reaches it
            requests = self.budget.limit(requests, summary)
        try:
            return asyncio.run(
                run_async(
                    self.model,
                    requests,
                    path,
                    concurrency=self.concurrency,
                    total=total,
                    progress=self.progress,
                    cache=self.cache,
                    retries=self.retries,
                    prices=self.prices,
                    summary=summary,
                )
            )
        except KeyboardInterrupt:
            raise RunInterrupted(path, summary) from None

    def _run_batch(self, requests: list[Request], path: Path) -> AsyncRunSummary:
        """The same requests, validation and replies file, through the server's Batch API."""
        from gavel.batch.runner import BatchInterrupted, run_batch
        from gavel.errors import ConfigError, GavelError

        if self.replies is None:
            raise ConfigError("a judge in batch mode needs a replies file (it records the batch)")
        online = {"concurrency": self.concurrency, "retries": self.retries, "prices": self.prices}
        try:
            return run_batch(self.model, requests, path, kind="judge", cache=self.cache,
                             settings=self.batch, progress=self.progress, online=online,
                             prices=self.prices, budget=self.budget)  # fmt: skip
        except (BatchInterrupted, ConfigError):
            raise
        except GavelError as error:  # the server failed: keep what was judged, as online
            raise RunAborted(str(error), AsyncRunSummary(model=self.name)) from None

    @staticmethod
    def _judged(
        item: JudgeItem,
        request: Request | None,
        replies: dict[str, Prediction],
        unasked: str | None = None,
    ) -> Judged:
        if request is None:
            return not_answered(item)
        reply = replies.get(request.sample_id)
        if reply is None:  # only after a stopped run; never silently a score
            detail = (unasked or "no reply")[:MAX_DETAIL]
            return Judged(id=item.id, column=item.column, status=JUDGE_ERROR, detail=detail)
        if reply.error is not None:
            return Judged(id=item.id, column=item.column, status=JUDGE_ERROR, detail=reply.error)
        verdict = read_reply(reply.response, request.prompt)
        if verdict is None:
            return Judged(
                id=item.id,
                column=item.column,
                status=JUDGE_ERROR,
                detail=f"no valid score in the reply {str(reply.response)[:300]!r}",
            )
        return Judged(
            id=item.id, column=item.column, status=OK, score=verdict.score, reason=verdict.reason
        )

    def usage(self) -> dict[str, Any]:
        """Requests, tokens and cost of the last :meth:`judge` call, for the manifest/ledger."""
        s = self.summary
        if s is None:
            return {}
        return {
            "requests": s.requested,
            "already_there": s.skipped,
            "answered": s.answered,
            "cached": s.cached,
            "sent": s.answered - s.cached,
            "errors": s.errors,
            "refused": s.refused,
            "retries": s.retries,
            "repaired": self.repaired,
            "prompt_tokens": s.prompt_tokens,
            "completion_tokens": s.completion_tokens,
            "cost": s.cost,
            "seconds": round(s.seconds, 3),
        }


def _read_replies(path: Path, wanted: set[str]) -> dict[str, Prediction]:
    """The replies of the current requests (the runner has just read and checked the file)."""
    if not path.exists():
        return {}
    return {reply.id: reply for reply in PredictionReader(path) if reply.id in wanted}


def _keep_only(path: Path, replies: dict[str, Prediction]) -> None:
    """Rewrite the replies file with the current requests only (stale ones dropped)."""
    if path.exists():
        encoder = msgspec.json.Encoder()
        atomic_write_lines(path, (encoder.encode(r) for r in replies.values()))
