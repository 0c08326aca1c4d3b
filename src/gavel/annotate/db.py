"""The annotation project's SQLite file: schema, connections and transactions.

Why it is built this way:

- **Nothing is lost.** Every annotation, review and check is a new row of ``versions`` (who,
  when, the full annotation as JSON, and the version it was based on). Triggers make that table
  append-only: SQLite itself refuses an UPDATE or DELETE of a version, whatever code asks.
  ``items`` only points at its latest version (``head``) and records the stage it is in.
  ``INSERT OR REPLACE`` (and ``REPLACE``) would get round those triggers, since SQLite deletes
  the replaced row without firing delete triggers by default: BEFORE INSERT triggers refuse an
  insert that names an existing version or item, and every connection sets
  ``recursive_triggers`` so that such a deletion fires the delete triggers as well (the latter
  also guards files made before the insert triggers existed; ``init`` adds those to them).
- **Crash safety.** Every write is one ``BEGIN IMMEDIATE`` transaction; the database is in WAL
  mode with ``synchronous=FULL``, so a process killed mid-write leaves the last committed state
  and a committed save survives even a power cut.
- **No migrations.** The schema carries a version number; a file from another schema version is
  refused with a clear message instead of being altered.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gavel.errors import ConfigError

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS users (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL CHECK (role IN ('annotator', 'reviewer', 'checker')),
    token_sha256 TEXT NOT NULL UNIQUE,
    active INTEGER NOT NULL DEFAULT 1,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    id_sha256 TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id),
    csrf TEXT NOT NULL,
    created REAL NOT NULL,
    expires REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS items (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    image TEXT NOT NULL,
    caption TEXT NOT NULL,
    width INTEGER NOT NULL CHECK (width > 0),
    height INTEGER NOT NULL CHECK (height > 0),
    source TEXT,
    direction TEXT,
    alignment REAL,
    alignment_reason TEXT,
    needed INTEGER NOT NULL DEFAULT 1 CHECK (needed IN (1, 2)),
    stage TEXT NOT NULL DEFAULT 'annotate'
        CHECK (stage IN ('annotate', 'review', 'reviewed', 'checked')),
    head INTEGER REFERENCES versions(id),
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS items_stage ON items(stage, id);
CREATE TABLE IF NOT EXISTS versions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    item_id INTEGER NOT NULL REFERENCES items(id),
    stage TEXT NOT NULL CHECK (stage IN ('annotate', 'review', 'check')),
    action TEXT NOT NULL
        CHECK (action IN ('annotate', 'annotate-second', 'accept', 'correct', 'pass')),
    author_id INTEGER NOT NULL REFERENCES users(id),
    created REAL NOT NULL,
    payload TEXT NOT NULL,
    base_version INTEGER REFERENCES versions(id)
);
CREATE INDEX IF NOT EXISTS versions_item ON versions(item_id, id);
CREATE INDEX IF NOT EXISTS versions_author ON versions(author_id, created);
CREATE TRIGGER IF NOT EXISTS versions_append_only_update BEFORE UPDATE ON versions
BEGIN SELECT RAISE(ABORT, 'versions are append-only'); END;
CREATE TRIGGER IF NOT EXISTS versions_append_only_delete BEFORE DELETE ON versions
BEGIN SELECT RAISE(ABORT, 'versions are append-only'); END;
CREATE TRIGGER IF NOT EXISTS items_content_fixed
BEFORE UPDATE OF key, image, caption, width, height ON items
BEGIN SELECT RAISE(ABORT, 'an item''s image and sentence never change'); END;
CREATE TRIGGER IF NOT EXISTS items_keep BEFORE DELETE ON items
BEGIN SELECT RAISE(ABORT, 'items are never deleted'); END;
CREATE TRIGGER IF NOT EXISTS versions_no_replace BEFORE INSERT ON versions
WHEN EXISTS (SELECT 1 FROM versions WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'versions are append-only'); END;
CREATE TRIGGER IF NOT EXISTS items_no_replace BEFORE INSERT ON items
WHEN EXISTS (SELECT 1 FROM items WHERE id = NEW.id OR key = NEW.key)
BEGIN SELECT RAISE(ABORT, 'items are never replaced'); END;
CREATE TABLE IF NOT EXISTS assignments (
    item_id INTEGER NOT NULL REFERENCES items(id),
    stage TEXT NOT NULL,
    user_id INTEGER NOT NULL REFERENCES users(id),
    claimed REAL NOT NULL,
    PRIMARY KEY (item_id, stage, user_id)
);
"""


def connect(path: str | Path, *, create: bool = False) -> sqlite3.Connection:
    """Open the project database (autocommit; transactions are explicit, see :func:`write`).

    Raises :class:`ConfigError` when the file is missing (unless ``create``) or has another
    schema version.
    """
    path = Path(path)
    if not create and not path.is_file():
        raise ConfigError(
            f"annotation project {path} not found; create it with `gavel annotate init`"
        )
    try:
        return _open(path, create)
    except sqlite3.DatabaseError as error:  # not SQLite, a folder, unreadable: say which file
        if "not a database" in str(error):
            raise ConfigError(f"{path} is not a gavel annotation project (not SQLite)") from None
        raise ConfigError(f"{path}: cannot open the annotation project ({error})") from None


def _open(path: Path, create: bool) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=30, check_same_thread=False)
    try:
        return _prepare(conn, path, create)
    except BaseException:
        conn.close()
        raise


def _prepare(conn: sqlite3.Connection, path: Path, create: bool) -> sqlite3.Connection:
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout = 30000")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA recursive_triggers = ON")  # REPLACE's deletions fire delete triggers
    if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    if create:
        # One script, one transaction: a crash leaves no half-made schema.
        conn.executescript(
            "BEGIN IMMEDIATE;" + _SCHEMA + "INSERT OR IGNORE INTO meta(key, value) "
            f"VALUES ('schema_version', '{SCHEMA_VERSION}'); COMMIT;"
        )
    version = get_meta(conn, "schema_version")
    if version != str(SCHEMA_VERSION):
        raise ConfigError(
            f"{path} is not a gavel annotation project of schema version {SCHEMA_VERSION} "
            f"(found {version or 'none'})"
        )
    return conn


@contextmanager
def write(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction, taken at once (``BEGIN IMMEDIATE``) so two writers never
    interleave their reads and writes: committed whole, or rolled back whole."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


@contextmanager
def read(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One read transaction: every query inside sees the same committed state (WAL gives a
    reader a snapshot), so numbers read by two queries never mix two moments."""
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        conn.execute("COMMIT")


@contextmanager
def opened(path: str | Path) -> Iterator[sqlite3.Connection]:
    """A connection for one unit of work (the web app opens one per request)."""
    conn = connect(path)
    try:
        yield conn
    finally:
        conn.close()


def get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    except sqlite3.OperationalError:  # not a project file at all
        return None
    return row[0] if row else None


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def images_root(conn: sqlite3.Connection, db_path: str | Path) -> Path:
    """The images folder; stored relative to the database's folder so a project can move."""
    stored = get_meta(conn, "images_root")
    if stored is None:
        raise ConfigError(
            "the project has no images folder; run `gavel annotate init --images DIR`"
        )
    return Path(os.path.normpath(Path(db_path).resolve().parent / stored))


def now() -> float:
    return time.time()
