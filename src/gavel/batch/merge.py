"""Batch output and error files into predictions lines, as online answers would be written.

An output line is ``{"custom_id", "response": {"status_code", "body"}, "error"}`` (OpenAI and
vLLM's ``run-batch`` alike; the error file has the same shape, with ``error`` set). A body with
status 200 is read by the adapter's own :meth:`OpenAIChatModel.answer_of`, the function that
reads an online reply, and a judge's reply must pass the judge's own check
(:class:`gavel.runner.validating.ValidatingModel`'s ``accept``). The accepted answers are then
written by the online runner itself (:func:`gavel.runner.async_runner.run_async`) through a
model that hands out those answers: the same lines (``finish_reason``, usage, sent size), the
same answer cache entries (the model's identity is the online model's), the same resume (an
id already in the file is skipped, so a merge killed half-way and run again writes each line
once).

Requests the batch failed, refused as invalid or never reached are given back to the caller
to ask again; on the last round they are written as error lines, with the server's words, as a
failed online request is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gavel.errors import GavelError
from gavel.models.base import Answer, Request
from gavel.runner.async_runner import AsyncRunSummary, run_async
from gavel.runner.retry import InvalidResponseError
from gavel.runner.validating import InvalidAnswerError, ValidatingModel


class BatchRequestError(GavelError):
    """The batch answered this request with an error (``status_code`` when it gave one)."""

    def __init__(self, message: str, status_code: int | None = None, body: Any = None):
        super().__init__(message)
        self.status_code = status_code
        self.body = body


@dataclass(frozen=True)
class Outcome:
    """One line of an output or error file."""

    body: Any = None
    status: int | None = None
    error: Any = None


def read_outcomes(*paths: Path) -> dict[str, Outcome]:
    """Every ``custom_id``'s line in the files (later files win: an error file after the
    output); a line that is not a batch result is an error naming file and line."""
    outcomes: dict[str, Outcome] = {}
    for path in paths:
        if not path.exists():
            continue
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, 1):
                if not raw.strip():
                    continue
                try:
                    line = json.loads(raw)
                    custom_id = line["custom_id"]
                    response = line.get("response") or {}
                    if not isinstance(custom_id, str) or not isinstance(response, dict):
                        raise TypeError("custom_id must be text and response an object")
                except (ValueError, KeyError, TypeError, AttributeError) as error:
                    raise GavelError(
                        f"{path}:{number}: not a batch output line ({error})"
                    ) from None
                status = response.get("status_code")
                outcome = Outcome(response.get("body"), status, line.get("error"))
                if custom_id in outcomes and outcome.error and outcomes[custom_id].error is None:
                    continue  # an answer and a later error for the same id: keep the answer
                outcomes[custom_id] = outcome
    return outcomes


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        code, message = error.get("code"), error.get("message")
        return ": ".join(str(part) for part in (code, message) if part) or json.dumps(error)
    return str(error)


def read_answer(model: Any, outcome: Outcome, sent: tuple[int, int] | None, request: Request):
    """The answer of one outcome, read and checked as an online reply is; raises what an
    online request would (an HTTP status, an invalid response, an invalid answer)."""
    if outcome.status not in (None, 200):  # OpenAI: an error body; vLLM: ``error`` text
        from gavel.runner.failures import server_words

        error = BatchRequestError("", outcome.status, outcome.body)
        words = server_words(error) if outcome.body is not None else None
        words = words or _error_text(outcome.error or outcome.body)
        raise BatchRequestError(f"HTTP {outcome.status}: {words}", outcome.status, outcome.body)
    if outcome.error is not None or outcome.status is None:
        said = _error_text(outcome.error) if outcome.error is not None else "no response"
        raise BatchRequestError(f"the batch failed this request: {said}")
    inner = model.inner if isinstance(model, ValidatingModel) else model
    answer = inner.answer_of(outcome.body, sent)
    if isinstance(model, ValidatingModel):
        valid = model.accept(answer.text, request) if model.with_request else model.accept(
            answer.text
        )  # fmt: skip
        if not valid:
            raise InvalidAnswerError(
                f"no {model.expected} in the batch reply: {answer.text[:300]!r}", answer.usage
            )
    return answer


class BatchAnswers:
    """The run's model as the runner sees it during a merge: same name, settings and
    endpoint (so the same cache keys), answering from the batch instead of the network."""

    #: Refusals in a batch's results are those samples' outcomes, never a reason to stop the
    #: merge (the runner's rule for the first requests of a run is off).
    refusals_to_stop = None

    def __init__(
        self, model: Any, answers: Mapping[str, Answer], failures: Mapping[str, Exception]
    ):
        self.model = model
        self.name = model.name
        self.capabilities = model.capabilities
        self.redact = getattr(model, "redact", None)
        self.answers = answers
        self.failures = failures

    @property
    def endpoint(self) -> str | None:
        return getattr(self.model, "endpoint", None)

    def settings(self) -> dict[str, Any]:
        return self.model.settings()

    async def answer_async(self, request: Request) -> Answer:
        answer = self.answers.get(request.sample_id)
        if answer is not None:
            return answer
        raise self.failures[request.sample_id]

    def answer(self, request: Request) -> Answer:  # the protocol's blocking form
        import asyncio

        return asyncio.run(self.answer_async(request))


@dataclass
class Merged:
    """What one merge did: ``summary`` of the lines written, and the requests to ask again
    (sample id -> why)."""

    summary: AsyncRunSummary
    again: dict[str, Exception] = field(default_factory=dict)
    #: Ids in the files that no current request has (its inputs changed since it was sent).
    stale: int = 0
    #: Tokens of replies refused as invalid (paid for all the same).
    refused_usage: dict[str, int] = field(default_factory=dict)


def merge(
    model: Any,
    keyed: Mapping[str, Request],
    outcomes: Mapping[str, Outcome],
    sizes: Mapping[str, tuple[int, int]],
    out: Path,
    *,
    cache: Any,
    missing: str | None,
    final: bool,
) -> Merged:
    """Write the accepted answers of ``outcomes`` for the requests ``keyed`` (custom_id ->
    request) into ``out`` and the cache. A request without an outcome fails with ``missing``
    (None: it is left alone, as a request the file was never asked). With ``final`` the
    failures are written as error lines too; otherwise they are returned to ask again."""
    import asyncio

    answers: dict[str, Answer] = {}
    again: dict[str, Exception] = {}
    refused: dict[str, int] = {}
    for custom_id, request in keyed.items():
        outcome = outcomes.get(custom_id)
        if outcome is None:
            if missing is not None:
                again[request.sample_id] = BatchRequestError(missing)
            continue
        try:
            answers[request.sample_id] = read_answer(model, outcome, sizes.get(custom_id), request)
        except (BatchRequestError, InvalidResponseError, InvalidAnswerError) as error:
            again[request.sample_id] = error
            for name, value in getattr(error, "usage", {}).items():
                refused[name] = refused.get(name, 0) + value
    by_id = {request.sample_id: request for request in keyed.values()}
    chosen = [by_id[i] for i in answers] + ([by_id[i] for i in again] if final else [])
    summary = AsyncRunSummary(model=model.name)
    asyncio.run(
        run_async(
            BatchAnswers(model, answers, again),
            chosen,
            out,
            concurrency=8,
            progress=False,
            cache=cache,
            failure_budget=None,
            retries=0,
            retry_errors=False,
            summary=summary,
        )
    )
    stale = len(set(outcomes) - set(keyed))
    # On the last round the runner counted the refused replies' tokens with their error lines.
    return Merged(summary, {} if final else again, stale, {} if final else refused)
