"""``gavel batch status RUN`` and ``gavel batch cancel RUN``: the batches a --batch run sent.

RUN is what the run wrote to: the predictions file (``pred.jsonl``: its batches are in
``pred.batch/``), a judge's replies file (``results.judge.jsonl``), a batch folder itself, or a
run folder of ``gavel run`` (every batch folder in it: the model's and the judge's).

The API key goes only where this call says: a state file is data, and alone never chooses the
server the key is sent to or the variable it is read from. The server is ``--base-url``, else
the one in ``state.json`` when ``OPENAI_BASE_URL``, the run's manifest (``pred.manifest.json``,
or a judge's ``results.json``) or the OpenAI default agree with it; the variable is
``--api-key-env``, else ``OPENAI_API_KEY``, else the one in ``state.json`` when the manifest
agrees. Anything else is refused with the flags to give.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gavel.errors import GavelError

if TYPE_CHECKING:
    from gavel.batch.state import BatchState


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


def _recorded_state(folder: Path) -> BatchState:
    """The folder's batch state; one message if it went away since it was found (a run
    that finished and cleaned up meanwhile)."""
    from gavel.batch.state import STATE_FILE, load_state

    state = load_state(folder)
    if state is None:
        raise GavelError(f"{folder}: no batches recorded here any more (no {STATE_FILE})")
    return state


def _manifest_server(folder: Path, state) -> tuple[list[str], str | None]:
    """The base URLs and key variable the run's manifest records (none when it has none
    yet: a first run still waiting)."""
    from gavel.manifest import run_manifest_path

    if Path(state.output).name != state.output or state.output in ("", ".", ".."):
        return [], None  # not a file beside the folder: no manifest read through it
    output = folder.parent / state.output
    if state.kind == "judge":
        path = output.with_name(state.output.removesuffix(".judge.jsonl") + ".json")
    else:
        path = run_manifest_path(output)
    try:
        data = json.loads(path.read_bytes())
        settings = (data.get("manifest", data).get("judge") or {}).get("model", {}) if (
            state.kind == "judge") else data.get("adapter", {})  # fmt: skip
        urls = settings.get("base_urls") or []
        key = settings.get("api_key_env")
        return [u for u in urls if isinstance(u, str)], key if isinstance(key, str) else None
    except (OSError, ValueError, AttributeError):
        return [], None


def _server(folder: Path, state, base_url: str | None,
            api_key_env: str | None) -> tuple[str, str]:  # fmt: skip
    """Where this call sends the key, and the variable it reads it from (see the module's
    text); a :class:`GavelError` when ``state.json`` alone would choose."""
    from gavel.manifest import redact_userinfo
    from gavel.models.openai_compat import DEFAULT_BASE_URL

    where = folder / "state.json"
    urls, key = _manifest_server(folder, state)
    agreed = {DEFAULT_BASE_URL, (os.environ.get("OPENAI_BASE_URL") or "").rstrip("/"), *urls}
    url = base_url or state.base_url
    if base_url is None and redact_userinfo(state.base_url.rstrip("/")) not in agreed:
        raise GavelError(
            f"{where}: its base_url {redact_userinfo(state.base_url)!r} is not the run's "
            "(no manifest or OPENAI_BASE_URL names it), and a state file alone never chooses "
            "where the API key goes: give --base-url (and --api-key-env) to ask that server"
        )
    variable = api_key_env or state.api_key_env
    if api_key_env is None and variable not in ("OPENAI_API_KEY", key):
        raise GavelError(
            f"{where}: its api_key_env {variable!r} is not the run's (no manifest names it), "
            "and a state file alone never chooses which key is sent: give --api-key-env "
            f"{variable} to send that variable's key"
        )
    return url, variable


def _client(folder: Path, state, base_url: str | None, api_key_env: str | None):
    from gavel.batch.client import BatchClient
    from gavel.models.openai_compat import OpenAIChatModel

    url, variable = _server(folder, state, base_url, api_key_env)
    model = OpenAIChatModel(state.model, base_urls=[url], api_key_env=variable)
    return BatchClient(model.batch_client(), model.redact)


def _server_options(command):
    command = click.option("--api-key-env", default=None,
                           help="Variable holding the key [default: OPENAI_API_KEY, or the run's when its "
                           "manifest names it].")(command)  # fmt: skip
    command = click.option("--base-url", default=None,
                           help="The server [default: the run's, when its manifest or OPENAI_BASE_URL "
                           "names it].")(command)  # fmt: skip
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

    for folder in batch_folders(run):
        state = _recorded_state(folder)
        click.echo(f"{folder} ({state.kind}, {state.model} at {state.base_url}):")
        client = None
        for part in state.parts:
            line = f"  round {part.round} {part.name}: {part.count} requests"
            if part.batch_id is None:
                line += ", not yet created" if part.file_id else ", not yet uploaded"
            elif part.finished:
                line += f", batch {part.batch_id} {part.status}"
            else:
                client = client or _client(folder, state, base_url, api_key_env)
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
    cancelled = 0
    for folder in batch_folders(run):
        state = _recorded_state(folder)
        client = None
        for part in state.parts:
            if part.batch_id is None or part.finished:
                continue
            client = client or _client(folder, state, base_url, api_key_env)
            reply = client.cancel(part.batch_id)  # the run records what it ends as
            cancelled += 1
            click.echo(f"batch {part.batch_id}: {reply.status}")
    if not cancelled:
        click.echo("no batch is running", err=True)
