"""``gavel batch status RUN`` and ``gavel batch cancel RUN``: the batches a --batch run sent.

RUN is what the run wrote to: the predictions file (``pred.jsonl``: its batches are in
``pred.batch/``), a judge's replies file (``results.judge.jsonl``), a batch folder itself, or a
run folder of ``gavel run`` (every batch folder in it: the model's and the judge's).
"""

from __future__ import annotations

from pathlib import Path

import click

from gavel.errors import GavelError


def batch_folders(run: Path) -> list[Path]:
    """The batch folders RUN names (see the module's text)."""
    from gavel.batch.state import STATE_FILE, batch_folder

    if run.is_dir():
        if (run / STATE_FILE).is_file():
            return [run]
        found = sorted(p.parent for p in run.glob(f"*.batch/{STATE_FILE}"))
        if found:
            return found
        raise GavelError(f"{run}: no batches recorded here (no *.batch/{STATE_FILE})")
    folder = batch_folder(run)
    if not (folder / STATE_FILE).is_file():
        raise GavelError(f"{run}: no batches recorded for it (no {folder / STATE_FILE})")
    return [folder]


def _client(state, base_url: str | None, api_key_env: str | None):
    from gavel.batch.client import BatchClient
    from gavel.models.openai_compat import OpenAIChatModel

    model = OpenAIChatModel(state.model, base_urls=[base_url or state.base_url],
                            api_key_env=api_key_env or state.api_key_env)  # fmt: skip
    return BatchClient(model.batch_client(), model.redact)


def _server_options(command):
    command = click.option("--api-key-env", default=None,
                           help="Variable holding the key [default: the one the run used].")(command)  # fmt: skip
    command = click.option("--base-url", default=None,
                           help="The server [default: the one the run used].")(command)  # fmt: skip
    return click.argument("run", type=click.Path(path_type=Path))(command)


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
    from gavel.batch.poll import counts
    from gavel.batch.state import load_state

    for folder in batch_folders(run):
        state = load_state(folder)
        click.echo(f"{folder} ({state.kind}, {state.model} at {state.base_url}):")
        client = None
        for part in state.parts:
            line = f"  round {part.round} {part.name}: {part.count} requests"
            if part.batch_id is None:
                line += ", not yet created" if part.file_id else ", not yet uploaded"
            elif part.finished:
                line += f", batch {part.batch_id} {part.status}"
            else:
                client = client or _client(state, base_url, api_key_env)
                reply = client.retrieve(part.batch_id)
                done, failed, total = counts(reply)
                line += (f", batch {part.batch_id} {reply.status}: {done} done, {failed} "
                         f"failed of {total or part.count}")  # fmt: skip
            if part.merged:
                line += f"; merged: {part.answered} answered, {part.failed} to ask again"
            click.echo(line)


@batch.command()
@_server_options
def cancel(run: Path, base_url: str | None, api_key_env: str | None) -> None:
    """Cancel every batch of RUN still running; answers it already gave are merged by the
    next run of the same command, which asks the rest again."""
    from gavel.batch.state import load_state

    cancelled = 0
    for folder in batch_folders(run):
        state = load_state(folder)
        client = None
        for part in state.parts:
            if part.batch_id is None or part.finished:
                continue
            client = client or _client(state, base_url, api_key_env)
            reply = client.cancel(part.batch_id)  # the run records what it ends as
            cancelled += 1
            click.echo(f"batch {part.batch_id}: {reply.status}")
    if not cancelled:
        click.echo("no batch is running", err=True)
