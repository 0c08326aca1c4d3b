"""The server's Files and Batches API through the official ``openai`` client.

Two steps can succeed on the server while their reply is lost (a dropped connection, a 500
answered after the work was done, a reply later than the timeout, the process killed while
waiting): an upload, and a batch creation. The API has no idempotency key, so sending either
again blindly would upload twice (harmless, but untidy) or, worse, create a second batch and pay
for every request twice. That is also why the client's own retries (``max_retries``) are off for
these two calls: the library would re-send a create whose reply was merely lost.

So both are looked for before they are made, and again after any failed attempt:

- a file by its name (``gavel-<sha256 of the content>-<part>.jsonl``) and size, among the
  files of purpose ``batch``;
- a batch by its ``metadata`` tag (:func:`tag`: the run and the requests file's digest; the
  part and its round are recorded too), among ``GET /v1/batches``, leaving out the batches the
  run has recorded already, or, for a batch made without a run tag, by the id of its input
  file.

Only when the server has neither is the step done, one attempt at a time.

How far back the batches are read (:meth:`BatchClient.search`): OpenAI lists them newest
first, at most 100 a page, so an account's whole history need not be read. A run records when
its batches began (the state's ``since``: the start of its first search, or the creation of
the oldest batch of the run that search found); a later search reads page after page until
the batches listed are older than that (less :data:`CLOCK_MARGIN` for the two clocks), and a
run with no such record (a new one, a lost state file) reads the listing to its end. Either
way at most :data:`SEARCH_BATCHES` batches are read (:func:`search_limit`). A search that stops there has not
looked everywhere (:attr:`Search.complete` is false): a batch whose creation may have been
made by an attempt whose reply was lost is then not created again (the run stops, saying
what to look for), while a part never sent before is sent after a warning. A listing that is
not newest first (a server listing oldest first, or in no order) is read to its end or the
cap, since nothing in it says where the run's batches stop.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Container, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from gavel.batch.requests_file import ENDPOINT
from gavel.errors import GavelError
from gavel.setting_checks import whole_number_env

#: Batches read at most by one search for a batch a lost reply made (see the module's text;
#: ``GAVEL_BATCH_SEARCH_LIMIT`` changes it), and files by one search for an uploaded file.
SEARCH_BATCHES = 20_000
SEARCH_LIMIT_VARIABLE = "GAVEL_BATCH_SEARCH_LIMIT"
SEARCH_FILES = 10_000
#: Seconds a run's recorded start is moved back before it bounds a search: the server's
#: clock (``created_at``) and this machine's need not agree.
CLOCK_MARGIN = 3600.0
#: Listing page size (OpenAI allows up to 100 batches a page).
PAGE = 100
WINDOW = "24h"
#: Seconds waited before each look after a failed create (a server may still be making it);
#: an upload is looked for once, a second later (a second upload only costs bytes).
LOOK_AFTER = (0.0, 1.0, 3.0)
LOOK_AFTER_UPLOAD = (1.0,)
#: Attempts a create or an upload gets in all.
ATTEMPTS = 3
#: Statuses with which a server (or a proxy in front of it) says it has no such listing, or
#: not with these parameters: nothing is found there (said once), and a create whose reply is
#: lost is then not sent again (:meth:`BatchClient.create`).
UNLISTED = frozenset({400, 404, 405, 422, 501})
#: The metadata keys that say a batch holds given requests of a given run: the run and the
#: requests file's digest (not the part's name: a run whose state was lost numbers its rounds
#: anew).
TAG_KEYS = ("gavel_run", "gavel_sha256")


def tag(run: str, output: str, part: str, round_: int, sha256: str) -> dict[str, str]:
    """The ``metadata`` a part's batch is created with (OpenAI: at most 16 keys, values of
    at most 512 characters)."""
    return {"gavel_run": run, "gavel_output": output[-512:], "gavel_part": part,
            "gavel_round": str(round_), "gavel_sha256": sha256[:16]}  # fmt: skip


def _is_ours(batch: Any, wanted: Mapping[str, str], file_id: str | None) -> bool:
    metadata = getattr(batch, "metadata", None)
    metadata = metadata if isinstance(metadata, dict) else {}  # servers that keep none
    if metadata.get("gavel_run"):
        return all(metadata.get(key) == wanted.get(key) for key in TAG_KEYS)
    return file_id is not None and getattr(batch, "input_file_id", None) == file_id


def search_limit() -> int:
    """The batches one search reads at most (``GAVEL_BATCH_SEARCH_LIMIT``, a whole number)."""
    return whole_number_env(SEARCH_LIMIT_VARIABLE, SEARCH_BATCHES, "batches")


def _id(entry: Any) -> Any:
    return getattr(entry, "id", None)


def _created(entry: Any) -> float | None:
    value = getattr(entry, "created_at", None)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass
class Search:
    """What one search of the batches listing found and how far it read."""

    #: The batch of the part, or None.
    batch: Any = None
    #: Whether every batch that may be the part's was read: the listing was read to its end,
    #: or, newest first, past the time given. False when the search stopped at its cap.
    complete: bool = True
    #: Batches read.
    read: int = 0
    #: ``created_at`` of the last batch read (how far back the search came), if it said.
    reached: float | None = None
    #: ``created_at`` of the oldest batch of the run (its ``gavel_run`` tag) read, if any.
    earliest: float | None = None

    def stopped_at(self) -> str:
        """Where the search stopped, for a message: ``the newest 20,000 batches (back to
        2025-05-01 12:00 UTC)``."""
        back = f" (back to {_when(self.reached)})" if self.reached is not None else ""
        return f"the newest {self.read:,} batches{back}"


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(seconds))


class BatchClient:
    """``client`` is an ``openai.OpenAI`` (``OpenAIChatModel.batch_client()``)."""

    def __init__(self, client: Any, redact=None, sleep=time.sleep, warn=None):
        self.client = client
        #: For the calls that must not be sent twice: one attempt each.
        self.once = client.with_options(max_retries=0)
        self.redact = redact or (lambda text: text)
        self.sleep = sleep
        self.warn = warn or (lambda text: click.echo(f"warning: {self.redact(text)}", err=True))
        #: The listings this server refused, with the status it answered.
        self.unlisted: dict[str, int] = {}
        #: The last search of the batches (:meth:`search`), what a lost create is judged by.
        self.last_search = Search()

    def _fail(self, what: str, error: Exception) -> GavelError:
        from gavel.transport.failures import classify

        cause = classify(error).cause
        return GavelError(self.redact(f"{what} at {self.client.base_url}: {cause}"))

    def _listed(self, listing: Callable[[], Any], limit: int, what: str) -> Iterator[Any]:
        """The entries of a paginated listing (``listing()`` asks for the first page), at most
        ``limit``, each once. Pages are followed while the server says there are more (an
        absent ``has_more`` counts as more, as the ``openai`` client takes it) and stop at a
        page that brings nothing new: a server that ignores ``after`` gives its first page
        again and again. A server that has no such listing (:data:`UNLISTED`) lists nothing,
        said once (:meth:`_unlisted`)."""
        if what in self.unlisted:  # asked once, not again
            return
        seen: set[Any] = set()
        try:
            page = listing()
            while True:
                fresh = [entry for entry in page.data or () if _id(entry) not in seen]
                for entry in fresh:
                    if len(seen) >= limit:
                        return
                    seen.add(_id(entry))
                    yield entry
                if not fresh or not page.has_next_page():
                    return
                page = page.get_next_page()
        except Exception as error:
            status = getattr(error, "status_code", None)
            if status in UNLISTED:
                self._unlisted(what, status)
                return
            raise self._fail(f"listing the {what} failed", error) from None

    def _unlisted(self, what: str, status: int) -> None:
        if what not in self.unlisted:
            self.unlisted[what] = status
            route = "batches" if what == "batches" else "files"
            then = {
                "batches": "a batch whose creation reply is lost cannot be found again (gavel "
                "then stops rather than create it a second time)",
            }.get(what, "a file whose upload reply is lost is uploaded again")
            self.warn(f"GET {self.client.base_url}{route} answered HTTP {status}: this server "
                      f"does not list its {what}; {then}")  # fmt: skip

    def find_file(self, name: str, size: int) -> str | None:
        """The id of an uploaded batch file named ``name`` of ``size`` bytes, or None."""
        listing = lambda: self.client.files.list(purpose="batch", limit=PAGE)  # noqa: E731
        for entry in self._listed(listing, SEARCH_FILES, "uploaded files"):
            if (
                getattr(entry, "filename", None) == name
                and getattr(entry, "bytes", None) == size
                and getattr(entry, "purpose", None) in (None, "batch")  # a filter not applied
                and getattr(entry, "status", None) not in ("error", "deleted")
            ):
                return entry.id
        return None

    def find_batch(self, wanted: Mapping[str, str], file_id: str | None = None,
                   known: Container[str] = (), since: float | None = None) -> Any | None:  # fmt: skip
        """:meth:`search`'s batch."""
        return self.search(wanted, file_id, known, since).batch

    def search(self, wanted: Mapping[str, str], file_id: str | None = None,
               known: Container[str] = (), since: float | None = None) -> Search:  # fmt: skip
        """Look for the batch tagged ``wanted`` (or, untagged, made from ``file_id``) that is
        not one of the ``known`` ones (recorded already: the same requests sent again after a
        batch that answered none of them). ``since``: no batch of the run is older (seconds,
        this machine's clock); the search stops once a newest-first listing is past it (less
        :data:`CLOCK_MARGIN`). Without it the listing is read to its end, and the oldest batch
        of the run is noted (:attr:`Search.earliest`). At most :data:`SEARCH_BATCHES` are read
        (:attr:`Search.complete` says whether that was enough); the newest match is taken."""
        listing = lambda: self.client.batches.list(limit=PAGE)  # noqa: E731
        bound = None if since is None else since - CLOCK_MARGIN
        run = wanted.get("gavel_run")
        found = Search()
        previous: float | None = None
        #: The order seen so far: newer after older (not newest first), older after newer.
        rising = falling = False
        limit = search_limit()
        for batch in self._listed(listing, limit, "batches"):
            found.read += 1
            created = _created(batch)
            if created is not None:
                if previous is not None:
                    rising, falling = rising or created > previous, falling or created < previous
                previous = found.reached = created
                metadata = getattr(batch, "metadata", None)
                if run and isinstance(metadata, dict) and metadata.get("gavel_run") == run:
                    found.earliest = min(created, found.earliest or created)
            if bound is not None and falling and not rising:  # newest first, so far
                past = created is not None and created < bound  # older than the run
                if past or found.batch is not None:  # or the newest match is in hand
                    break
            if batch.id not in known and _is_ours(batch, wanted, file_id):
                newer = found.batch is None or (created or 0) > (_created(found.batch) or 0)
                found.batch = batch if newer else found.batch
        else:
            found.complete = found.read < limit
        if found.batch is not None:
            found.complete = True
        self.last_search = found
        return found

    def _once(self, make, look, what: str, looks=LOOK_AFTER, blind=None):
        """``make()`` without repeating what the server already did: after a failed attempt,
        ``look()`` (after each pause of ``looks``) for what it may have made; ``(result,
        found)``. When ``blind()`` says why nothing could be looked for, a lost reply is not
        followed by another attempt: the error says so instead."""
        from gavel.transport.retry import is_retryable

        for attempt in range(1, ATTEMPTS + 1):
            try:
                return make(), False
            except Exception as error:
                # A refusal (4xx) is looked behind once; a lost reply a few times, apart.
                for pause in looks if is_retryable(error) else looks[:1]:
                    self.sleep(pause)
                    found = look()
                    if found is not None:
                        return found, True
                why = blind() if blind is not None and is_retryable(error) else None
                if why:
                    raise GavelError(f"{self._fail(what, error)}; {why}") from None
                if attempt == ATTEMPTS or not is_retryable(error):
                    raise self._fail(what, error) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def upload(self, path: Path, name: str) -> str:
        """The id of ``path`` uploaded as ``name`` (purpose ``batch``): a file of that name and
        size on the server already is taken, else it is uploaded."""
        size = path.stat().st_size
        found = self.find_file(name, size)
        if found is not None:
            return found

        def make() -> str:
            with path.open("rb") as handle:
                return self.once.files.create(file=(name, handle), purpose="batch").id

        file_id, _ = self._once(make, lambda: self.find_file(name, size),
                                f"uploading {path} failed", LOOK_AFTER_UPLOAD)  # fmt: skip
        return file_id

    def unsure(self, metadata: Mapping[str, str], file_id: str | None,
               since: float | None) -> str:  # fmt: skip
        """Why a batch that an attempt whose reply was lost may have made is not created
        again: the last search stopped at its cap (:attr:`Search.complete` false); the caller
        says what may have made it."""
        search = self.last_search
        reach = f" or coming back to {_when(since - CLOCK_MARGIN)}" if since else ""
        source = f" (input file {file_id})" if file_id else ""
        return (f"gavel read {search.stopped_at()} at {self.client.base_url}batches, as many "
                f"as it reads ({SEARCH_LIMIT_VARIABLE}), without finding it{reach}; it is not "
                "created again: look on the server for a batch with metadata gavel_run="
                f"{metadata.get('gavel_run')} and gavel_sha256={metadata.get('gavel_sha256')}"
                f"{source}, or rerun with a larger {SEARCH_LIMIT_VARIABLE}")  # fmt: skip

    def create(self, file_id: str, metadata: dict[str, str], known: Container[str] = (),
               since: float | None = None) -> tuple[Any, bool]:  # fmt: skip
        """The batch of ``file_id`` tagged ``metadata``, and whether it was found made (by an
        attempt whose reply was lost) rather than made now (``since``: as :meth:`search`)."""

        from gavel.transport.retry import status_of

        def make() -> Any:
            send = lambda **tagged: self.once.batches.create(  # noqa: E731
                input_file_id=file_id, endpoint=ENDPOINT, completion_window=WINDOW, **tagged
            )
            try:
                return send(metadata=metadata)
            except Exception as error:  # a server without batch metadata made nothing
                if status_of(error) not in (400, 422) or "metadata" not in str(error).lower():
                    raise
            self.warn(f"{self.client.base_url}batches refused the batch's metadata: created "
                      f"without it (found again after a lost reply by its input file "
                      f"{file_id})")  # fmt: skip
            return send()

        def blind() -> str | None:
            status = self.unlisted.get("batches")
            if status is None:
                if self.last_search.complete:
                    return None
                return f"the server may have made it, and {self.unsure(metadata, file_id, since)}"
            return (f"the server may have made it, and it cannot list its batches (GET "
                    f"{self.client.base_url}batches answered HTTP {status}) for gavel to tell: "
                    f"look for a batch of input file {file_id} on the server before running "
                    "again (a rerun creates it again)")  # fmt: skip

        look = lambda: self.find_batch(metadata, file_id, known, since)  # noqa: E731
        return self._once(make, look, "creating the batch failed", blind=blind)

    def retrieve(self, batch_id: str) -> Any:
        try:
            return self.client.batches.retrieve(batch_id)
        except Exception as error:
            raise self._fail(f"asking for batch {batch_id} failed", error) from None

    def cancel(self, batch_id: str) -> Any:
        try:
            return self.client.batches.cancel(batch_id)
        except Exception as error:
            raise self._fail(f"cancelling batch {batch_id} failed", error) from None

    def download(self, file_id: str) -> bytes:
        try:
            return self.client.files.content(file_id).read()
        except Exception as error:
            raise self._fail(f"downloading file {file_id} failed", error) from None
