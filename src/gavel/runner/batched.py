"""The batched runner for in-process models: several requests per forward pass, longest first.

A local transformers model (:class:`gavel.requests.BatchModel`) answers a batch of requests
in about the time of one on a GPU, but only if the batch is worth padding: requests of very
different lengths waste most of it on pad tokens. So the runner reads the requests in windows
of ``window_batches`` batches, orders each window by the model's
:meth:`~gavel.requests.BatchModel.request_length`, longest first (so a batch too large for
the memory fails at the start of a run, not hours into it), and cuts it into batches. Only the
window's requests (paths and text) are held, never their pixels, so memory stays flat however
long the request iterator is, and answers keep streaming: each batch's lines are written as
soon as it finishes.

The output file has the contract of the other runners (:mod:`gavel.runner.async_runner`,
whose ``take_errors`` and failure budget are reused, and :mod:`gavel.runner.local`): one JSON
line per request, flushed when its batch finishes and fsynced every ``fsync_interval`` seconds,
so ``kill -9`` loses only the batch being generated and at most one torn line, which the next
run removes; a rerun skips every answered id, asks the failed ones again (their old lines put
back for those a stopped run did not ask, :mod:`gavel.runner.earlier_errors`), and never
writes an id twice. Lines come in the order batches finish, not input order; scoring reads by id.

A batch that raises is answered again one request at a time, so one unreadable image costs one
error line, not a batch of them. When every request of a failed batch succeeds alone, the batch
itself was the trouble (out of memory, a model that cannot batch), and the batch size is halved
for the rest of the run, down to one at a time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import msgspec

from gavel.errors import ConfigError
from gavel.io.files import AppendFile, close_synced
from gavel.io.output_lock import writes_output
from gavel.manifest import redact_userinfo
from gavel.records import Prediction
from gavel.requests import Answer, BatchModel, Request
from gavel.runner.async_runner import (
    MAX_ERROR_CHARS,
    AsyncRunSummary,
    FailureBudget,
    _Bar,
    budget_spent,
    take_errors,
)
from gavel.runner.earlier_errors import put_back
from gavel.runner.local import completed_ids
from gavel.transport.failures import classify

log = logging.getLogger(__name__)

#: Batches per sorted window: larger windows pad less, smaller ones hold fewer requests.
WINDOW_BATCHES = 8


@dataclass
class BatchedRunSummary(AsyncRunSummary):
    """What a run did; ``batch_size`` is the size the run ended with (lower than asked for
    when batches failed and their requests succeeded alone)."""

    batches: int = 0
    batch_size: int = 1
    #: Batches that failed and were answered one request at a time.
    batches_split: int = 0

    def describe(self) -> str:
        parts = [super().describe(), f"{self.batches} batches of up to {self.batch_size}"]
        if self.batches_split:
            parts.append(f"{self.batches_split} failed batches answered one at a time")
        return ", ".join(parts)


@writes_output("out")
def run_batched(
    model: BatchModel,
    requests: Iterable[Request],
    out: str | Path,
    *,
    batch_size: int | None = None,
    window_batches: int = WINDOW_BATCHES,
    total: int | None = None,
    progress: bool = True,
    failure_budget: FailureBudget | None = FailureBudget(),  # noqa: B008 - frozen, shared
    retry_errors: bool = True,
    fsync_interval: float = 1.0,
) -> BatchedRunSummary:
    """Answer every request not already answered in ``out``, ``batch_size`` at a time
    (default: the model's own ``batch_size``); returns what was done.

    Raises :class:`~gavel.runner.async_runner.RunAborted` when the failure budget runs out,
    with everything written so far kept.
    """
    size = batch_size if batch_size is not None else getattr(model, "batch_size", 1)
    if size < 1:
        raise ConfigError("batch_size must be at least 1")
    if window_batches < 1:
        raise ConfigError("window_batches must be at least 1")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    summary = BatchedRunSummary(model=model.name, batch_size=size)
    taken = take_errors(out) if retry_errors else {}  # put back for samples not asked again
    summary.errors_retried = len(taken)
    seen = completed_ids(out)
    remaining = None if total is None else max(total - len(seen), 0)
    asker = _Asker(model, size, summary, failure_budget)
    bar = _Bar(model.name, remaining, progress)
    encoder = msgspec.json.Encoder()
    started = time.perf_counter()
    last_sync = time.monotonic()
    handle = AppendFile(out)
    try:
        with bar:
            for window in _windows(requests, seen, summary, lambda: asker.size * window_batches):
                for batch in asker.batches(window):
                    for prediction in asker.answer(batch):
                        handle.write(encoder.encode(prediction) + b"\n")
                        asker.count(prediction)
                        bar.advance(summary)
                    handle.flush()
                    if time.monotonic() - last_sync >= fsync_interval:
                        handle.sync()
                        last_sync = time.monotonic()
                    if asker.stop_reason:
                        summary.aborted = asker.stop_reason
                        break
                if summary.aborted:
                    break
    finally:  # on an error in flight, that error is the one to report, not this one
        unsynced = close_synced(handle)
        if unsynced is None:
            try:
                put_back(out, taken)
            except OSError as error:
                unsynced = error
        summary.seconds = time.perf_counter() - started
    if unsynced is not None:
        raise unsynced
    if summary.aborted:
        raise budget_spent(summary, out)
    return summary


def answer_requests(model: BatchModel, requests: list[Request]) -> list[Prediction]:
    """One prediction per request, in the order given, asked as :func:`run_batched` asks a
    window (longest first, failed batches split), for runners that write elsewhere (a Ray
    replica answers its share this way)."""
    summary = BatchedRunSummary(model=model.name)
    asker = _Asker(model, getattr(model, "batch_size", 1), summary, None)
    answered = {}
    for batch in asker.batches(requests):
        for request, prediction in zip(batch, asker.answer(batch), strict=True):
            answered[id(request)] = prediction
    return [answered[id(request)] for request in requests]


def _windows(requests: Iterable[Request], seen: set[str], summary: BatchedRunSummary,
             window_size) -> Iterator[list[Request]]:  # fmt: skip
    """Lists of up to ``window_size()`` requests not answered yet (nor repeated in the input)."""
    window: list[Request] = []
    for request in requests:
        summary.requested += 1
        if request.sample_id in seen:
            summary.skipped += 1
            continue
        seen.add(request.sample_id)
        window.append(request)
        if len(window) >= window_size():
            yield window
            window = []
    if window:
        yield window


class _Asker:
    """Cutting windows into batches, asking them (splitting failed ones), keeping the counts."""

    def __init__(self, model: BatchModel, size: int, summary: BatchedRunSummary,
                 budget: FailureBudget | None):  # fmt: skip
        self.model = model
        self.size = size
        self.summary = summary
        self.budget = budget
        self.box_format = model.capabilities.box_format
        self.measure = getattr(model, "request_length", None)
        self.consecutive = 0
        self.stop_reason: str | None = None

    def batches(self, window: list[Request]) -> Iterator[list[Request]]:
        """The window longest first, in batches of the current size (which may shrink)."""
        if self.size > 1 and self.measure is not None:
            lengths = {id(request): self.measure(request) for request in window}
            window = sorted(window, key=lambda request: -lengths[id(request)])  # stable
        start = 0
        while start < len(window):
            batch = window[start : start + self.size]
            start += len(batch)
            yield batch

    def answer(self, batch: list[Request]) -> list[Prediction]:
        self.summary.batches += 1
        started = time.perf_counter()
        try:
            answers = self._call(batch)
        except Exception as error:
            if len(batch) == 1:
                return [self._failure(batch[0], error, started)]
            return self._split(batch, error)
        latency = time.perf_counter() - started
        return [self._prediction(r, a, latency) for r, a in zip(batch, answers, strict=True)]

    def _call(self, batch: list[Request]) -> list[Answer]:
        asking = getattr(self.model, "answer_batch", None)
        if asking is None:  # a model without batches: one at a time
            return [self.model.answer(request) for request in batch]
        answers = list(asking(batch))
        if len(answers) != len(batch):
            raise RuntimeError(f"{len(answers)} answers to a batch of {len(batch)} requests")
        return answers

    def _split(self, batch: list[Request], error: Exception) -> list[Prediction]:
        """A failed batch, one request at a time; halve the size if each one succeeds alone."""
        self.summary.batches_split += 1
        log.warning("a batch of %d failed (%s); answering its requests one at a time",
                    len(batch), _describe(error))  # fmt: skip
        predictions = [self.answer([request])[0] for request in batch]
        if all(prediction.error is None for prediction in predictions) and self.size > 1:
            self.size = max(1, self.size // 2)
            self.summary.batch_size = self.size
            log.warning("every request of the failed batch succeeded alone: batches of %d from "
                        "now on", self.size)  # fmt: skip
        return predictions

    def _prediction(self, request: Request, answer: Answer, latency: float) -> Prediction:
        self.summary.prompt_tokens += answer.usage.get("prompt_tokens", 0)
        self.summary.completion_tokens += answer.usage.get("completion_tokens", 0)
        return Prediction(
            id=request.sample_id,
            response=answer.text,
            box_format=self.box_format,
            model=self.model.name,
            sent_size=list(answer.sent_size) if answer.sent_size else None,
            input_size=list(answer.input_size) if answer.input_size else None,
            latency_s=round(latency, 4),
            prompt_tokens=answer.usage.get("prompt_tokens"),
            completion_tokens=answer.usage.get("completion_tokens"),
            finish_reason=answer.finish_reason,
        )

    def _failure(self, request: Request, error: Exception, started: float) -> Prediction:
        return Prediction(
            id=request.sample_id,
            model=self.model.name,
            error=_describe(error),
            latency_s=round(time.perf_counter() - started, 4),
            error_kind=classify(error).kind,
        )

    def count(self, prediction: Prediction) -> None:
        """Count a prediction once its line is written; check the failure budget."""
        summary = self.summary
        summary.answered += 1
        if prediction.error is None:
            self.consecutive = 0
            return
        summary.errors += 1
        self.consecutive += 1
        if self.budget is not None and self.stop_reason is None:
            self.stop_reason = self.budget.exceeded(
                self.consecutive, summary.errors, summary.answered
            )


def _describe(error: BaseException) -> str:
    text = f"{type(error).__name__}: {str(error) or 'no message'}"
    return redact_userinfo(text)[:MAX_ERROR_CHARS]
