"""A content-addressed answer cache in SQLite: the same question to the same model is sent once.

The key is the SHA-256 of the adapter, the endpoint, the model name, every setting that changes
answers (``model.settings()``) and the full request: sample id, task, prompt, text fields and the
SHA-256 of every image or video file's bytes. Changing any of them (a new prompt template, a
re-encoded image, another temperature) is a miss. The value is the answer text, token usage,
image sizes, the server's finish reason and, for an answer that came from a repair re-ask (a
judge's reply asked again with the repair instruction, :mod:`gavel.runner.validating`), how
many re-asks it took, so an answer served from the cache is marked as the one first written
was (``meta.repaired``). Both are columns added to older files when they are opened; their
entries have none. Only successful answers are stored, never errors.

The database is in WAL mode and every entry is committed on its own, so a crash loses at most
the entry being written, readers never block the writer, and several processes may share one
file (SQLite serializes their writes; ``busy_timeout`` waits for the lock).

With a temperature above zero a hit returns the answer sampled the first time, which is what
makes a rerun reproducible; delete the file (or use another one) to sample afresh.

The cache only saves requests; the output file is the record. So a cache that cannot be opened
(a full disk, a read-only folder) stops the run before anything is sent, naming the file
(:class:`CacheUnavailable`), and one that fails during the run (its disk filled up) is said
once and left alone: the run goes on without storing (or finding) answers there, and loses
none of the answers it was sent.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from gavel.errors import DataError, GavelError
from gavel.io.line_ranges import file_sha256
from gavel.requests import Answer, Model, Request

log = logging.getLogger(__name__)

#: Bumped when the key's layout changes, so old entries can never be mistaken for new ones.
KEY_VERSION = 1
_HASHES_KEPT = 4096


def default_cache() -> Path:
    """Where answers of remote models (and a judge's replies) are cached: $GAVEL_CACHE_DIR or
    ~/.cache/gavel."""
    root = os.environ.get("GAVEL_CACHE_DIR") or Path.home() / ".cache" / "gavel"
    return Path(root) / "answers.sqlite"


_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    usage TEXT NOT NULL,
    sent_size TEXT,
    input_size TEXT,
    model TEXT,
    created REAL NOT NULL,
    finish_reason TEXT,
    repaired INTEGER
)
"""
#: Columns added after the first layout, in order: older files gain them when opened.
_ADDED = (("finish_reason", "TEXT"), ("repaired", "INTEGER"))


def model_identity(model: Model) -> str:
    """The part of the key that depends on the model only (computed once per run)."""
    settings = model.settings()
    adapter = settings.get("adapter") or f"{type(model).__module__}.{type(model).__qualname__}"
    return _canonical(
        {
            "version": KEY_VERSION,
            "adapter": adapter,
            "endpoint": getattr(model, "endpoint", None),
            "model": model.name,
            "settings": settings,
        }
    )


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _memo(path: Path) -> tuple[str, int, int] | None:
    """What a file's remembered hash is found by (its real path, size and modification
    time); None when it cannot be read."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return str(path.resolve()), stat.st_size, stat.st_mtime_ns


class CacheUnavailable(GavelError):
    """The cache's file cannot be opened; the message names it and says what SQLite said."""


def _words(error: sqlite3.Error) -> str:
    """What SQLite said, with the file system's reason where SQLite gives none of its own."""
    text = str(error) or type(error).__name__
    if getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
        return "the disk is full (database or disk is full)"
    return text


class AnswerCache:
    """Open with ``AnswerCache(path)``; :meth:`key`, :meth:`get`, :meth:`put`, :meth:`close`."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(
                self.path, timeout=30.0, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as error:
            raise self._unavailable(error) from None
        try:
            self._prepare()
        except sqlite3.Error as error:
            self._db.close()
            raise self._unavailable(error) from None
        self._hashes: OrderedDict[tuple[str, int, int], str] = OrderedDict()
        self.hits = 0
        self.misses = 0
        #: Whether answers are still looked up, and stored, here (a failing file is left).
        self.reading = self.storing = True

    def _prepare(self) -> None:
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(answers)")}
        for name, kind in _ADDED:
            if name not in columns:  # a file written before the column existed
                with contextlib.suppress(sqlite3.OperationalError):  # another process just did
                    self._db.execute(f"ALTER TABLE answers ADD COLUMN {name} {kind}")

    def _unavailable(self, error: sqlite3.Error) -> CacheUnavailable:
        return CacheUnavailable(
            f"{self.path}: the answer cache cannot be opened: {_words(error)}. Free some "
            "space, or give another cache file (--cache, --judge-cache) or none (--no-cache, "
            "--no-judge-cache)"
        )

    def _left(self, doing: str, error: sqlite3.Error) -> None:
        """Stop using the file for ``doing`` (``storing``, ``reading``), said once."""
        if self.reading and self.storing:
            log.warning("%s: the answer cache failed while %s answers: %s; the run goes on "
                        "without it (every answer is kept in the output file)",
                        self.path, doing, _words(error))  # fmt: skip
        self.storing = False
        if doing == "reading":
            self.reading = False

    def __enter__(self) -> AnswerCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock, contextlib.suppress(sqlite3.Error):  # what was committed is kept
            self._db.close()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def key(self, identity: str, request: Request) -> str:
        """The entry's key: ``identity`` from :func:`model_identity`, then the request.

        A request's ``followup`` (the refused reply and the repair instruction of a re-ask) is
        left out on purpose: a re-ask is the same question asked again, and the answer it gets
        once accepted is that question's answer. So a batch round that re-asks online or in
        the next batch stores it where a later run of the plain request finds it (marked
        ``repaired``), and a re-ask is never sent for a question the cache has answered."""
        described: dict[str, Any] = {
            "sample_id": request.sample_id,
            "task": request.task,
            "prompt": request.prompt,
            "fields": request.fields,
            "images": [self.file_sha256(Path(path)) for path in request.images],
        }
        if request.system is not None:  # only when set, so older keys stay valid
            described["system"] = request.system
        digest = hashlib.sha256(identity.encode())
        digest.update(b"\0")
        digest.update(_canonical(described).encode())
        return digest.hexdigest()

    def key_if_hashed(self, identity: str, request: Request) -> str | None:
        """:meth:`key`, when every file of the request was hashed already (else None: hashing
        reads whole files, which is for a thread, not the event loop)."""
        for path in request.images:
            memo = _memo(Path(path))
            if memo is not None and memo not in self._hashes:
                return None
        return self.key(identity, request)

    def file_sha256(self, path: Path) -> str:
        """A file's SHA-256, remembered by path, size and modification time."""
        memo = _memo(path)
        if memo is None:
            return f"missing:{path}"  # the model will fail on it; never a hit for a real file
        with self._lock:
            if memo in self._hashes:
                self._hashes.move_to_end(memo)
                return self._hashes[memo]
        try:
            value = file_sha256(path)  # a FIFO or a device is refused, not read forever
        except DataError:
            return f"unreadable:{path}"  # the model fails on it, naming it; never a hit
        with self._lock:
            self._hashes[memo] = value
            if len(self._hashes) > _HASHES_KEPT:
                self._hashes.popitem(last=False)
        return value

    def get(self, key: str) -> Answer | None:
        if not self.reading:
            self.misses += 1
            return None
        try:
            with self._lock:
                row = self._db.execute(
                    "SELECT text, usage, sent_size, input_size, finish_reason, repaired FROM "
                    "answers WHERE key = ?",
                    (key,),
                ).fetchone()
        except sqlite3.Error as error:
            self._left("reading", error)
            row = None
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        text, usage, sent, given, finish_reason, repaired = row
        return Answer(
            text,
            sent_size=tuple(json.loads(sent)) if sent else None,
            input_size=tuple(json.loads(given)) if given else None,
            usage=json.loads(usage),
            finish_reason=finish_reason,
            meta={"repaired": repaired} if repaired else None,
        )

    def put(self, key: str, answer: Answer, model: str | None = None) -> None:
        """Store one answer, committed at once (nothing, once storing failed)."""
        if not self.storing:
            return
        row = (
            key,
            answer.text,
            json.dumps(answer.usage),
            json.dumps(list(answer.sent_size)) if answer.sent_size else None,
            json.dumps(list(answer.input_size)) if answer.input_size else None,
            model,
            time.time(),
            answer.finish_reason,
            int((answer.meta or {}).get("repaired") or 0) or None,
        )
        try:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO answers (key, text, usage, sent_size, input_size, "
                    "model, created, finish_reason, repaired) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
        except sqlite3.Error as error:
            self._left("storing", error)
