"""The concurrent runner for served models: bounded concurrency, retries, cache, failure budget.

``concurrency`` workers share one lazy iterator over the requests, so memory stays flat however
many there are; each worker takes the next request, asks the model (retrying what is worth
retrying, see :mod:`gavel.transport.retry`), appends the prediction to the output and only then
counts it. The output file has the same contract as the in-process runner's
(:mod:`gavel.runner.local`, whose ``repair_tail`` and ``completed_ids`` are reused):

- one JSON line per request, flushed as soon as the answer arrives (fsynced every
  ``fsync_interval`` seconds and at the end), so a crash, even ``kill -9``, loses only the
  requests in flight and at most one line cut short, which the next run removes;
- rerunning the same command skips every id already answered and never writes an id twice;
- a request that still fails after its retries is written with ``error`` set (the server's
  words, its ``error_kind``), so scoring counts it as ``model_error``. A rerun asks those again:
  before starting it takes the error lines out of the file (atomically: a temporary file
  renamed over it) and treats those ids as not done; when the run ends, however it ends (done,
  stopped, Ctrl-C), the old error line of every id that got no new line is put back, so a
  rerun never loses a line it did not replace. ``retry_errors=False`` keeps them instead.

When the failure budget runs out (too many failures of the endpoint in a row, or too large a
share) the run stops: requests in flight are abandoned (not written, so a rerun sends them), the file is
synced, and :class:`RunAborted` is raised with the summary. Everything written stays valid.
Only failures of the endpoint spend the budget: a reply that arrived but was refused (a judge
reply without a valid score, :class:`gavel.transport.failures.InvalidAnswerError`) is written as
an error line of its own sample and never stops the run (:mod:`gavel.transport.failures`).

A run whose endpoint answers goes on to the end: a sample the server refuses (a content
filter, an image too large: 400, 404, 413, 422) gets its error line with the server's words and
spends no failure budget; the summary counts the failures by cause. Only the first requests of a
run may stop it for a refusal (:mod:`gavel.runner.first_requests`): when the first
:data:`SAME_REFUSALS` replies are all refused alike (a wrong API key, an unknown model or route,
a refused field, or a server error that is no outage, such as 500 "image input is not
supported") and none was answered, the run stops with one message: how many requests were sent,
the server's words and what to check (the model's ``advice``); from that moment nothing more is
sent. ``max_failures``
(:mod:`gavel.runner.max_failures`) stops a run on purpose past a number or share of failed
samples. Before anything is sent the model's ``preflight`` runs, when it has one: an
OpenAI-compatible server is asked which models it serves.

A server that goes away after the run reached it (connection refused) is waited for: the
requests are retried with backoff for up to ``outage_limit`` seconds (:data:`OUTAGE_LIMIT`)
without spending their retries, so a server restarted in that time finds the run going on. Past
it the run stops with everything answered kept and the requests in flight left unwritten: a
rerun once the server is back asks only those.

A 429 while other requests are being answered is the endpoint's rate limit at work: it is
retried without spending the request's retries, so it never becomes an error line while the
run makes progress. A served model's own rate control (its ``rate_control``,
:mod:`gavel.transport.gate`: budgets, adaptive in-flight limit, ``Retry-After`` pauses) gets the
run's ``concurrency`` as its ceiling and is shown on the progress bar.

Each error line names the real cause (``connection refused``, not the client's
``Request timed out.``) and its ``error_kind``. When the endpoint refuses the connection (or its
host does not resolve) before any request of the run reached it, nothing is retried: the run
stops at once with :class:`RunAborted`, writing nothing for the requests it could not send,
since no number of retries starts a server that is not there.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from gavel.errors import ConfigError, GavelError
from gavel.io.files import AppendFile, close_synced, commit, stage_chunks
from gavel.io.output_lock import writes_output
from gavel.io.reading import bounded_lines
from gavel.manifest import redact_userinfo
from gavel.records import Prediction
from gavel.requests import Answer, Model, Request
from gavel.runner.cache import AnswerCache, model_identity
from gavel.runner.first_requests import FirstRequests
from gavel.runner.local import RunSummary, completed_ids, repair_tail
from gavel.runner.max_failures import MaxFailures
from gavel.transport.failures import (
    ANSWERED,
    HTTP_STATUS,
    INVALID_ANSWER,
    NO_SERVER,
    SAME_REFUSALS,
    Failure,
    Refusal,
    classify,
)
from gavel.transport.retry import RetryPolicy, is_retryable, retry_after, status_of

log = logging.getLogger(__name__)

#: Longest error message kept in a prediction.
MAX_ERROR_CHARS = 1000
#: Distinct failure causes printed on the console in one run (each once).
MAX_SHOWN = 5
#: Failure causes listed by :meth:`AsyncRunSummary.describe_failures` at most.
MAX_CAUSES = 10
#: Seconds a server that went away (connection refused) is waited for before the run stops.
OUTAGE_LIMIT = 60.0
#: The longest wait between two tries while the server is away, so a restart is seen soon.
OUTAGE_POLL = 5.0


class RunAborted(GavelError):
    """The failure budget ran out. ``summary`` says what was done; all of it is on disk."""

    def __init__(self, message: str, summary: AsyncRunSummary):
        super().__init__(message)
        self.summary = summary


class RunInterrupted(GavelError):
    """The user stopped the run (Ctrl-C). ``summary`` says what was done; all of it is on disk."""

    exit_code = 130

    def __init__(self, out: Path, summary: AsyncRunSummary):
        super().__init__(
            f"interrupted: {summary.describe()}. Everything answered is kept in {out}; "
            "rerun the same command to continue."
        )
        self.summary = summary


@dataclass(frozen=True)
class FailureBudget:
    """When to give up: ``max_consecutive`` failed requests in a row, or more than
    ``max_fraction`` of the finished requests failed once at least ``min_finished`` finished.
    A failure is a request whose final outcome (after its retries) is an error. ``None``
    switches a rule off."""

    max_consecutive: int | None = 20
    max_fraction: float | None = 0.2
    min_finished: int = 50

    def exceeded(self, consecutive: int, failed: int, finished: int) -> str | None:
        if self.max_consecutive is not None and consecutive >= self.max_consecutive:
            return f"{consecutive} requests in a row failed"
        if (
            self.max_fraction is not None
            and finished >= self.min_finished
            and failed > self.max_fraction * finished
        ):
            return f"{failed} of {finished} requests failed (more than {self.max_fraction:.0%})"
        return None


@dataclass
class AsyncRunSummary(RunSummary):
    """What a run did. ``answered`` counts lines written this run (errors included);
    ``refused`` counts the error lines of replies that arrived but were refused (included in
    ``errors``, never in the failure budget)."""

    model: str = ""
    #: Answers taken from the cache (included in ``answered``; nothing was sent for them).
    cached: int = 0
    #: Error lines of an earlier run removed before this one, so their ids are asked again.
    errors_retried: int = 0
    retries: int = 0
    #: Tokens of the answers received from the server this run (not cached, not retried).
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: In the price table's currency, when the model is in it.
    cost: float | None = None
    aborted: str | None = None
    refused: int = 0
    #: Retries after a 429 (included in ``retries``).
    rate_limited: int = 0
    #: Error lines written this run, by cause (``HTTP 400: <the server's words>``).
    causes: dict[str, int] = field(default_factory=dict)
    #: Requests sent this run (every attempt, retries included; none for cached answers).
    sent: int = 0

    def describe(self) -> str:
        sent = self.answered - self.cached
        rate = sent / self.seconds if self.seconds else 0.0
        errors = f"{self.errors} errors"
        if self.refused:
            errors += f" ({self.refused} replies refused)"
        parts = [
            f"{self.requested} requests: {self.answered - self.errors} answered"
            + (f" ({self.cached} from the cache)" if self.cached else ""),
            f"{self.skipped} already there",
            errors,
            f"{self.retries} retries"
            + (f" ({self.rate_limited} after a 429)" if self.rate_limited else ""),
            f"tokens {self.prompt_tokens:,} in / {self.completion_tokens:,} out",
        ]
        if self.errors_retried:
            parts.insert(2, f"{self.errors_retried} earlier errors asked again")
        if self.cost is not None:
            parts.append(f"cost {self.cost:.4f}")
        parts.append(f"{self.seconds:.1f} s ({rate:.1f} requests/s)")
        return ", ".join(parts)

    def describe_failures(self) -> str:
        """The samples that failed this run, grouped by cause, most frequent first (one cause
        a line); "" when none failed."""
        if not self.causes:
            return ""
        ranked = sorted(self.causes.items(), key=lambda item: (-item[1], item[0]))
        shown = [f"  {count} × {cause}" for cause, count in ranked[:MAX_CAUSES]]
        if len(ranked) > MAX_CAUSES:
            rest = sum(count for _, count in ranked[MAX_CAUSES:])
            shown.append(f"  {rest} × {len(ranked) - MAX_CAUSES} other causes")
        return "\n".join([f"{sum(self.causes.values())} samples failed:", *shown])


Prices = Mapping[str, tuple[float, float]]


def cost_of(model: str, prompt_tokens: int, completion_tokens: int, prices: Prices | None):
    """Cost from a table ``{model: (input per 1k tokens, output per 1k tokens)}``, or None."""
    if not prices or model not in prices:
        return None
    per_input, per_output = prices[model]
    return prompt_tokens / 1000 * per_input + completion_tokens / 1000 * per_output


def budget_spent(summary: AsyncRunSummary, out: Path) -> RunAborted:
    """The error that ends a run whose failure budget ran out (``summary.aborted`` says
    which limit): what is kept, and how to go on."""
    causes = summary.describe_failures()
    which = "" if "--max-failures" in (summary.aborted or "") else " (failure budget)"
    return RunAborted(
        f"stopped: {summary.aborted}{which}. The {summary.answered} lines written "
        f"are kept in {out}; fix the cause and rerun to continue (failed ids are asked "
        f"again). {summary.describe()}" + (f"\n{causes}" if causes else ""),
        summary,
    )


class _BudgetExceeded(Exception):
    pass


class _Unreachable(_BudgetExceeded):
    """No server answers at the endpoint: stop before anything else is sent."""


class _Stop(_BudgetExceeded):
    """The run cannot go on (a deterministic refusal, a server gone); the message says why and
    what to do."""


@writes_output("out")
async def run_async(
    model: Model,
    requests: Iterable[Request],
    out: str | Path,
    *,
    concurrency: int = 16,
    total: int | None = None,
    progress: bool = True,
    cache: AnswerCache | str | Path | None = None,
    failure_budget: FailureBudget | None = FailureBudget(),
    retries: RetryPolicy | int = RetryPolicy(),  # noqa: B008 - frozen, shared
    timeout: float | None = None,
    prices: Prices | None = None,
    retry_errors: bool = True,
    fsync_interval: float = 1.0,
    summary: AsyncRunSummary | None = None,
    outage_limit: float = OUTAGE_LIMIT,
    max_failures: MaxFailures | None = None,
) -> AsyncRunSummary:
    """Answer every request not already answered in ``out``; returns what was done.

    ``model`` may offer ``async answer_async(request)``; otherwise its ``answer`` runs in a
    thread. ``timeout`` bounds each attempt (on top of the adapter's own HTTP timeout).
    ``cache`` is an :class:`AnswerCache` or the path of its SQLite file. Raises
    :class:`RunAborted` when the failure budget runs out, when the first requests are all
    refused alike with none answered, past ``max_failures``, or when the server is away for longer than ``outage_limit`` seconds. ``summary``,
    when given, is filled in as the run goes, so a caller still has it when the run is
    interrupted. ``max_failures`` stops the run past the user's limit of failed samples.
    """
    if concurrency < 1:
        raise ConfigError("concurrency must be at least 1")
    policy = retries if isinstance(retries, RetryPolicy) else RetryPolicy(retries=retries)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if summary is None:
        summary = AsyncRunSummary(model=model.name)
    summary.model = model.name
    control = getattr(model, "rate_control", None)  # a served model's rate limits (gate.py)
    if control is not None:
        control.set_ceiling(concurrency)
    own_cache, store = False, cache if isinstance(cache, AnswerCache) else None
    try:  # whatever stops the run before it starts leaves its message only: the connections
        # preflight opened are closed first (no "Unclosed connector" lines after it)
        preflight = getattr(model, "preflight", None)
        if preflight is not None:
            await preflight()  # e.g. the model is not among those the server serves: stop now
        # A resume file that cannot be read (a torn, duplicated or non-UTF-8 line) stops here.
        taken = take_errors(out) if retry_errors else {}
        seen = completed_ids(out)
        if cache is not None and not isinstance(cache, AnswerCache):
            own_cache, store = True, AnswerCache(cache)
        handle = AppendFile(out)
    except BaseException:
        if own_cache and store is not None:
            store.close()
        await _close(model)
        raise
    summary.errors_retried = len(taken)
    runner = _Runner(model, store, policy, failure_budget, timeout, summary)
    runner.outage_limit = outage_limit
    runner.retried = set(taken)
    written: set[str] = set()
    remaining = None if total is None else max(total - len(seen), 0)
    started = time.perf_counter()
    iterator = _earlier_errors_last(requests, taken)
    bar = _Bar(model.name, remaining, progress, control.describe if control else None)
    last_sync = time.monotonic()
    encoder = msgspec.json.Encoder()

    async def worker() -> None:
        nonlocal last_sync
        for request in iterator:
            summary.requested += 1
            if request.sample_id in seen:
                summary.skipped += 1
                continue
            seen.add(request.sample_id)
            prediction = await runner.ask(request)
            handle.write(encoder.encode(prediction) + b"\n")
            handle.flush()
            written.add(request.sample_id)
            if time.monotonic() - last_sync >= fsync_interval:
                handle.sync()
                last_sync = time.monotonic()
            runner.count(prediction)
            bar.advance(summary)
            if runner.stop_message:
                raise _Stop(runner.stop_message)
            if runner.stop_reason:
                raise _BudgetExceeded(runner.stop_reason)
            if max_failures is not None and prediction.error is not None:
                why = max_failures.exceeded(summary.errors, summary.answered, remaining)
                if why:
                    raise _BudgetExceeded(why)

    workers = [asyncio.create_task(worker()) for _ in range(concurrency)]
    unreachable = False
    try:
        with bar:
            await asyncio.gather(*workers)
    except (_Unreachable, _Stop) as stop:
        summary.aborted = str(stop)
        unreachable = True
    except _BudgetExceeded as stop:
        summary.aborted = str(stop)
    finally:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        unsynced = _put_back(handle, taken, written)  # the old errors of ids not asked again
        unsynced = close_synced(handle) or unsynced  # a full disk must not skip the cleanup
        if own_cache and store is not None:
            store.close()
        await _close(model)
        if unsynced is not None:
            raise unsynced
        summary.seconds = time.perf_counter() - started
        summary.sent = runner.first.sent
        summary.cost = cost_of(model.name, summary.prompt_tokens, summary.completion_tokens, prices)
    if unreachable:
        kept = ""
        if summary.answered or summary.skipped:
            kept = (f" Everything written is kept in {out}; rerun the same command to continue "
                    "(failed samples are asked again, answered ones are not).")  # fmt: skip
        raise RunAborted(f"stopped: {summary.aborted}{kept} {summary.describe()}", summary)
    if summary.aborted:
        raise budget_spent(summary, out)
    return summary


async def _close(model: Model) -> None:
    """Close the model's connections (its ``aclose``, when it has one)."""
    closer = getattr(model, "aclose", None)
    if closer is not None:
        await closer()


def _put_back(handle: AppendFile, taken: Mapping[str, bytes], written: set[str]) -> OSError | None:
    """Append the error lines taken out before the run for the ids that got no new line (the
    run stopped before asking them, or abandoned them in flight); the error, if any."""
    try:
        for sample_id, line in taken.items():
            if sample_id not in written:
                handle.write(line)
    except OSError as error:
        return error
    return None


def run_sync(model: Model, requests: Iterable[Request], out: str | Path, **options: Any):
    """:func:`run_async` for callers without an event loop (the command line). Ctrl-C ends it
    with :class:`RunInterrupted`, which says what was done. A ``summary`` given is filled in
    as the run goes (a spending limit reads its tokens)."""
    summary = options.pop("summary", None) or AsyncRunSummary(model=model.name)
    try:
        return asyncio.run(run_async(model, requests, out, summary=summary, **options))
    except KeyboardInterrupt:
        raise RunInterrupted(Path(out), summary) from None


def _earlier_errors_last(
    requests: Iterable[Request], earlier: Collection[str]
) -> Iterator[Request]:
    """``requests`` with the samples an earlier run failed moved to the end: their refusals do
    not count towards the stop on the first requests, so a rerun after a wrong model or key
    asks samples not yet asked first and stops after as few requests as the first run did."""
    later = []
    for request in requests:
        if request.sample_id in earlier:
            later.append(request)
        else:
            yield request
    yield from later


class _Runner:
    """Asking one request (cache, attempts, backoff) and keeping the counts."""

    def __init__(
        self,
        model: Model,
        cache: AnswerCache | None,
        policy: RetryPolicy,
        budget: FailureBudget | None,
        timeout: float | None,
        summary: AsyncRunSummary,
    ):
        self.model = model
        self.cache = cache
        self.identity = model_identity(model) if cache is not None else ""
        self.policy = policy
        self.budget = budget
        self.timeout = timeout
        self.summary = summary
        self.box_format = model.capabilities.box_format
        self.redact = getattr(model, "redact", None)
        self.consecutive = 0
        self.stop_reason: str | None = None
        #: Causes already printed on the console.
        self.shown: set[str] = set()
        #: The latest failed request's refusal, when it was one alike for all (else None).
        self.last_refusal: Refusal | None = None
        #: Whether the latest failed request was a refusal of its sample only (no budget).
        self.last_per_sample = False
        #: Ids whose error lines an earlier run wrote: their refusals are known, not counted.
        self.retried: set[str] = set()
        # ``refusals_to_stop = None`` (merging a batch's results) switches the rule off.
        rule = getattr(model, "refusals_to_stop", SAME_REFUSALS)
        self.first = FirstRequests(armed=rule is not None)
        #: Why the run must stop now (a refusal every sample gets, the server gone), for the user.
        self.stop_message: str | None = None
        self.outage_limit = OUTAGE_LIMIT
        #: When the server was first found away (connection refused after it had answered).
        self.away_since: float | None = None
        #: Some request of this run got an answer from the endpoint (of any status), or at least
        #: a connection it then closed: a server is there.
        self.reached = False
        #: Requests of this run answered by the model so far (a reply, not an error).
        self.answers = 0

    async def ask(self, request: Request) -> Prediction:
        started = time.perf_counter()
        key = None
        if self.cache is not None:
            key = self.cache.key_if_hashed(self.identity, request)
            if key is None:  # a file not hashed yet: read in a thread
                key = await asyncio.to_thread(self.cache.key, self.identity, request)
            answer = self.cache.get(key)
            if answer is not None:
                return self._prediction(request, answer, started, {"cached": True})
        attempt = 0
        spent = 0  # attempts that count against the retry policy
        answers_seen = self.answers
        waits = 0
        while True:
            try:
                answer = await self.first.send(lambda: self._call(request), self._stopped)
                self.answers += 1
                self.reached = True
                self.away_since = None
                self.first.disarm()
                break
            except _BudgetExceeded:
                raise
            except Exception as error:
                failure = classify(error)
                stopping = self._note_first(failure, request.sample_id, error)
                if failure.kind in ANSWERED:
                    self.reached = True
                    self.away_since = None
                elif failure.kind in NO_SERVER and not self.reached:
                    raise _Unreachable(
                        f"cannot reach {self._endpoint()}: {failure.cause}. Is the server "
                        "running, and is the base URL right?"
                    ) from None
                elif failure.kind in NO_SERVER:  # it was there: wait for it to come back
                    await self._wait_for_server(request, failure, waits)
                    waits += 1  # not an attempt: the request never reached a server
                    continue
                # A 429 while other requests are being answered is the endpoint's rate limit
                # at work, not a failing request: it does not spend this request's retries.
                limited = status_of(error) == 429
                free = limited and self.answers > answers_seen
                answers_seen = self.answers
                if not stopping and (free or spent < self.policy.retries) and is_retryable(error):
                    wait = self.policy.delay(spent, retry_after(error))
                    attempt += 1
                    spent += not free
                    self.summary.retries += 1
                    self.summary.rate_limited += limited
                    log.info("%s: %s; retry %d in %.2f s",
                              request.sample_id, self._describe(error), attempt, wait)  # fmt: skip
                    await asyncio.sleep(wait)
                    continue
                message = self._describe(error)
                if attempt:
                    message += f" (after {attempt + 1} attempts)"
                self._show(failure, request.sample_id, message)
                self.last_per_sample = failure.per_sample
                cause = redact_userinfo(failure.cause)  # printed in the summary
                self.summary.causes[cause] = self.summary.causes.get(cause, 0) + 1
                # Replies that arrived but were refused (a judge's invalid scores) were paid for.
                usage = getattr(error, "usage", None) or {}
                self.summary.prompt_tokens += usage.get("prompt_tokens", 0)
                self.summary.completion_tokens += usage.get("completion_tokens", 0)
                return Prediction(
                    id=request.sample_id,
                    model=self.model.name,
                    error=message,
                    latency_s=round(time.perf_counter() - started, 4),
                    prompt_tokens=usage.get("prompt_tokens"),
                    completion_tokens=usage.get("completion_tokens"),
                    error_kind=failure.kind,
                )
        if key is not None:
            self.cache.put(key, answer, self.model.name)  # type: ignore[union-attr]
        self.summary.prompt_tokens += answer.usage.get("prompt_tokens", 0)
        self.summary.completion_tokens += answer.usage.get("completion_tokens", 0)
        return self._prediction(
            request, answer, started, {"attempts": attempt + 1} if attempt else None
        )

    async def _call(self, request: Request) -> Answer:
        asking = getattr(self.model, "answer_async", None)
        call = asking(request) if asking else asyncio.to_thread(self.model.answer, request)
        if self.timeout is None:
            return await call
        return await asyncio.wait_for(call, self.timeout)

    async def _wait_for_server(self, request: Request, failure: Failure, waits: int) -> None:
        """Back off while the server is away; stop the run once it has been away too long."""
        now = time.monotonic()
        if self.away_since is None:
            self.away_since = now
            log.warning("%s is not answering (%s); waiting up to %.0f s for it to come back",
                        self._endpoint(), failure.cause, self.outage_limit)  # fmt: skip
        away = now - self.away_since
        if away >= self.outage_limit:
            raise _Stop(
                f"the server at {self._endpoint()} went away ({failure.cause}) and did not "
                f"come back within {self.outage_limit:.0f} s. Restart it and rerun the same "
                "command: answered samples are not asked again."
            )
        wait = min(self.policy.delay(min(waits, 30)), OUTAGE_POLL, self.outage_limit - away)
        self.summary.retries += 1
        log.info("%s: %s; retry in %.2f s", request.sample_id, failure.cause, wait)
        await asyncio.sleep(max(wait, 0.01))

    def _stopped(self) -> None:
        """Raised in a worker that waited to send while the run was told to stop."""
        raise _Stop(self.stop_message or "stopped")

    def _note_first(self, failure: Failure, sample_id: str, error: BaseException) -> bool:
        """Count a failed attempt for the rule of the first requests (see
        :mod:`gavel.runner.first_requests`); True when it stops the run (this request is not
        tried again)."""
        self.last_refusal = None
        first = self.first
        if failure.kind == INVALID_ANSWER:  # a reply arrived: the endpoint answers
            first.disarm()
            return False
        if not first.armed or sample_id in self.retried or not failure.alike_for_all:
            return False
        count = first.refused(failure.status, failure.server)
        if not count:
            return False
        rule = getattr(self.model, "refusals_to_stop", None)
        limit = rule(failure.status) if callable(rule) else SAME_REFUSALS
        advice = getattr(self.model, "advice", None)
        if callable(advice):
            hint = advice(failure.status, failure.server)
        elif failure.server_fault:
            hint = "The server fails every request alike: see its log for why"
        else:
            hint = "Check the model name, the API key and the base URL"
        said = (failure.server or self._describe(error)).rstrip(". ")
        self.last_refusal = Refusal(failure.status, failure.server, limit, self._endpoint(),
                                    said, hint)  # fmt: skip
        if count < limit or self.stop_message is not None:
            return False
        self.stop_message = self.last_refusal.stop_message(count, first.sent)
        first.stop()
        return True

    def _show(self, failure: Failure, sample_id: str, message: str) -> None:
        """Print a failure on the console the first time its cause is seen (the file has every
        one): a user sees the server's words without opening the predictions."""
        if failure.kind == INVALID_ANSWER or failure.cause in self.shown:
            return
        self.shown.add(failure.cause)
        if len(self.shown) <= MAX_SHOWN:
            log.warning("%s failed: %s", sample_id, message)
        elif len(self.shown) == MAX_SHOWN + 1:
            log.warning("more failures of other causes: see the error lines of the output")

    def _endpoint(self) -> str:
        """The endpoint as messages name it: no password of a URL's userinfo."""
        return redact_userinfo(getattr(self.model, "endpoint", None) or self.model.name)

    def _describe(self, error: BaseException) -> str:
        text = str(error) or "no message"
        if isinstance(error, TimeoutError) and not str(error):
            text = f"no answer within {self.timeout} s"
        failure = classify(error)
        if failure.kind in NO_SERVER or failure.kind == "connection_reset":
            text = failure.cause  # the client's own words may say "timed out" for a refusal
        elif failure.kind == HTTP_STATUS:
            text = failure.cause  # "HTTP 422: <the server's words>", not "Error code: 422"
        message = f"{type(error).__name__}: {text}"
        if self.redact is not None:
            message = self.redact(message)
        return redact_userinfo(message)[:MAX_ERROR_CHARS]  # a local model's path, too

    def _prediction(
        self, request: Request, answer: Answer, started: float, meta: dict[str, Any] | None
    ) -> Prediction:
        return Prediction(
            id=request.sample_id,
            response=answer.text,
            box_format=self.box_format,
            model=self.model.name,
            sent_size=list(answer.sent_size) if answer.sent_size else None,
            input_size=list(answer.input_size) if answer.input_size else None,
            latency_s=round(time.perf_counter() - started, 4),
            prompt_tokens=answer.usage.get("prompt_tokens"),
            completion_tokens=answer.usage.get("completion_tokens"),
            meta={**answer.meta, **(meta or {})} if answer.meta else meta,
            finish_reason=answer.finish_reason,
        )

    def count(self, prediction: Prediction) -> None:
        """Count a prediction once its line is written; check the failure budget."""
        summary = self.summary
        summary.answered += 1
        summary.cached += bool(prediction.meta and prediction.meta.get("cached"))
        if prediction.error is None:
            self.consecutive = 0
            return
        summary.errors += 1
        if prediction.error_kind == INVALID_ANSWER:  # the endpoint is fine: not a run failure
            summary.refused += 1
            self.consecutive = 0
            return
        if self.last_per_sample and not self.first.armed:  # this sample's refusal, not a run's
            return
        self.consecutive += 1
        if self.budget is not None and self.stop_reason is None:
            self.stop_reason = self.budget.exceeded(
                self.consecutive, summary.errors - summary.refused, summary.answered
            )


class _Outcome(msgspec.Struct):
    id: str = ""
    error: str | None = None


def drop_errors(path: Path) -> int:
    """Remove the error lines of a predictions file (atomically); returns how many."""
    return len(take_errors(path))


def take_errors(path: Path) -> dict[str, bytes]:
    """Remove the error lines of a predictions file (atomically); returns them by id.

    A last line cut short by a crash is removed first. Lines that do not decode are kept, for
    the predictions reader to report with their line numbers.
    """
    repair_tail(path)
    if not path.exists():
        return {}
    decoder = msgspec.json.Decoder(_Outcome)

    def failed(line: bytes) -> str | None:
        try:
            outcome = decoder.decode(line)
        except msgspec.DecodeError:
            return None
        return outcome.id if outcome.error is not None else None

    taken: dict[str, bytes] = {}
    with path.open("rb") as handle:
        for line in bounded_lines(handle, path):
            sample_id = failed(line) if line.strip() else None
            if sample_id is not None:
                taken[sample_id] = line
    if not taken:
        return {}

    def kept() -> Iterator[bytes]:
        with path.open("rb") as source:
            for line in source:
                if not (line.strip() and failed(line) is not None):
                    yield line

    # Staged whole beside it, then renamed over it: a full disk or a read-only folder fails
    # the copy, named, and leaves the file as it was.
    staged, _ = stage_chunks(path, kept())
    commit([(staged, path)])
    return taken


class _Bar:
    """A rich progress bar on stderr (only on a terminal): rate, ETA, retries, failures."""

    def __init__(self, description: str, total: int | None, enabled: bool,
                 limits: Callable[[], str] | None = None):  # fmt: skip
        from rich.console import Console

        self.limits = limits
        console = Console(stderr=True)
        self.enabled = enabled and console.is_terminal
        if not self.enabled:
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[status]}"),
            console=console,
            transient=True,
        )
        self.task = self.progress.add_task(description, total=total, rate="", status="")

    def __enter__(self) -> _Bar:
        if self.enabled:
            self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self.progress.stop()

    def advance(self, summary: AsyncRunSummary) -> None:
        if not self.enabled:
            return
        task = self.progress.tasks[0]
        speed = task.speed
        self.progress.update(
            self.task,
            advance=1,
            rate=f"{speed:.1f}/s" if speed else "",
            status=f"retries {summary.retries}  failures {summary.errors}"
            + (f"  {self.limits()}" if self.limits else ""),
        )
