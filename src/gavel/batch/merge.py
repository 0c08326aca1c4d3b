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
failed online request is. A refused reply comes back as :class:`RefusedReply`, with its text,
for the caller's repair re-ask; an accepted reply to a repair (a request whose follow-up ends
with repair turns, :func:`gavel.runner.validating.repair_turns`) is marked as online
(``meta.repaired``).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from gavel.errors import GavelError
from gavel.io.reading import bounded_lines
from gavel.requests import Answer, Request
from gavel.runner.async_runner import AsyncRunSummary, run_async
from gavel.runner.validating import ValidatingModel
from gavel.transport.failures import InvalidAnswerError
from gavel.transport.retry import InvalidResponseError


class RefusedReply(InvalidAnswerError):
    """A batch's reply that the model's check refused; ``text`` is the reply, which a repair
    re-ask shows the model again."""

    def __init__(self, message: str, usage: dict[str, int] | None = None, text: str = ""):
        super().__init__(message, usage)
        self.text = text


class BatchRequestError(GavelError):
    """The batch answered this request with an error (``status_code`` when it gave one)."""

    def __init__(self, message: str, status_code: int | None = None, body: Any = None):
        super().__init__(message)
        self.status_code = status_code
        self.body = body


@dataclass(frozen=True)
class Outcome:
    """One line of an output or error file (``bad``: why the line could not be read)."""

    body: Any = None
    status: int | None = None
    error: Any = None
    bad: str | None = None

    @property
    def answered(self) -> bool:
        return self.bad is None and self.error is None and self.status == 200


#: A ``custom_id`` in a line that is not JSON (a line cut short): whose sample it was.
_CUSTOM_ID = re.compile(rb'"custom_id"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _read_line(raw: bytes) -> tuple[str | None, Outcome | None, str | None]:
    """``(custom_id, outcome, None)`` for a batch result line, else ``(custom_id or None,
    None, why)``."""
    try:
        line = json.loads(raw)
        custom_id = line["custom_id"]
        response = line.get("response") or {}
        if not isinstance(custom_id, str) or not isinstance(response, dict):
            raise TypeError("custom_id must be text and response an object")
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        found = _CUSTOM_ID.search(raw)
        try:
            custom_id = json.loads(b'"' + found.group(1) + b'"') if found else None
        except ValueError:
            custom_id = None
        return custom_id, None, f"{type(error).__name__}: {error}"
    return custom_id, Outcome(response.get("body"), response.get("status_code"),
                              line.get("error")), None  # fmt: skip


def read_outcomes(*paths: Path, warn: Callable[[str], None] | None = None) -> dict[str, Outcome]:
    """Every ``custom_id``'s line in the files (an output file, then its error file).

    One bad line costs one sample: a line that is not a batch result (junk, a last line cut
    short) becomes that sample's failure, naming the file and line, when its ``custom_id``
    can still be read, and is otherwise passed over (its sample has no result, and is asked
    again); every good line is taken. An id seen twice keeps its first answer (a later error
    never replaces an answer); ids given different answers are counted in one warning.
    """
    warn = warn or (lambda text: click.echo(f"warning: {text}", err=True))
    outcomes: dict[str, Outcome] = {}
    for path in paths:
        if not path.exists():
            continue
        bad: list[int] = []
        differ = 0
        with path.open("rb") as handle:
            for number, raw in enumerate(bounded_lines(handle, path), 1):
                if not raw.strip():
                    continue
                custom_id, outcome, why = _read_line(raw)
                if outcome is None:
                    bad.append(number)
                    outcome = Outcome(bad=f"{path}:{number}: not a batch output line ({why})")
                if custom_id is None:
                    continue
                earlier = outcomes.get(custom_id)
                if earlier is None or (not earlier.answered and outcome.answered):
                    outcomes[custom_id] = outcome
                elif earlier.answered and outcome.answered and earlier.body != outcome.body:
                    differ += 1
        if bad:
            shown = ", ".join(map(str, bad[:10])) + (", ..." if len(bad) > 10 else "")
            warn(f"{path}: {len(bad)} line(s) are not batch results (line {shown}); their "
                 "samples are asked again, every other line is taken")  # fmt: skip
        if differ:
            warn(f"{path}: {differ} custom_id(s) answered more than once with different "
                 "answers; the first answer of each is kept")  # fmt: skip
    return outcomes


def _error_text(error: Any) -> str:
    """The words of a line's ``error``: OpenAI's ``{code, message}``, vLLM's text or its
    error response (``{"error": {...}}`` or flat)."""
    if isinstance(error, dict):
        inner = error.get("error")
        if isinstance(inner, dict | str) and inner:
            return _error_text(inner)
        code, message = error.get("code"), error.get("message")
        if isinstance(code, int) or (isinstance(code, str) and code.isdigit()):
            code = None  # an HTTP status, said once by the caller
        return ": ".join(str(part) for part in (code, message) if part) or json.dumps(error)
    return str(error)


def read_answer(model: Any, outcome: Outcome, sent: tuple[int, int] | None, request: Request):
    """The answer of one outcome, read and checked as an online reply is; raises what an
    online request would (an HTTP status, an invalid response, an invalid answer)."""
    if outcome.bad is not None:
        raise BatchRequestError(outcome.bad)
    if outcome.status not in (None, 200):  # OpenAI: an error body; vLLM: ``error`` text
        from gavel.transport.failures import server_words

        error = BatchRequestError("", outcome.status, outcome.body)
        words = server_words(error) if outcome.body is not None else None
        words = words or _error_text(outcome.error or outcome.body)
        # The status is said once, by whoever shows the failure (classify: "HTTP 400: ...").
        raise BatchRequestError(words, outcome.status, outcome.body)
    if outcome.error is not None or outcome.status is None:
        said = _error_text(outcome.error) if outcome.error is not None else "no response"
        raise BatchRequestError(f"the batch failed this request: {said}")
    inner: Any = model.inner if isinstance(model, ValidatingModel) else model
    answer = inner.answer_of(outcome.body, sent)
    if isinstance(model, ValidatingModel):
        valid = model.accept(answer.text, request) if model.with_request else model.accept(
            answer.text
        )  # fmt: skip
        repairs = model.repairs_in(request)
        if not valid:
            after = f" (after {repairs} repair re-ask(s))" if repairs else ""
            raise RefusedReply(f"no {model.expected} in the batch reply{after}: "
                               f"{answer.text[:300]!r}", answer.usage, answer.text)  # fmt: skip
        if repairs:
            answer = dataclasses.replace(answer, meta={**(answer.meta or {}), "repaired": repairs})
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
