"""Waiting for a batch: its status asked every few seconds, with a progress bar on a terminal.

The bar (rich, as the online runner's) shows the requests the server says it has finished and
failed; off a terminal each change of status is one line on stderr, so a log shows what the
batch went through. Ctrl-C only stops the waiting: the batch goes on on the server, and the
same command later collects it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import click

from gavel.batch.state import TERMINAL


def counts(batch: Any) -> tuple[int, int, int]:
    """(finished, failed, total) as the server reports them (0 when it says nothing)."""
    given = getattr(batch, "request_counts", None)
    done = getattr(given, "completed", 0) or 0
    failed = getattr(given, "failed", 0) or 0
    total = getattr(given, "total", 0) or 0
    return done, failed, total


def wait(
    retrieve: Callable[[], Any],
    label: str,
    total: int,
    interval: float,
    progress: bool,
    on_change: Callable[[Any], None] | None = None,
) -> Any:
    """Ask ``retrieve()`` until the batch is in a terminal status; returns the last reply.
    ``on_change`` is called with every reply whose status differs from the one before."""
    from rich.console import Console

    console = Console(stderr=True)
    bar = _bar(console) if progress and console.is_terminal else None
    task = bar.add_task(label, total=total, status="") if bar else None
    last = None
    try:
        if bar:
            bar.start()
        while True:
            batch = retrieve()
            done, failed, reported = counts(batch)
            if batch.status != last:
                last = batch.status
                if on_change is not None:
                    on_change(batch)
                if bar is None:
                    click.echo(f"{label}: {batch.status} ({done + failed}/{reported or total} "
                               f"done, {failed} failed)", err=True)  # fmt: skip
            if bar is not None:
                bar.update(task, completed=done + failed, total=reported or total,
                           status=f"{batch.status}  failed {failed}")  # fmt: skip
            if batch.status in TERMINAL:
                return batch
            time.sleep(interval)
    finally:
        if bar:
            bar.stop()


def _bar(console):
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[status]}"),
        console=console,
        transient=True,
    )
