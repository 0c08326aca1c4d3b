"""The annotation project as functions: what ``gavel annotate init|user|serve|export|stats|
check`` do (docs/annotate.md).

Each function opens the project's SQLite file for its one unit of work and closes it again, as
the command does, so a script can set a project up, add people, serve it and export the
reviewed items without holding a connection or knowing the schema.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gavel.annotate import limits
from gavel.annotate.security import parse_origin
from gavel.errors import ConfigError
from gavel.setting_checks import as_items, as_path

if TYPE_CHECKING:  # the records the functions give, imported only with their modules
    from gavel.annotate.export import ExportSummary as ExportSummary
    from gavel.annotate.store import ImportSummary as ImportSummary

__all__ = [
    "add_user",
    "check",
    "export",
    "init_project",
    "limits",
    "list_users",
    "parse_origin",
    "serve",
    "set_active",
    "stats",
]


def init_project(
    db_path: str | Path,
    pairs: str | Path | Sequence[str | Path] = (),
    *,
    images: str | Path | None = None,
    double: float = 0.0,
    seed: int = 0,
    imported: Callable[[Path, ImportSummary], None] | None = None,
) -> int:
    """Create the project (or open it) and import each pairs file as items to annotate; returns
    how many items the project holds.

    ``images`` is the folder the pairs' image paths are relative to (default: each pairs
    file's folder); ``double`` the share of new items two annotators annotate independently
    (chosen by ``seed``). ``imported`` hears of each file as soon as it is in: a later file
    that fails leaves the earlier ones imported.
    """
    from gavel.annotate import db
    from gavel.annotate.store import import_pairs, set_images_root

    db_file = as_path("--db", db_path)
    pairs_files = [as_path("--import", item) for item in as_items("--import", pairs)]
    root = None if images is None else as_path("--images", images)
    db_file.parent.mkdir(parents=True, exist_ok=True)
    conn = db.connect(db_file, create=True)
    try:
        if root is not None and not pairs_files:
            set_images_root(conn, db_file, root, root)
        # With pairs, each import records the folder in the transaction that adds its items:
        # a first import that fails must not leave the folder recorded.
        for pairs_file in pairs_files:
            summary = import_pairs(conn, db_file, pairs_file, root, double=double, seed=seed)
            if imported is not None:
                imported(pairs_file, summary)
        total: int = conn.execute("SELECT count(*) FROM items").fetchone()[0]
    finally:
        conn.close()
    return total


def add_user(db_path: str | Path, name: str, role: str) -> str:
    """Add a person (annotator, reviewer or checker); returns their access token, which is not
    kept (only its hash is stored)."""
    from gavel.annotate import db
    from gavel.annotate.users import add_user as add

    with db.opened(as_path("--db", db_path)) as conn:
        return add(conn, name, role)


def list_users(db_path: str | Path) -> list[Any]:
    """The people of the project in the order they were added (``name``, ``role``,
    ``active``, ``created``)."""
    from gavel.annotate import db
    from gavel.annotate.users import list_users as users

    with db.opened(as_path("--db", db_path)) as conn:
        return users(conn)


def set_active(db_path: str | Path, name: str, active: bool) -> None:
    """Disable a person (their token stops working, their sessions end, their work stays) or
    enable them again."""
    from gavel.annotate import db
    from gavel.annotate.users import set_active as update

    with db.opened(as_path("--db", db_path)) as conn:
        update(conn, name, active)


def serve(
    db_path: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    allowed_hosts: Sequence[str] = (),
    public_origin: str | None = None,
    access_log: bool = False,
    request_seconds: float = limits.REQUEST_SECONDS,
    max_connections: int = limits.MAX_CONNECTIONS,
    max_connections_per_address: int = limits.MAX_PER_ADDRESS,
    free_wrong_tokens: int = limits.FREE_WRONG_TOKENS,
    free_wrong_tokens_network: int = limits.FREE_WRONG_TOKENS_NETWORK,
    free_wrong_tokens_all: int = limits.FREE_WRONG_TOKENS_ALL,
    wrong_token_wait: float = limits.FIRST_WAIT,
    wrong_token_max_wait: float = limits.MAX_WAIT,
    wrong_token_forget: float = limits.FORGET,
) -> None:
    """Serve the annotation web app until interrupted (every save is on disk at once).

    The limits are those of ``gavel annotate serve`` by the flags' names (docs/annotate.md,
    "Limits"). A missing 'annotate' extra, or an address that cannot be listened on, is a
    :class:`~gavel.errors.ConfigError` saying so.
    """
    try:
        from gavel.annotate.server import serve as run_server
    except ImportError as error:
        raise ConfigError(
            f"the annotation server needs the 'annotate' extra: pip install 'gavel-eval[annotate]' ({error})"
        ) from None
    throttle = {
        "free": free_wrong_tokens,
        "free_network": free_wrong_tokens_network,
        "free_all": free_wrong_tokens_all,
        "first": wrong_token_wait,
        "cap": wrong_token_max_wait,
        "forget": wrong_token_forget,
    }
    try:
        run_server(
            as_path("--db", db_path),
            host=host,
            port=port,
            allowed_hosts=list(allowed_hosts),
            public_origin=public_origin,
            access_log=access_log,
            request_seconds=request_seconds,
            max_connections=int(max_connections),
            max_per_address=int(max_connections_per_address),
            throttle=throttle,
        )
    except OSError as error:
        raise ConfigError(f"cannot listen on {host}:{port} ({error})") from None


def export(
    db_path: str | Path,
    out: str | Path,
    *,
    split_by_image: bool = False,
    test_fraction: float = 0.2,
    seed: int = 0,
) -> ExportSummary:
    """Write the reviewed items to ``out`` as GAVEL JSONL (and, with ``split_by_image``, the
    train and test splits beside it); a file that would hold no samples is not written."""
    from gavel.annotate import db
    from gavel.annotate.export import export as write_export

    db_path = as_path("--db", db_path)
    with db.opened(db_path) as conn:
        return write_export(
            conn,
            db_path,
            as_path("--out", out),
            split_by_image=split_by_image,
            test_fraction=test_fraction,
            seed=seed,
        )


def stats(db_path: str | Path) -> dict[str, Any]:
    """The dashboard's numbers: items per stage, throughput, agreement."""
    from gavel.annotate import db
    from gavel.annotate.stats import dashboard

    with db.opened(as_path("--db", db_path)) as conn:
        return dashboard(conn)


def check(db_path: str | Path) -> list[str]:
    """What is wrong with the database (empty when sound): SQLite's integrity, and every
    item's head, stage and version chain."""
    from gavel.annotate import db
    from gavel.annotate.store import check_consistency

    with db.opened(as_path("--db", db_path)) as conn:
        return check_consistency(conn)
