"""Writing the finished annotations as a GAVEL data file (docs/data-format.md).

Only items that passed review are exported (``reviewed`` and ``checked``), with their latest
version; pairs the annotators marked unusable are left out. The file is written to a temporary
name, checked with gavel's own loader (the one ``gavel data validate`` uses), and only then
renamed into place, so an export that would not load is never left behind. A file that would
hold no records is not written at all (an empty file passes for a finished export but gives no
data, and an empty test split silently evaluates nothing); the summary says which, and an older
file of that name, left by an earlier export, is removed so it cannot be mixed with this one.

All rows are read in one read transaction, so the counts and the records describe the same
moment even while people keep saving.

Splits are by image: every sentence of one image lands in the same split, so no test image was
seen in training. An image is in the test split when the seeded SHA-256 of its path, read as a
fraction of 2**256, is below ``test_fraction``: its split depends on nothing but its own path,
the seed and the fraction, never on the other images, so an image never changes split between
two exports as the project grows (the test share is ``test_fraction`` on average, not exactly).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

import msgspec

from gavel.annotate import payload
from gavel.annotate.db import images_root, read
from gavel.benchmarks.gavel.data import validate_file
from gavel.errors import DataError
from gavel.io.files import plain_mode

CLEAN_EXPLANATION = "The caption matches the image."


@dataclass
class ExportSummary:
    samples: int
    hallucinated: int
    unusable: int
    pending: int
    splits: dict[str, int]
    image_prefix: str
    images_root: Path
    files: list[Path]
    #: What was not written, and why (an empty file; an older file removed): shown as warnings.
    warnings: list[str]


def image_split(image: str, test_fraction: float, seed: int) -> str:
    """``"test"`` or ``"train"`` for one image, from its own seeded hash alone."""
    value = int.from_bytes(hashlib.sha256(f"{seed}:{image}".encode()).digest(), "big")
    return "test" if value < test_fraction * 2**256 else "train"


def split_images(images: list[str], test_fraction: float, seed: int) -> dict[str, str]:
    """``{image: "train" | "test"}`` by :func:`image_split`."""
    return {image: image_split(image, test_fraction, seed) for image in set(images)}


def export(
    conn: sqlite3.Connection,
    db_path: str | Path,
    out: str | Path,
    *,
    split_by_image: bool = False,
    test_fraction: float = 0.2,
    seed: int = 0,
) -> ExportSummary:
    out = Path(out)
    with read(conn):
        root = images_root(conn, db_path)
        rows = conn.execute(
            "SELECT i.key, i.image, i.caption, i.width, i.height, i.source, v.payload "
            "FROM items i JOIN versions v ON v.id = i.head "
            "WHERE i.stage IN ('reviewed', 'checked') ORDER BY i.id"
        ).fetchall()
        pending = conn.execute(
            "SELECT count(*) FROM items WHERE stage NOT IN ('reviewed', 'checked')"
        ).fetchone()[0]
    prefix = _image_prefix(root, out.resolve().parent)
    records, unusable = [], 0
    for row in rows:
        annotation = payload.decode(row["payload"])
        if annotation.verdict == payload.UNUSABLE:
            unusable += 1
            continue
        records.append(_record(row, annotation, prefix))
    splits: dict[str, int] = {}
    if split_by_image:
        assignment = split_images([r["image"] for r in records], test_fraction, seed)
        for record in records:
            record["split"] = assignment[record["image"]]
            splits[record["split"]] = splits.get(record["split"], 0) + 1
    outputs = [(out, records, "reviewed samples")]
    if split_by_image:
        for split in ("train", "test"):
            path = out.with_name(f"{out.stem}.{split}{out.suffix}")
            outputs.append((path, [r for r in records if r["split"] == split], f"{split} samples"))
    files: list[Path] = []
    warnings: list[str] = []
    for path, chosen, what in outputs:
        if chosen:
            _write_checked(path, chosen, out.parent)
            files.append(path)
            continue
        warning = f"no {what}: {path} not written"
        if path.is_file():
            path.unlink()
            warning += " (the file of an earlier export was removed)"
        warnings.append(warning)
    return ExportSummary(
        samples=len(records),
        hallucinated=sum(r["hallucinated"] for r in records),
        unusable=unusable,
        pending=pending,
        splits=splits,
        image_prefix=prefix,
        images_root=root,
        files=files,
        warnings=warnings,
    )


def _image_prefix(root: Path, out_dir: Path) -> str:
    """How image paths must start to be relative to the export file's folder; "" when the
    images are not inside that folder (then give ``--image-root`` to gavel commands)."""
    relative = os.path.relpath(root, out_dir)
    if relative == ".":
        return ""
    if relative.startswith(".."):
        return ""
    return Path(relative).as_posix() + "/"


def _record(row: sqlite3.Row, annotation: payload.Annotation, prefix: str) -> dict:
    hallucinated = annotation.verdict == payload.HALLUCINATED
    record = {
        "id": row["key"],
        "image": prefix + row["image"],
        "caption": row["caption"],
        "hallucinated": hallucinated,
        "category": annotation.category if hallucinated else None,
        "explanation": annotation.explanation or ("" if hallucinated else CLEAN_EXPLANATION),
        "boxes": annotation.boxes if hallucinated else [],
        "width": row["width"],
        "height": row["height"],
    }
    if row["source"]:
        record["source"] = row["source"]
    return record


def _write_checked(path: Path, records: list[dict], image_root: Path) -> None:
    """Write a temporary file beside ``path``, have the loader accept it, then rename it over
    ``path``: the target is either the old file or a complete, valid new one."""
    encoder = msgspec.json.Encoder()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    temp = Path(name)
    try:
        plain_mode(fd)
        with os.fdopen(fd, "wb") as handle:
            for record in records:
                handle.write(encoder.encode(record) + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        if records:
            _, errors = validate_file(temp, image_root)
            if errors:
                first = errors[0]
                raise DataError(
                    path, first.line, first.field, f"export failed validation: {first.message}"
                )
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
