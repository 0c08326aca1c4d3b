"""``gavel annotate init|user|serve|export|stats|check``: the three-stage annotation project."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gavel.api import annotation
from gavel.api.annotation import limits, parse_origin
from gavel.cli.options import FiniteFloat, folder_path, seed_type

if TYPE_CHECKING:
    from gavel.api.annotation import ImportSummary


@click.group()
def annotate() -> None:
    """Annotate candidate pairs in three stages: annotator, reviewer, spot checker.

    \b
    gavel annotate init --db project.sqlite --import scored.jsonl --images photos/
    gavel annotate user add --db project.sqlite --name ana --role annotator
    gavel annotate serve --db project.sqlite            http://127.0.0.1:8765
    gavel annotate export --db project.sqlite --out gavel.jsonl --split-by-image

    docs/annotate.md describes roles, workflow, security and the data model.
    """


_DB = click.option(
    "--db",
    "db_path",
    type=click.Path(path_type=Path),
    required=True,
    help="The project's SQLite file.",
)


@annotate.command()
@_DB
@click.option(
    "--import",
    "pairs",
    type=click.Path(path_type=Path),
    multiple=True,
    help="Pairs JSONL to add (from `gavel curate`); repeatable. Ids already present are skipped.",
)
@click.option(
    "--images",
    type=folder_path(file_okay=False),
    default=None,
    help="Folder the pairs' image paths are relative to [default: the pairs file's folder].",
)
@click.option(
    "--double",
    type=FiniteFloat(0, 1),
    default=0.0,
    show_default=True,
    help="Share of items annotated by two annotators independently (for agreement).",
)
@click.option(
    "--seed", type=seed_type(), default=0, show_default=True, help="Chooses the --double items."
)
def init(
    db_path: Path, pairs: tuple[Path, ...], images: Path | None, double: float, seed: int
) -> None:
    """Create the project (or open it) and import candidate pairs as items to annotate."""

    def imported(pairs_file: Path, summary: ImportSummary) -> None:
        skipped = f", {summary.existing} already there" if summary.existing else ""
        twice = f" ({summary.double} to be annotated twice)" if summary.double else ""
        click.echo(f"{pairs_file}: {summary.added} items added{twice}{skipped}", err=True)

    total = annotation.init_project(
        db_path, pairs, images=images, double=double, seed=seed, imported=imported
    )
    click.echo(f"{db_path}: {total} items", err=True)


@annotate.group()
def user() -> None:
    """Add, list, disable and enable people."""


@user.command("add")
@_DB
@click.option("--name", required=True)
@click.option("--role", type=click.Choice(["annotator", "reviewer", "checker"]), required=True)
def user_add(db_path: Path, name: str, role: str) -> None:
    """Add a person; prints their access token (shown once; only its hash is stored)."""
    token = annotation.add_user(db_path, name, role)
    click.echo(token)
    click.echo(
        f"added {role} {name!r}; give them the token above (it is not shown again)", err=True
    )


@user.command("list")
@_DB
def user_list(db_path: Path) -> None:
    """The people of the project and their roles."""
    for row in annotation.list_users(db_path):
        state = "" if row["active"] else "  (disabled)"
        click.echo(f"{row['name']}\t{row['role']}{state}")


@user.command("disable")
@_DB
@click.option("--name", required=True)
def user_disable(db_path: Path, name: str) -> None:
    """Revoke a person's token and end their sessions (their saved work stays)."""
    annotation.set_active(db_path, name, False)
    click.echo(f"disabled {name!r}", err=True)


@user.command("enable")
@_DB
@click.option("--name", required=True)
def user_enable(db_path: Path, name: str) -> None:
    """Let a disabled person log in again with their token."""
    annotation.set_active(db_path, name, True)
    click.echo(f"enabled {name!r}", err=True)


def _public_origin(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Checked while parsing, so a typo fails before anything is opened or bound."""
    if value is None:
        return None
    try:
        return parse_origin(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


#: The server's limits (docs/annotate.md, "Limits"): flag, type, default, help.
_LIMITS = [
    ("--request-seconds", FiniteFloat(0.1, 3600), limits.REQUEST_SECONDS,
     "A request's headers and body must arrive within this, or its connection is closed."),
    ("--max-connections", click.IntRange(1, 100_000), limits.MAX_CONNECTIONS,
     "Open connections beyond which requests are answered 503."),
    ("--max-connections-per-address", click.IntRange(1, 100_000), limits.MAX_PER_ADDRESS,
     "Open connections one client address may hold (more are answered 503 at once)."),
    ("--free-wrong-tokens", click.IntRange(1, 1_000_000), limits.FREE_WRONG_TOKENS,
     "Wrong tokens from one address answered 401 before it must wait (429)."),
    ("--free-wrong-tokens-network", click.IntRange(1, 1_000_000),
     limits.FREE_WRONG_TOKENS_NETWORK, "The same for a network (/24 IPv4, /64 IPv6)."),
    ("--free-wrong-tokens-all", click.IntRange(1, 1_000_000), limits.FREE_WRONG_TOKENS_ALL,
     "The same for all clients together."),
    ("--wrong-token-wait", FiniteFloat(0.01, 86_400), limits.FIRST_WAIT,
     "Seconds of the first wait; each further wrong token doubles it."),
    ("--wrong-token-max-wait", FiniteFloat(0.01, 86_400), limits.MAX_WAIT,
     "The longest wait, in seconds."),
    ("--wrong-token-forget", FiniteFloat(1, 10**7), limits.FORGET,
     "Seconds without a wrong token after which an address or network is forgotten."),
]  # fmt: skip


def _limit_options(command: Callable[..., Any]) -> Callable[..., Any]:
    for flag, kind, default, text in reversed(_LIMITS):
        command = click.option(flag, type=kind, default=default, show_default=True, help=text)(
            command
        )
    return command


@annotate.command()
@_DB
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; anything but loopback exposes the server to the network. A "
    "wildcard (0.0.0.0, ::) needs --allowed-host or --public-origin: requests are accepted only "
    "for host names the server knows.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="0 picks a free port (printed).",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    help="Extra Host header value to accept (e.g. a proxy's name); repeatable.",
)
@click.option(
    "--public-origin",
    callback=_public_origin,
    default=None,
    metavar="URL",
    help="The address browsers use when a TLS proxy is in front, e.g. "
    "https://annotate.example.org[:PORT]: cross-site checks compare with it, and cookies get "
    "Secure when it is https.",
)
@click.option("--access-log", is_flag=True, help="Log every request.")
@_limit_options
def serve(
    db_path: Path,
    host: str,
    port: int,
    allowed_hosts: tuple[str, ...],
    public_origin: str | None,
    access_log: bool,
    **limits: Any,
) -> None:
    """Serve the annotation web app (Ctrl+C stops it; every save is already on disk).

    \b
    Behind a TLS proxy (docs/annotate.md, "Behind a TLS proxy"):
    gavel annotate serve --db project.sqlite --public-origin https://annotate.example.org

    A valid token is always accepted; wrong ones are throttled per address, per network and
    for everyone (docs/annotate.md, "Limits").
    """
    if limits["max_connections_per_address"] > limits["max_connections"]:
        raise click.BadParameter(
            f"{limits['max_connections_per_address']} is above --max-connections "
            f"{limits['max_connections']}",
            param_hint="--max-connections-per-address",
        )
    annotation.serve(
        db_path,
        host=host,
        port=port,
        allowed_hosts=allowed_hosts,
        public_origin=public_origin,
        access_log=access_log,
        **limits,
    )


@annotate.command()
@_DB
@click.option("--out", type=click.Path(path_type=Path), required=True, help="GAVEL JSONL to write.")
@click.option(
    "--split-by-image",
    is_flag=True,
    help="Add train/test splits by image (also writes OUT.train.jsonl and OUT.test.jsonl).",
)
@click.option(
    "--test-fraction",
    type=FiniteFloat(0, 1),
    default=0.2,
    show_default=True,
    help="Share of images in the test split (on average: each image's split is fixed by a "
    "seeded hash of its path alone, so it never moves as images are added).",
)
@click.option(
    "--seed", type=seed_type(), default=0, show_default=True, help="Chooses the test images."
)
def export(db_path: Path, out: Path, split_by_image: bool, test_fraction: float, seed: int) -> None:
    """Write the reviewed items as GAVEL JSONL (checked with `gavel data validate`'s loader).

    A file that would hold no samples (nothing reviewed yet, an empty split) is not written; a
    warning says so.
    """
    summary = annotation.export(
        db_path, out, split_by_image=split_by_image, test_fraction=test_fraction, seed=seed
    )
    splits = ", ".join(f"{n} {name}" for name, n in sorted(summary.splits.items()))
    click.echo(
        f"{out}: {summary.samples} samples ({summary.hallucinated} with an error)"
        + (f"; {splits}" if splits else "")
        + (f"; {summary.unusable} unusable left out" if summary.unusable else "")
        + (f"; {summary.pending} items not reviewed yet" if summary.pending else ""),
        err=True,
    )
    for warning in summary.warnings:
        click.echo(f"warning: {warning}", err=True)
    root = summary.images_root
    if not summary.image_prefix and summary.samples and root != out.resolve().parent:
        click.echo(
            f"note: image paths are relative to {root}; pass --image-root {root} to gavel commands",
            err=True,
        )


@annotate.command()
@_DB
def stats(db_path: Path) -> None:
    """The dashboard's numbers as JSON: items per stage, throughput, agreement."""
    click.echo(json.dumps(annotation.stats(db_path), indent=2))


@annotate.command()
@_DB
def check(db_path: Path) -> None:
    """Check the database: SQLite integrity, and every item's head, stage and version chain."""
    import sys

    problems = annotation.check(db_path)
    for problem in problems:
        click.echo(f"problem: {problem}", err=True)
    if problems:
        sys.exit(1)
    click.echo(f"{db_path}: consistent")
