"""``gavel batch status RUN`` and ``gavel batch cancel RUN``: the batches a --batch run sent.

What RUN may name, and which server and key variable are used, is
:func:`gavel.api.batches.status`'s; this module turns flags into its arguments and prints.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from gavel.api.batches import BatchFolder, PartStatus
from gavel.api.batches import cancel as cancel_batches
from gavel.api.batches import status as batch_status


def _server_options(command: Callable[..., Any]) -> Callable[..., Any]:
    command = click.option("--api-key-env", default=None,
                           help="Variable holding the key [default: OPENAI_API_KEY, or the run's when its "
                           "manifest names it].")(command)  # fmt: skip
    command = click.option("--base-url", default=None,
                           help="The server [default: the run's, when its manifest or OPENAI_BASE_URL "
                           "names it].")(command)  # fmt: skip
    return click.argument("run", type=click.Path(path_type=Path))(command)


def _part_line(record: PartStatus) -> str:
    part = record.part
    line = f"  round {part.round} {part.name}: {part.count} requests"
    if part.batch_id is None:
        line += ", not yet created" if part.file_id else ", not yet uploaded"
    elif record.live is None:
        line += f", batch {part.batch_id} {part.status}"
    else:
        status, done, failed, total = record.live
        line += (f", batch {part.batch_id} {status}: {done} done, {failed} "
                 f"failed of {total or part.count}")  # fmt: skip
    if part.merged:
        line += f"; merged: {part.answered} answered, {part.failed} to ask again"
    return line


@click.group()
def batch() -> None:
    """The batches of a --batch run: their status on the server, or cancel them.

    RUN is the predictions file (or a judge's replies file) the run wrote, or a run folder of
    `gavel run`. A batch that is cancelled, expired or failed is asked again by the next run
    of the same command (docs/running.md#batch-apis).
    """


@batch.command()
@_server_options
def status(run: Path, base_url: str | None, api_key_env: str | None) -> None:
    """Each batch: its requests, status, and what the server has finished so far."""
    for record in batch_status(run, base_url=base_url, api_key_env=api_key_env):
        if isinstance(record, BatchFolder):
            click.echo(f"{record.folder} ({record.kind}, {record.model} at {record.base_url}):")
        else:
            click.echo(_part_line(record))


@batch.command()
@_server_options
def cancel(run: Path, base_url: str | None, api_key_env: str | None) -> None:
    """Cancel every batch of RUN still running; answers it already gave are merged by the
    next run of the same command, which asks the rest again."""
    cancelled = 0
    for record in cancel_batches(run, base_url=base_url, api_key_env=api_key_env):
        cancelled += 1
        click.echo(f"batch {record.batch_id}: {record.status}")
    if not cancelled:
        click.echo("no batch is running", err=True)
