"""The batches a ``--batch`` run sent: their status on the server, or cancelling them.

What ``gavel batch status|cancel RUN`` does, as records a caller prints or inspects. Both are
generators: each record comes as soon as its server reply does, so a caller shows the batches
already asked about before a later reply fails. RUN, and which server and key variable are
used, are as :mod:`gavel.batch.runs` says.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gavel.batch.client import BatchClient
    from gavel.batch.state import Part

__all__ = ["BatchFolder", "Cancelled", "PartStatus", "cancel", "status"]


@dataclass(frozen=True)
class BatchFolder:
    """One batch folder of the run, before its parts: what it asks and where."""

    folder: Path
    kind: str
    model: str
    base_url: str


@dataclass(frozen=True)
class PartStatus:
    """One part of a batch folder; ``live`` holds the server's ``(status, done, failed,
    total)`` for a batch still running (``None`` when the state file already says it all)."""

    part: Part
    live: tuple[str, int, int, int] | None = None


@dataclass(frozen=True)
class Cancelled:
    """A running batch asked to stop, with the status the server answered."""

    batch_id: str
    status: str


def status(
    run: str | Path, *, base_url: str | None = None, api_key_env: str | None = None
) -> Iterator[BatchFolder | PartStatus]:
    """Each batch folder RUN names, then each of its parts; only unfinished batches are asked
    of the server (one client per folder, made when first needed)."""
    from gavel.batch.poll import counts
    from gavel.batch.runs import batch_folders, client, recorded_state

    for folder in batch_folders(Path(run)):
        state = recorded_state(folder)
        yield BatchFolder(folder, state.kind, state.model, state.base_url)
        asked: BatchClient | None = None
        for part in state.parts:
            if part.batch_id is None or part.finished:
                yield PartStatus(part)
                continue
            asked = asked or client(folder, state, base_url, api_key_env)
            reply = asked.retrieve(part.batch_id)
            yield PartStatus(part, (reply.status, *counts(reply)))


def cancel(
    run: str | Path, *, base_url: str | None = None, api_key_env: str | None = None
) -> Iterator[Cancelled]:
    """Cancel every batch of RUN still running; answers it already gave are merged by the next
    run of the same command, which asks the rest again (the run records what each ends as)."""
    from gavel.batch.runs import batch_folders, client, recorded_state

    for folder in batch_folders(Path(run)):
        state = recorded_state(folder)
        asked: BatchClient | None = None
        for part in state.parts:
            if part.batch_id is None or part.finished:
                continue
            asked = asked or client(folder, state, base_url, api_key_env)
            yield Cancelled(part.batch_id, asked.cancel(part.batch_id).status)
