"""Items and their versions: import, handing out work, saving with optimistic concurrency.

The three stages of the GAVEL paper (section 2.2) are the item's ``stage``:

``annotate`` -> (annotator) -> ``review`` -> (reviewer accepts or corrects) -> ``reviewed``
-> (checker, on a random sample: passes or corrects) -> ``checked``.

A save names the version it was based on (the item's ``head`` when the page was opened). If
another save happened since, it is refused with :class:`Conflict`, naming who saved what and
when, so two people never overwrite each other silently. Annotators are the exception by
design: they never see each other's work (an item may be marked for two independent
annotations, to measure agreement), so their saves are accepted while the item still needs an
annotation from them and refused once it has all it needs.

The item's stage is checked against the user's role before anything else, so a refusal never
tells someone about an item that is not theirs to see: outside their stage they get
:class:`Forbidden` and no details. The one exception is the race the conflict message is for:
a reviewer or checker whose ``base_version`` was superseded by a save of their own stage (the
item moved on while they had it open) learns who made that save and when, which is what they
would have seen had they reloaded a moment earlier. Annotators are never told who else
annotated an item.

Accepting or passing stores the previous version unchanged (plus a note); one that carries an
annotation differing from that version is refused instead of silently dropping the edit.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gavel.annotate import payload
from gavel.annotate.db import get_meta, images_root, now, set_meta, write
from gavel.annotate.users import User
from gavel.curate.images import image_size, resolve_image
from gavel.curate.pairs import Pair, read_pairs
from gavel.errors import ConfigError, DataError

#: An item handed to someone stays theirs this long unless they save it (then it moves on).
LEASE_SECONDS = 30 * 60
#: Test hook: seconds to pause inside a save's transaction, between writing the version and
#: moving the item (lets a test kill the server mid-write). Never set it in real use.
FAULT_DELAY_ENV = "GAVEL_ANNOTATE_FAULT_DELAY"

ACTIONS = {
    "annotator": ("annotate",),
    "reviewer": ("accept", "correct"),
    "checker": ("pass", "correct"),
}
VERSION_STAGE = {"annotator": "annotate", "reviewer": "review", "checker": "check"}
#: What browsers display, by suffix. Anything else (TIFF above all, common in photo archives)
#: could be imported but never shown on the item page, so import refuses it.
MEDIA_TYPES = {
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".png": "image/png",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
    ".gif": "image/gif",
}
NEXT_STAGE = {"annotator": "review", "reviewer": "reviewed", "checker": "checked"}


class Conflict(Exception):
    """Someone else saved the item after it was opened; nothing was written."""

    def __init__(self, message: str, latest: dict[str, Any] | None = None):
        super().__init__(message)
        self.latest = latest


class Forbidden(Exception):
    """The item is not in the user's stage (or does not exist for them)."""


@dataclass
class ImportSummary:
    added: int = 0
    existing: int = 0
    double: int = 0


@dataclass
class Saved:
    version: int
    stage: str
    action: str


@dataclass
class ItemView:
    """What the page of an item shows one user."""

    id: int
    key: str
    caption: str
    width: int
    height: int
    stage: str
    base_version: int | None
    annotation: dict[str, Any] | None
    history: list[dict[str, Any]] = field(default_factory=list)
    source: str | None = None
    alignment: float | None = None
    alignment_reason: str | None = None


def import_pairs(
    conn: sqlite3.Connection,
    db_path: str | Path,
    pairs_file: str | Path,
    images: str | Path | None,
    *,
    double: float = 0.0,
    seed: int = 0,
) -> ImportSummary:
    """Add the pairs of a pairs (or GAVEL) file as items; ids already present are skipped.

    Every image must be a file inside the images folder that browsers can show (its size is
    read from it); ``double`` is the share of new items, chosen by a seeded hash of their id,
    that get two independent annotations.

    Everything is checked, and every new image's header read, before the one write
    transaction; that transaction then records the images folder (on first use) together with
    the items. So a failed import leaves the project exactly as it was (a first import that
    fails does not pin the wrong folder), and the write lock, which blocks every save in the
    web app, is held for the inserts only, not while thousands of image files are opened.
    """
    if not 0 <= double <= 1:
        raise ConfigError("--double is a fraction between 0 and 1")
    root = _images_folder(images, Path(pairs_file).parent)
    _check_images_root(conn, db_path, root)  # fail before reading any image
    present = {row[0] for row in conn.execute("SELECT key FROM items")}
    summary = ImportSummary()
    rows: list[tuple[Pair, tuple[int, int] | None]] = []
    for pair in read_pairs(pairs_file):
        path = resolve_image(root, pair.image)
        if path is None:
            raise DataError(
                pairs_file,
                None,
                "image",
                f"{pair.image!r} (id {pair.id!r}) is not an image file inside {root}",
            )
        if pair.id in present:
            rows.append((pair, None))
            continue
        suffix = Path(pair.image).suffix.lower()
        if suffix not in MEDIA_TYPES:
            kind = "TIFF" if suffix in (".tif", ".tiff") else f"{suffix or 'suffix-less'} files"
            raise DataError(
                pairs_file,
                None,
                "image",
                f"{pair.image!r} (id {pair.id!r}): browsers cannot show {kind}, so it could not "
                f"be annotated; convert it to PNG or JPEG (accepted: {' '.join(MEDIA_TYPES)})",
            )
        try:
            size: tuple[int, int] | None = image_size(path)
        except Exception as error:  # Pillow raises many kinds for unreadable files
            raise DataError(
                pairs_file, None, "image", f"cannot read {pair.image!r} ({error})"
            ) from None
        rows.append((pair, size))
    with write(conn):
        _record_images_root(conn, db_path, root)
        for pair, size in rows:
            if (
                size is None
                or conn.execute("SELECT 1 FROM items WHERE key = ?", (pair.id,)).fetchone()
            ):
                summary.existing += 1
                continue
            width, height = size
            needed = 2 if _chosen(pair.id, seed, double) else 1
            conn.execute(
                "INSERT INTO items(key, image, caption, width, height, source, direction, "
                "alignment, alignment_reason, needed, created) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    pair.id,
                    pair.image,
                    pair.caption,
                    width,
                    height,
                    pair.source,
                    pair.direction,
                    pair.alignment,
                    pair.alignment_reason,
                    needed,
                    now(),
                ),
            )
            summary.added += 1
            summary.double += needed == 2
    return summary


def set_images_root(
    conn: sqlite3.Connection, db_path: str | Path, images: str | Path | None, default: Path
) -> Path:
    """Record the images folder (relative to the database's folder) on first use; later calls
    must name the same folder, so every item's image path keeps its meaning."""
    wanted = _images_folder(images, default)
    with write(conn):
        _record_images_root(conn, db_path, wanted)
    return wanted


def _images_folder(images: str | Path | None, default: Path) -> Path:
    wanted = Path(images or default).resolve()
    if not wanted.is_dir():
        raise ConfigError(f"images folder {wanted} not found")
    return wanted


def _check_images_root(conn: sqlite3.Connection, db_path: str | Path, wanted: Path) -> None:
    """ConfigError when the project has another images folder already."""
    if get_meta(conn, "images_root") is not None and images_root(conn, db_path) != wanted:
        raise ConfigError(
            f"this project's images are in {images_root(conn, db_path)}, not {wanted}"
        )


def _record_images_root(conn: sqlite3.Connection, db_path: str | Path, wanted: Path) -> None:
    """Inside a write transaction: check the folder again (another process may have recorded
    one meanwhile) and record it when none is."""
    _check_images_root(conn, db_path, wanted)
    if get_meta(conn, "images_root") is None:
        base = Path(db_path).resolve().parent
        set_meta(conn, "images_root", os.path.relpath(wanted, base))


def _chosen(key: str, seed: int, fraction: float) -> bool:
    value = int.from_bytes(hashlib.sha256(f"{seed}:{key}".encode()).digest()[:8], "big")
    return value < fraction * 2**64


# --- handing out work --------------------------------------------------------------------


def next_item(conn: sqlite3.Connection, user: User) -> int | None:
    """The item this user should work on next (claimed for them), or None when none is left.

    An item they hold already comes first. Annotators and reviewers get items in import order;
    checkers get a random reviewed item (the spot check is a random sample).
    """
    stage, version_stage = user.stage, VERSION_STAGE[user.role]
    cutoff = now() - LEASE_SECONDS
    with write(conn):
        held = conn.execute(
            "SELECT a.item_id FROM assignments a JOIN items i ON i.id = a.item_id "
            "WHERE a.user_id = ? AND a.stage = ? AND i.stage = ? AND a.claimed > ? "
            "AND NOT EXISTS (SELECT 1 FROM versions v WHERE v.item_id = i.id "
            "AND v.author_id = a.user_id AND v.stage = ?) ORDER BY a.claimed LIMIT 1",
            (user.id, version_stage, stage, cutoff, version_stage),
        ).fetchone()
        if held is not None:
            item_id = held[0]
        else:
            free = (
                "(SELECT count(*) FROM assignments a WHERE a.item_id = i.id AND a.stage = :vs "
                "AND a.user_id != :me AND a.claimed > :cutoff)"
            )
            if user.role == "annotator":
                query = (
                    "SELECT i.id FROM items i WHERE i.stage = 'annotate' AND NOT EXISTS "
                    "(SELECT 1 FROM versions v WHERE v.item_id = i.id AND v.author_id = :me) "
                    f"AND {free} + (SELECT count(*) FROM versions v WHERE v.item_id = i.id "
                    "AND v.stage = 'annotate') < i.needed ORDER BY i.id LIMIT 1"
                )
            else:
                order = "random()" if user.role == "checker" else "i.id"
                query = f"SELECT i.id FROM items i WHERE i.stage = :stage AND {free} = 0 ORDER BY {order} LIMIT 1"
            row = conn.execute(
                query, {"vs": version_stage, "me": user.id, "cutoff": cutoff, "stage": stage}
            ).fetchone()
            if row is None:
                return None
            item_id = row[0]
        conn.execute(
            "INSERT OR REPLACE INTO assignments(item_id, stage, user_id, claimed) VALUES (?,?,?,?)",
            (item_id, version_stage, user.id, now()),
        )
    return item_id


# --- reading ------------------------------------------------------------------------------


def item_row(conn: sqlite3.Connection, item_id: int) -> sqlite3.Row | None:
    if not 0 < item_id < 2**63:  # ids come from URLs; SQLite integers are 64-bit
        return None
    return conn.execute("SELECT * FROM items WHERE id = ?", (item_id,)).fetchone()


def visible_item(conn: sqlite3.Connection, item_id: int, user: User) -> sqlite3.Row:
    """The item's row when ``user`` may see it (the item and its image alike): it waits in
    their stage and, for an annotator of a double item, they have not annotated it already
    (the second annotation must not be shaped by a second look); :class:`Forbidden` otherwise.
    """
    item = item_row(conn, item_id)
    if item is None or item["stage"] != user.stage:
        raise Forbidden(f"item {item_id} is not waiting for a {user.role}")
    if user.role == "annotator" and _authored(conn, item_id, user.id, "annotate"):
        raise Forbidden(f"you have annotated item {item_id} already")
    return item


def view_item(conn: sqlite3.Connection, item_id: int, user: User) -> ItemView:
    """The item as ``user`` may see it; :class:`Forbidden` outside their stage.

    Annotators see the image and the sentence only (never another annotator's work);
    reviewers and checkers also see the current annotation and the item's history.
    """
    item = visible_item(conn, item_id, user)
    view = ItemView(
        id=item["id"],
        key=item["key"],
        caption=item["caption"],
        width=item["width"],
        height=item["height"],
        stage=item["stage"],
        base_version=item["head"],
        annotation=None,
        source=item["source"],
    )
    if user.role != "annotator":
        head = conn.execute("SELECT payload FROM versions WHERE id = ?", (item["head"],)).fetchone()
        view.annotation = payload.to_builtins(payload.decode(head[0])) if head else None
        view.history = history(conn, item_id)
        view.alignment, view.alignment_reason = item["alignment"], item["alignment_reason"]
    return view


def history(conn: sqlite3.Connection, item_id: int) -> list[dict[str, Any]]:
    """Every version of an item, oldest first: who, when, what."""
    rows = conn.execute(
        "SELECT v.id, v.stage, v.action, v.created, v.base_version, v.payload, u.name, u.role "
        "FROM versions v JOIN users u ON u.id = v.author_id WHERE v.item_id = ? ORDER BY v.id",
        (item_id,),
    ).fetchall()
    return [
        {
            "version": r["id"],
            "stage": r["stage"],
            "action": r["action"],
            "author": r["name"],
            "role": r["role"],
            "time": iso(r["created"]),
            "base_version": r["base_version"],
            "annotation": payload.to_builtins(payload.decode(r["payload"])),
        }
        for r in rows
    ]


def iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _authored(conn: sqlite3.Connection, item_id: int, user_id: int, stage: str) -> bool:
    return (
        conn.execute(
            "SELECT 1 FROM versions WHERE item_id = ? AND author_id = ? AND stage = ?",
            (item_id, user_id, stage),
        ).fetchone()
        is not None
    )


# --- saving -------------------------------------------------------------------------------


def save(
    conn: sqlite3.Connection,
    item_id: int,
    user: User,
    action: str,
    submitted: Any,
    base_version: int | None,
) -> Saved:
    """Store a new version (one transaction) or raise Conflict / Forbidden / PayloadError."""
    if action not in ACTIONS[user.role]:
        raise payload.PayloadError("action", f"a {user.role} can {' or '.join(ACTIONS[user.role])}")
    with write(conn):
        item = item_row(conn, item_id)
        if item is None:
            raise Forbidden(f"item {item_id} is not waiting for a {user.role}")
        if item["stage"] != user.stage:  # before any conflict: those would tell about the item
            raise _out_of_stage(conn, item, user, base_version)
        if user.role == "annotator":
            action, base = _annotator_slot(conn, item, user)
        else:
            _require_head(conn, item, base_version)
            base = item["head"]
        annotation = _annotation(conn, item, action, submitted)
        cursor = conn.execute(
            "INSERT INTO versions(item_id, stage, action, author_id, created, payload, base_version) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                item_id,
                VERSION_STAGE[user.role],
                action,
                user.id,
                now(),
                payload.encode(annotation),
                base,
            ),
        )
        version = cursor.lastrowid
        delay = float(os.environ.get(FAULT_DELAY_ENV) or 0)
        if delay:
            time.sleep(delay)
        stage = _stage_after(conn, item, user)
        head = item["head"] if action == "annotate-second" else version
        conn.execute("UPDATE items SET head = ?, stage = ? WHERE id = ?", (head, stage, item_id))
        conn.execute(
            "DELETE FROM assignments WHERE item_id = ? AND user_id = ?", (item_id, user.id)
        )
    return Saved(version=version, stage=stage, action=action)  # type: ignore[arg-type]


_ALREADY = "You have annotated this item already; your new annotation was not saved."


def _out_of_stage(
    conn: sqlite3.Connection, item: sqlite3.Row, user: User, base_version: int | None
) -> Exception:
    """The refusal of a save on an item outside the user's stage.

    :class:`Forbidden`, without details, unless the user's own earlier annotation or a save of
    their own stage on the very version they opened explains it: then a :class:`Conflict` that
    tells only that (never who else annotated, never what happened in other stages).
    """
    if user.role == "annotator":
        if _authored(conn, item["id"], user.id, "annotate"):
            return Conflict(_ALREADY)
        return Forbidden(
            f"item {item['id']} is not waiting for an annotator (it has all the annotations it "
            "needs); your annotation was not saved"
        )
    superseding = None
    if base_version is not None:
        superseding = conn.execute(
            "SELECT id FROM versions WHERE item_id = ? AND base_version = ? AND stage = ? "
            "ORDER BY id LIMIT 1",
            (item["id"], base_version, VERSION_STAGE[user.role]),
        ).fetchone()
    if superseding is None:
        return Forbidden(f"item {item['id']} is not waiting for a {user.role}")
    saved = _version_info(conn, superseding[0])
    return Conflict(
        f"{_describe(saved)} after you opened it (you opened version {base_version}). "
        "Your change was not saved.",
        saved,
    )


def _annotator_slot(conn: sqlite3.Connection, item: sqlite3.Row, user: User) -> tuple[str, None]:
    """Primary or second independent annotation (the item is in the annotate stage)."""
    if _authored(conn, item["id"], user.id, "annotate"):
        raise Conflict(_ALREADY)
    done = conn.execute(
        "SELECT count(*) FROM versions WHERE item_id = ? AND stage = 'annotate'", (item["id"],)
    ).fetchone()[0]
    return ("annotate" if done == 0 else "annotate-second"), None


def _require_head(conn: sqlite3.Connection, item: sqlite3.Row, base_version: int | None) -> None:
    """Conflict when the item (in the user's stage) is no longer at the version they opened."""
    if item["head"] != base_version:
        latest = _latest(conn, item["id"])
        raise Conflict(
            f"{_describe(latest)} after you opened it (you opened version {base_version}). "
            "Your change was not saved; reload the item to see theirs.",
            latest,
        )


def _annotation(
    conn: sqlite3.Connection, item: sqlite3.Row, action: str, submitted: Any
) -> payload.Annotation:
    if action in ("accept", "pass"):
        head = conn.execute("SELECT payload FROM versions WHERE id = ?", (item["head"],)).fetchone()
        accepted = payload.decode(head[0])
        if submitted is not None and not isinstance(submitted, dict):
            raise payload.PayloadError("annotation", "expected an object (or nothing)")
        submitted = submitted or {}
        _require_unchanged(submitted, accepted, item, action)
        accepted.note = str(submitted.get("note", "")).strip()[: payload.MAX_NOTE]
        return accepted
    return payload.parse_annotation(submitted, item["width"], item["height"])


def _require_unchanged(
    submitted: dict[str, Any], head: payload.Annotation, item: sqlite3.Row, action: str
) -> None:
    """An accept or pass keeps the head as it is; if it carries an annotation (the page sends
    what its form holds) that is not the head, the person changed something they would lose:
    refuse, so nothing is dropped silently. Only the note may differ."""
    fields = {key: value for key, value in submitted.items() if key != "note"}
    if not fields:
        return
    try:
        given = payload.parse_annotation({**fields, "note": ""}, item["width"], item["height"])
    except payload.PayloadError:
        given = None
    if given is None or (given.verdict, given.explanation, given.category, given.boxes) != (
        head.verdict,
        head.explanation,
        head.category,
        head.boxes,
    ):
        raise payload.PayloadError(
            "annotation",
            f"to {action} is to keep version {item['head']} as it is, but the annotation sent "
            "differs from it; save it as a correction instead, or reload to drop the change",
        )


def _stage_after(conn: sqlite3.Connection, item: sqlite3.Row, user: User) -> str:
    if user.role != "annotator":
        return NEXT_STAGE[user.role]
    done = conn.execute(
        "SELECT count(*) FROM versions WHERE item_id = ? AND stage = 'annotate'", (item["id"],)
    ).fetchone()[0]
    return "review" if done >= item["needed"] else "annotate"


def _latest(conn: sqlite3.Connection, item_id: int) -> dict[str, Any] | None:
    row = conn.execute("SELECT max(id) FROM versions WHERE item_id = ?", (item_id,)).fetchone()
    return _version_info(conn, row[0]) if row[0] is not None else None


def _version_info(conn: sqlite3.Connection, version_id: int) -> dict[str, Any] | None:
    """Who saved a version, how and when (what a conflict message tells)."""
    row = conn.execute(
        "SELECT v.id, v.action, v.created, u.name, u.role FROM versions v "
        "JOIN users u ON u.id = v.author_id WHERE v.id = ?",
        (version_id,),
    ).fetchone()
    if row is None:
        return None
    return {
        "version": row["id"],
        "action": row["action"],
        "author": row["name"],
        "role": row["role"],
        "time": iso(row["created"]),
    }


_VERBS = {
    "annotate": "annotated",
    "annotate-second": "annotated",
    "accept": "accepted",
    "correct": "corrected",
    "pass": "passed",
}


def _describe(latest: dict[str, Any] | None) -> str:
    if latest is None:
        return "This item changed"
    return (
        f"{latest['author']} ({latest['role']}) {_VERBS[latest['action']]} this item at "
        f"{latest['time']} (version {latest['version']})"
    )


# --- consistency --------------------------------------------------------------------------


def check_consistency(conn: sqlite3.Connection) -> list[str]:
    """Problems in the database (empty when sound): SQLite's own checks, then every item's
    head, stage and version chain against its versions."""
    problems = [r[0] for r in conn.execute("PRAGMA integrity_check") if r[0] != "ok"]
    problems += [f"foreign key: {tuple(r)}" for r in conn.execute("PRAGMA foreign_key_check")]
    versions: dict[int, list[sqlite3.Row]] = {}
    for row in conn.execute("SELECT id, item_id, action, base_version FROM versions ORDER BY id"):
        versions.setdefault(row["item_id"], []).append(row)
    for item in conn.execute("SELECT id, head, stage, needed FROM items"):
        chain = [v for v in versions.get(item["id"], []) if v["action"] != "annotate-second"]
        expected_head = chain[-1]["id"] if chain else None
        if item["head"] != expected_head:
            problems.append(
                f"item {item['id']}: head {item['head']}, latest version {expected_head}"
            )
        for previous, version in zip([None, *chain], chain, strict=False):
            base = previous["id"] if previous is not None else None
            if version["base_version"] != base:
                problems.append(
                    f"item {item['id']}: version {version['id']} based on {version['base_version']}, expected {base}"
                )
        expected = _expected_stage(versions.get(item["id"], []), item["needed"])
        if item["stage"] != expected:
            problems.append(f"item {item['id']}: stage {item['stage']}, expected {expected}")
    return problems


def _expected_stage(versions: list[sqlite3.Row], needed: int) -> str:
    if not versions:
        return "annotate"
    last = versions[-1]["action"]
    if last in ("annotate", "annotate-second"):
        done = sum(v["action"] in ("annotate", "annotate-second") for v in versions)
        return "review" if done >= needed else "annotate"
    reviews = [v for v in versions if v["action"] in ("accept", "correct", "pass")]
    return "reviewed" if len(reviews) == 1 else "checked"
