"""A run through a Batch API, in rounds, resumable at every step.

One call of :func:`run_batch`:

1. drops the error lines of ``out`` (as an online rerun does) and skips the ids answered there;
2. writes the answers the cache already has (nothing is sent for them);
3. finishes every part recorded in the batch folder and not yet merged: a killed run's batch
   is polled again, never created again (:mod:`gavel.batch.state`, :mod:`gavel.batch.client`);
4. sends what is still unanswered as a new round (one or more parts, within the API's limits;
   with a budget, only the requests whose upper-bound costs fit what is left of it), waits,
   merges; requests a batch failed, refused or never reached (an expired batch, one cancelled
   before this run waited on it) are asked in the next round, up to ``rounds`` rounds in all,
   or once the first round is done, online (``fallback="online"``);
5. writes what still failed as error lines, as an online run does (scored ``model_error``; the
   next run asks them again).

A reply the model's check refuses (a judge's reply without a valid score,
:class:`gavel.runner.validating.ValidatingModel`) is re-asked as online: with the refused reply
and the repair instruction after the prompt, ``invalid_retries`` times at most, in the next
round (or online, with ``fallback="online"``); then it is an error line, never asked the same
way again. The repair turns a request was sent with are read back from its part's requests
file at the merge (:func:`gavel.batch.requests_file.read_repairs`), so an answer to a repair is
marked (``meta.repaired``) and the next repair follows from it even when the merge is a killed
run's, resumed. A run killed between two rounds asks the refused request afresh.

A run stops early, with nothing lost and ``stopped`` saying why, when a batch it waits on is
cancelled (by ``gavel batch cancel`` or anyone else: the user asked for it to stop, so nothing
is sent again) or when not even one more request fits the budget.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

import click

from gavel.batch.client import SEARCH_LIMIT_VARIABLE, BatchClient, tag
from gavel.batch.merge import (
    BatchAnswers,
    BatchRequestError,
    Merged,
    RefusedReply,
    merge,
    read_outcomes,
)
from gavel.batch.poll import counts, wait
from gavel.batch.requests_file import (
    MAX_BYTES,
    MAX_REQUESTS,
    read_custom_ids,
    read_repairs,
    read_sizes,
    sizes_path,
    write_parts,
)
from gavel.batch.state import BatchState, Part, batch_folder, load_state, run_tag, save_state
from gavel.errors import ConfigError, GavelError
from gavel.io.files import atomic_write_bytes
from gavel.io.output_lock import writes_output
from gavel.requests import Request
from gavel.runner.async_runner import AsyncRunSummary, Prices, cost_of, run_async, take_errors
from gavel.runner.cache import AnswerCache, model_identity
from gavel.runner.earlier_errors import put_back
from gavel.runner.local import completed_ids
from gavel.runner.validating import ValidatingModel
from gavel.transport.failures import InvalidAnswerError, classify
from gavel.transport.retry import InvalidResponseError


class Budget(Protocol):
    """What a batch run asks of the spending limit its caller hands it (the command's
    :class:`gavel.cost.budget.Budget`): the cost package reads batch folders, so the batch
    runner knows a budget only by these."""

    #: This run's spend so far, as the batches report it (set by the run).
    summary: Any
    #: Whether a round held requests back (set by the run).
    reached: bool

    def fitting(self, requests: Iterable[Request]) -> list[Request]: ...

    def batch_message(self, out: Path, held: int) -> str: ...


FALLBACKS = ("batch", "online")
#: Fetches of a batch's files at most while they hold fewer results than it reported.
FETCHES = 5


@dataclass(frozen=True)
class BatchSettings:
    """How a batch run goes: ``fallback`` for what a batch did not answer (``batch``: a next
    round, ``online``: asked online after the first round), ``rounds`` at most, the status
    asked every ``poll`` seconds, parts within ``max_requests`` and ``max_bytes``."""

    fallback: str = "batch"
    rounds: int = 3
    poll: float = 30.0
    max_requests: int = MAX_REQUESTS
    max_bytes: int = MAX_BYTES

    def __post_init__(self) -> None:
        if self.fallback not in FALLBACKS:
            raise ConfigError(f"batch fallback must be one of {', '.join(FALLBACKS)}")
        if self.rounds < 1:
            raise ConfigError("batch rounds must be at least 1")


@dataclass
class BatchRunSummary(AsyncRunSummary):
    """An online summary's counts, plus what the batches did."""

    batches: int = 0
    rounds: int = 0
    #: Requests sent again in a later round (or online) after a batch did not answer them.
    re_asked: int = 0
    online: int = 0
    #: Requests sent again with a refused reply and the repair instruction after the prompt.
    repairs: int = 0
    #: Answers in output files that no current request has (inputs changed since).
    stale: int = 0
    #: Requests an offline output file does not mention (left for another run).
    remaining: int = 0
    #: Why the run stopped before every request was asked (a batch cancelled while it
    #: waited, the budget): the caller reports it and exits 2; nothing was lost.
    stopped: str | None = None

    def describe(self) -> str:
        text = super().describe()
        extra = f"batch: {self.batches} batch(es) in {self.rounds} round(s)"
        if self.re_asked:
            extra += f", {self.re_asked} re-asked"
        if self.online:
            extra += f", {self.online} asked online"
        if self.repairs:
            extra += f", {self.repairs} asked again with the repair instruction"
        if self.stale:
            extra += f", {self.stale} answers for changed inputs ignored"
        if self.remaining:
            extra += f", {self.remaining} not in the output file (not written; ask them again)"
        return f"{text}; {extra}"

    def add(self, part: AsyncRunSummary) -> None:
        """Add the lines another runner call wrote."""
        for name in ("answered", "errors", "cached", "retries", "prompt_tokens",
                     "completion_tokens", "refused"):  # fmt: skip
            setattr(self, name, getattr(self, name) + getattr(part, name))


class BatchInterrupted(GavelError):
    """Ctrl-C while waiting: the batch goes on on the server."""

    exit_code = 130


class BatchDownloadFailed(GavelError):
    """A finished batch's output or error file could not be downloaded (a 404, a failure
    after the client's retries): the run stops, the batch stays recorded as finished and not
    downloaded, and the same command fetches its files again."""


def online_model(model: Any) -> Any:
    """The OpenAI-compatible adapter under a judge's validation, which builds the bodies."""
    inner = model.inner if isinstance(model, ValidatingModel) else model
    if not callable(getattr(inner, "request_body", None)):
        raise ConfigError(
            f"batch mode needs an OpenAI-compatible model (openai:NAME), not {model.name}"
        )
    return inner


class _Run:
    """The state of one :func:`run_batch` call."""

    def __init__(self, model, out: Path, kind: str, cache, settings: BatchSettings, progress):
        self.model = model
        self.inner = online_model(model)
        if len(self.inner.base_urls) > 1:
            raise ConfigError("batch mode sends to one server: give a single base URL")
        self.out = out
        self.folder = batch_folder(out)
        self.kind = kind
        self.settings = settings
        self.progress = progress
        self.own_cache = cache is not None and not isinstance(cache, AnswerCache)
        self.cache = AnswerCache(cache) if self.own_cache else cache
        # Content addresses are computed the cache's way even without a cache file.
        self.keys = self.cache if self.cache is not None else AnswerCache(":memory:")
        self.identity = model_identity(model)
        self.summary = BatchRunSummary(model=model.name)
        self._client: BatchClient | None = None
        #: The batch cancelled while this run waited for it (the run then stops).
        self.cancelled: str | None = None
        #: A search of the batches stopped at its cap was said (once a run).
        self.warned_search = False
        #: Sample id -> its next ask, after a reply the model's check refused: the repair.
        self.next_ask: dict[str, Request] = {}
        #: Samples refused as often as the model re-asks: not asked again (error lines).
        self.exhausted: set[str] = set()
        #: Replies refused per sample (a model re-asking without a repair instruction).
        self.refusals: Counter[str] = Counter()

    @property
    def client(self) -> BatchClient:
        if self._client is None:
            self._client = BatchClient(self.inner.batch_client(), self.inner.redact)
        return self._client

    def close(self) -> None:
        if self.own_cache and self.cache is not None:
            self.cache.close()
        if self.keys is not self.cache:
            self.keys.close()

    # --- what is left to ask --------------------------------------------------------------

    def keyed(self, requests: list[Request]) -> dict[str, Request]:
        """custom_id -> request, for the requests not answered in ``out``."""
        done = completed_ids(self.out)
        return {self.keys.key(self.identity, r): r for r in requests if r.sample_id not in done}

    def write_cached(self, keyed: dict[str, Request]) -> dict[str, Request]:
        """Write the answers the cache has; returns the rest."""
        if self.cache is None:
            return keyed
        hits = {key: r for key, r in keyed.items() if self.cache.get(key) is not None}
        if hits:
            self._write_with(list(hits.values()), {}, {})
        return {key: r for key, r in keyed.items() if key not in hits}

    def _write_with(self, requests, answers, failures) -> AsyncRunSummary:
        import asyncio

        part = AsyncRunSummary(model=self.model.name)
        asyncio.run(run_async(BatchAnswers(self.model, answers, failures), requests, self.out,
                              concurrency=8, progress=False, cache=self.cache,
                              failure_budget=None, retries=0, retry_errors=False,
                              summary=part))  # fmt: skip
        self.summary.add(part)
        return part

    def asked(self, keyed: dict[str, Request]) -> dict[str, Request]:
        """``keyed`` as this run asks them now: a refused reply's request as its repair."""
        return {key: self.next_ask.get(r.sample_id, r) for key, r in keyed.items()}

    def _sent(self, requests_path: Path, keyed: dict[str, Request]) -> dict[str, Request]:
        """The requests of a part as they were sent: with the repair turns its requests file
        shows them with (read back, so a merge resumed after a crash knows them too)."""
        repair = self.model.repair if isinstance(self.model, ValidatingModel) else None
        turns = read_repairs(requests_path, repair) if repair and requests_path.exists() else {}
        return {key: dataclasses.replace(r, followup=r.followup + turns[key]) if key in turns
                else r for key, r in keyed.items()}  # fmt: skip

    def _refused(self, sent: Request, error: Exception) -> None:
        """After a failed request: a refused reply is re-asked as online (the repair, up to the
        model's ``invalid_retries``), then not again."""
        model = self.model
        if not isinstance(error, RefusedReply) or not isinstance(model, ValidatingModel):
            return
        sample_id = sent.sample_id
        self.refusals[sample_id] += 1
        made = model.repairs_in(sent) if model.repair else self.refusals[sample_id] - 1
        if made >= model.invalid_retries:
            self.exhausted.add(sample_id)
            self.next_ask.pop(sample_id, None)
        else:
            self.next_ask[sample_id] = model.repaired(sent, error.text)

    # --- state ------------------------------------------------------------------------------

    def state(self) -> BatchState:
        base_url = self.inner.settings()["base_urls"][0]
        state = load_state(self.folder)
        if state is None:
            return BatchState(kind=self.kind, model=self.model.name, base_url=base_url,
                              api_key_env=self.inner.api_key_env, output=self.out.name,
                              run=run_tag(self.kind, self.out))  # fmt: skip
        if state.unfinished() and (state.model, state.base_url) != (self.model.name, base_url):
            raise GavelError(
                f"{self.folder} records batches of {state.model} at {state.base_url} not yet "
                f"merged: rerun with that model and base URL to collect them, or cancel them "
                f"(gavel batch cancel {self.out}) and delete {self.folder}"
            )
        state.model, state.base_url = self.model.name, base_url
        state.run = state.run or run_tag(self.kind, self.out)
        return state

    def save(self, state: BatchState) -> None:
        save_state(self.folder, state)

    # --- one part, from its requests file to its merge ------------------------------------

    def submit(self, state: BatchState, keyed: dict[str, Request]) -> list[Part]:
        number = state.rounds() + 1
        names = (f"r{number}-p{index}" for index in range(1, len(keyed) + 1))
        staged = []

        def paths():
            for name in names:
                staged.append(name)
                yield self.folder / f"{name}.requests.jsonl"

        written = write_parts(self.inner, list(keyed.items()), paths(),
                              max_requests=self.settings.max_requests,
                              max_bytes=self.settings.max_bytes)  # fmt: skip
        parts = [Part(name=name, round=number, count=w.count, sha256=w.sha256)
                 for name, w in zip(staged, written, strict=True)]  # fmt: skip
        state.parts.extend(parts)
        self.save(state)
        return parts

    def drive(self, state: BatchState, part: Part, keyed: dict[str, Request]) -> Merged:
        requests_path = part.requests_path(self.folder)
        if requests_path.exists() and not any(k in keyed for k in read_custom_ids(requests_path)):
            # Every request of it was answered another way (online, another run): not waited for.
            part.merged = True
            self.save(state)
            if part.batch_id and not part.finished:
                click.echo(f"batch {part.batch_id} is no longer needed: every request of it is "
                           f"answered; `gavel batch cancel {self.out}` stops it", err=True)  # fmt: skip
            return Merged(AsyncRunSummary(model=self.model.name))
        client = self.client
        if part.batch_id is None:
            # Looked for first, whatever the state says: a lost state file, a lost reply.
            wanted = tag(state.run, self.out.name, part.name, part.round, part.sha256)
            known = {p.batch_id for p in state.parts if p.batch_id}
            found = self._search(state, part, wanted, known)  # records the run's start
            since = state.since
            adopted = found is not None
            if found is None:
                if part.file_id is None:
                    name = f"gavel-{part.sha256[:16]}-{part.name}.jsonl"
                    part.file_id = client.upload(part.requests_path(self.folder), name)
                    self.save(state)
                part.creating = True  # a rerun after a lost reply looks for it first
                self.save(state)
                found, adopted = client.create(part.file_id, wanted, known, since)
            if not adopted:
                click.echo(f"created batch {found.id}: {part.count} requests "
                           f"(round {part.round}); recorded in {self.folder}", err=True)  # fmt: skip
            else:
                click.echo(f"found batch {found.id} created by an earlier run or attempt (its "
                           "reply was lost); not created again", err=True)  # fmt: skip
            part.batch_id, part.creating = found.id, False
            self.save(state)
        if not part.finished:
            self._wait(state, part)
        if not part.downloaded:
            try:
                self._download(part)
            except GavelError as error:  # the batch is recorded finished: a rerun fetches it
                raise BatchDownloadFailed(
                    f"stopped: batch {part.batch_id} {part.status}, but its results could not "
                    f"be downloaded: {error}. Nothing is lost: the batch is recorded in "
                    f"{self.folder / 'state.json'} and its results stay on the server; rerun "
                    "the same command to download them (no batch is created or paid for again)"
                ) from None
            part.downloaded = True
            self.save(state)
        return self.merge_part(state, part, keyed)

    def _search(self, state: BatchState, part: Part, wanted: dict[str, str],
                known: set[str]) -> Any | None:  # fmt: skip
        """The part's batch on the server, looked for before it is created (a lost state
        file, a lost reply), back to the run's start when the state knows it; the first search
        of a run reads the listing to its end and records the start. A search that stopped at
        its cap stops the run when an attempt may have made the batch (the state says
        ``creating``), and is said once otherwise."""
        began = time.time()
        since = state.since or None
        file_id = part.file_id if part.creating else None
        search = self.client.search(wanted, file_id, known, since)
        if not state.since:  # from now on, searches read back to here only
            state.since = min(began, search.earliest or began)
            self.save(state)
        if search.complete:
            return search.batch
        if part.creating:
            raise GavelError(f"stopped: the batch of {part.requests_path(self.folder)} may "
                             "have been made by an earlier attempt whose reply was lost, and "
                             f"{self.client.unsure(wanted, file_id, since)}")  # fmt: skip
        if not self.warned_search:
            self.warned_search = True
            click.echo(f"warning: gavel read {search.stopped_at()} at "
                       f"{self.client.client.base_url}batches, as many as it reads "
                       f"({SEARCH_LIMIT_VARIABLE}), and found none of this run's; older ones "
                       "were not read (a batch of the same requests made by an earlier run "
                       "whose batch folder was lost is not found there): sending them",
                       err=True)  # fmt: skip
        return None

    def _download(self, part: Part) -> None:
        """The batch's output and error files, fetched again (up to :data:`FETCHES` times, a
        poll interval apart) while they hold fewer lines than the server said it finished: a
        server may say ``completed`` before its file is whole, and a missing line would be
        asked, and paid for, again."""
        files = [(file_id, path) for file_id, path in (
            (part.output_file_id, part.output_path(self.folder)),
            (part.error_file_id, part.errors_path(self.folder))) if file_id]  # fmt: skip
        for fetch in range(1, FETCHES + 1):
            got = 0
            for file_id, path in files:
                data = self.client.download(file_id)
                atomic_write_bytes(path, data)
                got += sum(1 for line in data.splitlines() if line.strip())
            if got >= part.reported or fetch == FETCHES:
                return
            click.echo(f"batch {part.batch_id}: its files hold {got} of the {part.reported} "
                       "results it reported; still being written: fetched again", err=True)  # fmt: skip
            time.sleep(self.settings.poll)

    def _wait(self, state: BatchState, part: Part) -> None:
        seen: list[str] = []
        batch_id = cast(str, part.batch_id)  # drive() waits only once the batch is created

        def record(batch: Any) -> None:
            seen.append(batch.status)
            part.status = batch.status
            self.save(state)

        try:
            batch = wait(lambda: self.client.retrieve(batch_id), f"batch {part.batch_id}",
                         part.count, self.settings.poll, self.progress, record)  # fmt: skip
        except KeyboardInterrupt:
            raise BatchInterrupted(
                f"interrupted: batch {part.batch_id} goes on on the server (recorded in "
                f"{self.folder}); rerun the same command to collect its answers, or stop it "
                f"with `gavel batch cancel {self.out}`"
            ) from None
        part.status, part.finished = batch.status, True
        done, failed, _ = counts(batch)
        part.reported = done + failed
        if batch.status == "cancelled" and seen[0] not in ("cancelling", "cancelled"):
            self.cancelled = part.batch_id  # by someone else while this run waited
        part.output_file_id = batch.output_file_id
        part.error_file_id = batch.error_file_id
        errors = getattr(getattr(batch, "errors", None), "data", None) or []
        part.errors = [
            f"line {e.line}: {e.code}: {e.message}" if e.line else f"{e.code}: {e.message}"
            for e in errors
        ][:20]
        self.save(state)

    def merge_part(self, state: BatchState, part: Part, keyed: dict[str, Request]) -> Merged:
        requests_path = part.requests_path(self.folder)
        ids = read_custom_ids(requests_path) if requests_path.exists() else list(keyed)
        mine = self._sent(requests_path, {key: keyed[key] for key in ids if key in keyed})
        missing = {
            "completed": f"batch {part.batch_id} returned no result for this request",
            "expired": f"batch {part.batch_id} expired before answering this request",
            "cancelled": f"batch {part.batch_id} was cancelled before answering this request",
            "failed": f"batch {part.batch_id} failed: {'; '.join(part.errors) or 'no reason given'}",
        }.get(part.status or "", f"batch {part.batch_id} ended {part.status}")
        outcomes = read_outcomes(part.output_path(self.folder), part.errors_path(self.folder))
        merged = merge(self.model, mine, outcomes, read_sizes(sizes_path(requests_path)),
                       self.out, cache=self.cache, missing=missing, final=False)  # fmt: skip
        self.summary.add(merged.summary)
        # Refused replies were paid for but have no line: their tokens are kept with the part,
        # where the ledger (gavel.cost.ledger) counts them.
        part.refused_prompt_tokens = merged.refused_usage.get("prompt_tokens", 0)
        part.refused_completion_tokens = merged.refused_usage.get("completion_tokens", 0)
        self.summary.prompt_tokens += part.refused_prompt_tokens
        self.summary.completion_tokens += part.refused_completion_tokens
        self.summary.stale += merged.stale
        by_id = {request.sample_id: request for request in mine.values()}
        for sample_id, error in merged.again.items():
            self._refused(by_id[sample_id], error)
        part.merged, part.answered, part.failed = True, merged.summary.answered, len(merged.again)
        self.save(state)
        kinds = Counter(classify(error).kind for error in merged.again.values())
        said = ", ".join(f"{n} {kind}" for kind, n in kinds.most_common())
        click.echo(f"batch {part.batch_id} {part.status}: {merged.summary.answered} answered, "
                   f"{len(merged.again)} to ask again" + (f" ({said})" if said else ""),
                   err=True)  # fmt: skip
        self.summary.batches += 1
        return merged


def _final_error(error: Exception) -> Exception:
    """The failure written as the error line; a refused reply's tokens were counted already
    (in the summary, and in the part's record that the ledger reads)."""
    if isinstance(error, InvalidAnswerError | InvalidResponseError):
        return type(error)(str(error))
    return error


@writes_output("out")
def run_batch(
    model: Any,
    requests: Iterable[Request],
    out: str | Path,
    *,
    kind: str = "generate",
    cache: AnswerCache | str | Path | None = None,
    settings: BatchSettings = BatchSettings(),
    progress: bool = True,
    online: dict[str, Any] | None = None,
    prices: Prices | None = None,
    budget: Budget | None = None,
) -> BatchRunSummary:
    """Answer every request not answered in ``out`` through the server's Batch API (see the
    module's text). ``online``: ``run_async`` options for the online fallback; ``prices``
    (per 1,000 tokens: give the batch prices) adds the cost; ``budget`` (with each request's
    ``bound``, at the batch price) lets a batch hold only the requests that fit what is left
    of it, and holds the rest back (``stopped`` says so)."""
    if budget is not None and settings.fallback == "online":
        raise ConfigError(
            "--max-cost with a batch fallback of online: not supported (online requests cost "
            "more than the batch's); use the batch fallback"
        )
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    run = _Run(model, out, kind, cache, settings, progress)
    summary = run.summary
    taken: dict[str, bytes] = {}
    try:
        taken = take_errors(out)
        summary.errors_retried = len(taken)
        unique = list({r.sample_id: r for r in requests}.values())
        done = completed_ids(out)
        summary.requested = len(unique)
        summary.skipped = sum(r.sample_id in done for r in unique)
        keyed = run.write_cached(run.keyed(unique))
        state = run.state()
        failures: dict[str, Exception] = {}
        rounds = 0
        if budget is not None:
            budget.summary = summary  # this run's spend, as the batches report it
        unfinished = state.unfinished()
        if unfinished:
            rounds += 1
            for part in unfinished:
                if run.cancelled is None:
                    failures |= run.drive(state, part, keyed).again
        while run.cancelled is None:
            keyed = run.keyed(unique)
            askable = {k: r for k, r in keyed.items() if r.sample_id not in run.exhausted}
            if (
                not askable
                or rounds >= settings.rounds
                or (settings.fallback == "online" and rounds >= 1)
            ):
                break
            sending = askable
            if budget is not None:  # only what fits what is left; the rest waits
                chosen = {r.sample_id for r in budget.fitting(run.asked(askable).values())}
                sending = {k: r for k, r in askable.items() if r.sample_id in chosen}
                if not sending:
                    break
            if rounds == 0 and state.parts:
                summary.re_asked += len(sending)
            else:
                summary.re_asked += sum(r.sample_id in failures for r in sending.values())
            summary.repairs += sum(r.sample_id in run.next_ask for r in sending.values())
            rounds += 1
            for part in run.submit(state, run.asked(sending)):
                if run.cancelled is None:
                    failures |= run.drive(state, part, sending).again
        summary.rounds = rounds
        remaining = list(keyed.values())
        # Requests the budget held back (never sent by this run): not failures, not written.
        held = [r for r in remaining if r.sample_id not in failures] if budget else []
        remaining = [r for r in remaining if r.sample_id in failures] if budget else remaining
        # Refused as often as the model re-asks: their error lines, whatever the fallback.
        spent = [r for r in remaining if r.sample_id in run.exhausted]
        if spent and run.cancelled is None:
            run._write_with(spent, {}, {r.sample_id: _final_error(failures[r.sample_id])
                                        for r in spent})  # fmt: skip
            remaining = [r for r in remaining if r.sample_id not in run.exhausted]
        if run.cancelled is not None:
            left = len(run.keyed(unique))
            summary.stopped = (
                f"stopped: batch {run.cancelled} was cancelled while this run waited for it. "
                f"Every answer it gave is kept in {out}; {left} request(s) are not answered "
                "and were not sent again: rerun the same command to ask them in a new batch"
            )
        elif remaining and settings.fallback == "online":
            click.echo(f"asking {len(remaining)} request(s) online that the batch did not "
                       "answer", err=True)  # fmt: skip
            summary.online = len(remaining)
            summary.re_asked += len(remaining)
            summary.repairs += sum(r.sample_id in run.next_ask for r in remaining)
            import asyncio

            asked = AsyncRunSummary(model=model.name)
            again = [run.next_ask.get(r.sample_id, r) for r in remaining]  # a refusal: its repair
            asyncio.run(run_async(model, again, out, cache=run.cache, progress=progress,
                                  retry_errors=False, summary=asked, **(online or {})))  # fmt: skip
            summary.add(asked)
        elif remaining:
            reason = BatchRequestError(f"not answered in {rounds} batch round(s)")
            run._write_with(remaining, {}, {r.sample_id: _final_error(failures.get(r.sample_id, reason))
                                            for r in remaining})  # fmt: skip
        if budget is not None:  # held back by a round, yet maybe sent by a later one
            budget.reached = bool(held)
        if held and budget is not None and summary.stopped is None:
            summary.stopped = budget.batch_message(out, len(held))
    finally:
        summary.seconds = time.perf_counter() - started
        summary.cost = cost_of(model.name, summary.prompt_tokens, summary.completion_tokens, prices)
        try:
            put_back(out, taken)  # the earlier error lines of samples that got no new line
        finally:
            run.close()
    return summary


@writes_output("out")
def write_requests_only(model: Any, requests: Iterable[Request], out: Path, target: Path,
                        cache=None) -> int:  # fmt: skip
    """Write the requests ``out`` still needs (not answered there, not in the cache) into one
    requests file ``target`` for an offline ``vllm run-batch``; returns how many. The sent
    image sizes are kept in the batch folder of ``out`` for :func:`merge_output`."""
    run = _Run(model, Path(out), "generate", cache, BatchSettings(), False)
    taken: dict[str, bytes] = {}
    try:
        taken = take_errors(run.out)  # their samples are asked again; the lines stay meanwhile
        keyed = run.write_cached(run.keyed(list({r.sample_id: r for r in requests}.values())))
        if not keyed:
            return 0
        sizes = run.folder / "offline.sent.json"
        written = write_parts(run.inner, list(keyed.items()), [target],
                              sizes_for=lambda _: sizes, max_requests=len(keyed) + 1,
                              max_bytes=1 << 62)  # fmt: skip
        return written[0].count
    finally:
        try:
            put_back(run.out, taken)
        finally:
            run.close()


@writes_output("out")
def merge_output(model: Any, requests: Iterable[Request], out: Path, output: Path,
                 cache=None) -> BatchRunSummary:  # fmt: skip
    """Merge an output file of ``vllm run-batch`` (made from :func:`write_requests_only`'s
    file) into ``out``: answers as lines and cache entries; requests it failed as error lines;
    requests it does not mention are left for another run (counted as ``remaining``)."""
    if not output.is_file():
        raise GavelError(f"{output}: no such batch output file")
    run = _Run(model, Path(out), "generate", cache, BatchSettings(), False)
    summary = run.summary
    started = time.perf_counter()
    taken: dict[str, bytes] = {}
    try:
        taken = take_errors(run.out)
        summary.errors_retried = len(taken)
        unique = list({r.sample_id: r for r in requests}.values())
        done = completed_ids(run.out)
        summary.requested = len(unique)
        summary.skipped = sum(r.sample_id in done for r in unique)
        keyed = run.write_cached(run.keyed(unique))
        outcomes = read_outcomes(output)
        sizes = read_sizes(run.folder / "offline.sent.json")
        unsized = [
            (k, r) for k, r in keyed.items() if r.images and k in outcomes and k not in sizes
        ]
        sizes |= _sizes_of(run.inner, unsized)
        merged = merge(model, keyed, outcomes, sizes, run.out, cache=run.cache,
                       missing=None, final=True)  # fmt: skip
        summary.add(merged.summary)
        summary.stale = merged.stale
        summary.remaining = sum(key not in outcomes for key in keyed)
        summary.batches = summary.rounds = 1
    finally:
        summary.seconds = time.perf_counter() - started
        try:
            put_back(run.out, taken)  # samples the output file does not mention keep theirs
        finally:
            run.close()
    return summary


def _sizes_of(inner: Any, keyed: list[tuple[str, Request]]) -> dict[str, tuple[int, int]]:
    """Sent image sizes rebuilt from the requests (when the recorded ones are missing)."""
    from gavel.batch.requests_file import lines

    return {key: tuple(sent) for key, _, sent in lines(inner, keyed) if sent is not None}
